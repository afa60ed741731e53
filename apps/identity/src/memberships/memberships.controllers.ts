import {
  applyDecorators,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Post,
  Query,
  type Type,
} from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { invalidRequest } from '@gatehouse/errors';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess, type Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { auditAttributes, defineVersionedRecord } from '../common/records.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { PermissionsV1Dto, PermissionsV2Dto } from '../client-access/dto/client-access.dto.js';
import { BODY_DTOS, EffectivePermissionDoc, linkDoc } from './dto/memberships.dto.js';
import { LINK_KINDS, linkSpecs, type LinkKind, type LinkRecord } from './link-kinds.js';
import {
  MembershipsService,
  type EffectivePermission,
  type PermissionKind,
  type PermissionRecord,
} from './memberships.service.js';

const same = <T>(r: T) => ({ ...r }) as Record<string, unknown>;

/**
 * A link controller (Role Members, User Roles, Group Members, User Groups, Group Roles, Nested Groups; Role Groups
 * lists only).
 */
export function linkController(v: ApiVersion, k: LinkKind): Type<unknown> {
  const P = new Presenter<LinkRecord>(v, linkSpecs(k)[v], same);
  const Body = BODY_DTOS[k.bodyField];
  const Doc = linkDoc(`${k.tag.replace(/\s/g, '')}${v.toUpperCase()}Doc`, [k.ownerColumn, k.targetColumn]);
  const [owner, target] = k.nouns;
  const nestNote = k.nesting
    ? ' A group nested in itself or in one of its own descendants (a cycle): 409, nothing is written.'
    : '';

  const listOperation = applyDecorators(
    Get(),
    Scopes(k.read),
    ApiOperation({
      summary: `Get ${k.tag.toLowerCase()}`,
      description:
        `The ${target}s linked to the ${owner}.` +
        (k.readOnly
          ? ` Read-only here: the link is added and removed at /${LINK_KINDS.find((o) => o.table === k.table && o !== k)?.path}.`
          : ''),
    }),
    ApiUuidParams(k.ownerParam),
    ApiListQuery(v),
    ApiCollection(Doc, v),
    ApiErrorResponses(404),
  );

  if (k.readOnly) {
    @ApiTags(`${k.tag} (${v})`)
    @Controller(routeOf(v, k.path))
    class LinkListController {
      constructor(@Inject(MembershipsService) private readonly svc: MembershipsService) {}

      @listOperation
      async list(
        @CallerAccess() a: Access,
        @UuidParam(k.ownerParam) id: string,
        @Query() query: QueryParams,
      ) {
        return P.page(await this.svc.list(a, k, id, P.list(query)));
      }
    }
    return versioned(LinkListController, k.tag.replace(/\s/g, ''), v);
  }

  @ApiTags(`${k.tag} (${v})`)
  @Controller(routeOf(v, k.path))
  class LinkController {
    constructor(@Inject(MembershipsService) private readonly svc: MembershipsService) {}

    @listOperation
    async list(@CallerAccess() a: Access, @UuidParam(k.ownerParam) id: string, @Query() query: QueryParams) {
      return P.page(await this.svc.list(a, k, id, P.list(query)));
    }

    @Post()
    @Scopes(k.write)
    @HttpCode(204)
    @ApiOperation({
      summary: `Add ${k.tag.toLowerCase()}`,
      description:
        `Idempotent. An id the caller cannot reach: 404, nothing is written. What a tenant's role or group gives ` +
        `stays in its tenant: a ${target} of another tenant is 409.${nestNote}`,
    })
    @ApiUuidParams(k.ownerParam)
    @ApiBody({ type: Body })
    @ApiNoContent('Added')
    @ApiErrorResponses(400, 404, 409)
    async add(
      @CallerAccess() a: Access,
      @UuidParam(k.ownerParam) id: string,
      @ValidBody(Body) body: Record<string, string[]>,
    ): Promise<void> {
      await this.svc.add(a, k, id, body[k.bodyField]);
    }

    @Delete()
    @Scopes(k.write)
    @HttpCode(204)
    @ApiOperation({
      summary: `Remove ${k.tag.toLowerCase()}`,
      description:
        'Idempotent (a link that does not exist is no error); an id the caller cannot reach: 404. The scopes the ' +
        'link gave are gone from the next token and from /tokeninfo of tokens already issued.',
    })
    @ApiUuidParams(k.ownerParam)
    @ApiBody({ type: Body })
    @ApiNoContent('Removed')
    @ApiErrorResponses(400, 404)
    async remove(
      @CallerAccess() a: Access,
      @UuidParam(k.ownerParam) id: string,
      @ValidBody(Body) body: Record<string, string[]>,
    ): Promise<void> {
      await this.svc.remove(a, k, id, body[k.bodyField]);
    }
  }
  return versioned(LinkController, k.tag.replace(/\s/g, ''), v);
}

const effectiveSpecs = defineVersionedRecord({
  name: 'effective_permission',
  attributes: [
    { name: 'resource_id', column: 'e.resource_id', type: 'uuid' },
    { name: 'scope_id', column: 'e.scope_id', type: 'uuid' },
    { name: 'scope_name', column: 's.scope_name', type: 'string' },
    { name: 'identifier_url', column: 'r.identifier_url', type: 'string' },
    { name: 'source', column: 'e.source', type: 'string' },
    { name: 'role_id', column: 'e.role_id', type: 'uuid' },
    { name: 'group_id', column: 'e.group_id', type: 'uuid' },
  ],
  children: { v1: [], v2: [] },
});

const permissionSpecs = (k: PermissionKind) =>
  defineVersionedRecord({
    name: k.table,
    attributes: [
      { name: 'id', column: 'l.id', type: 'uuid' },
      { name: k.ownerColumn, column: `l.${k.ownerColumn}`, type: 'uuid' },
      { name: 'resource_id', column: 'l.resource_id', type: 'uuid' },
      { name: 'scope_id', column: 'l.scope_id', type: 'uuid' },
      ...auditAttributes('l'),
    ],
    children: { v1: [], v2: [] },
  });

/** `effective=true|false` of GET /users/:user_id/permissions (anything else: 400). */
function effectiveFlag(query: QueryParams): { effective: boolean; rest: QueryParams } {
  const { effective, ...rest } = query;
  if (effective === undefined || effective === 'false') return { effective: false, rest };
  if (effective === 'true') return { effective: true, rest };
  throw invalidRequest(`Query parameter effective: must be true or false`, [
    { field: 'effective', message: 'must be true or false' },
  ]);
}

/** Role Permissions and User Permissions. */
export function permissionController(v: ApiVersion, k: PermissionKind): Type<unknown> {
  const P = new Presenter<PermissionRecord>(v, permissionSpecs(k)[v], same);
  const E = new Presenter<EffectivePermission>(v, effectiveSpecs[v], same);
  const Body = v === 'v1' ? PermissionsV1Dto : PermissionsV2Dto;
  const Doc = linkDoc(`${k.tag.replace(/\s/g, '')}${v.toUpperCase()}Doc`, [
    k.ownerColumn,
    'resource_id',
    'scope_id',
  ]);
  const users = k.noun === 'user';
  const effectiveQuery = users
    ? applyDecorators(
        ApiExtraModels(EffectivePermissionDoc),
        ApiQuery({
          name: 'effective',
          required: false,
          schema: { type: 'boolean', default: false },
          description: 'true: the effective permissions, items of EffectivePermissionDoc',
        }),
      )
    : applyDecorators();

  @ApiTags(`${k.tag} (${v})`)
  @Controller(routeOf(v, k.path))
  class PermissionController {
    constructor(@Inject(MembershipsService) private readonly svc: MembershipsService) {}

    @Get()
    @Scopes(k.read)
    @ApiOperation({
      summary: `Get ${k.noun} permissions`,
      description: users
        ? 'The scopes granted to the user itself; with `effective=true`, every scope the user holds in effect, one ' +
          'item per source (EffectivePermissionDoc): its own (`direct`), its roles (`role`, with role_id) and the ' +
          'roles of its groups and their ancestors (`group`, with role_id and group_id).'
        : 'The scopes granted to the role.',
    })
    @ApiUuidParams(k.ownerParam)
    @ApiListQuery(v)
    @effectiveQuery
    @ApiCollection(Doc, v)
    @ApiErrorResponses(404)
    async list(@CallerAccess() a: Access, @UuidParam(k.ownerParam) id: string, @Query() query: QueryParams) {
      if (users) {
        const { effective, rest } = effectiveFlag(query);
        if (effective) return E.page(await this.svc.effective(a, id, E.list(rest)));
        return P.page(await this.svc.listPermissions(a, k, id, P.list(rest)));
      }
      return P.page(await this.svc.listPermissions(a, k, id, P.list(query)));
    }

    @Post()
    @Scopes(k.write)
    @HttpCode(204)
    @ApiOperation({
      summary: `Grant permissions to a ${k.noun}`,
      description:
        'Idempotent. An unknown resource or scope, or a scope not of the named resource: 404 (nothing is written). ' +
        'Scopes of a system resource only as the caller holds them itself (403). A role or user of a tenant ' +
        "cannot hold scopes of another tenant's resource (409).",
    })
    @ApiUuidParams(k.ownerParam)
    @ApiBody({ type: Body })
    @ApiNoContent('Granted')
    @ApiErrorResponses(400, 403, 404, 409)
    async grant(
      @CallerAccess() a: Access,
      @UuidParam(k.ownerParam) id: string,
      @ValidBody(Body) body: PermissionsV1Dto | PermissionsV2Dto,
    ): Promise<void> {
      await this.svc.grant(a, k, id, body.permissions);
    }

    @Delete()
    @Scopes(k.write)
    @HttpCode(204)
    @ApiOperation({
      summary: `Revoke permissions from a ${k.noun}`,
      description:
        'Idempotent (a scope not granted is no error). The scopes are gone from the next token and from ' +
        '/tokeninfo of tokens already issued.',
    })
    @ApiUuidParams(k.ownerParam)
    @ApiBody({ type: Body })
    @ApiNoContent('Revoked')
    @ApiErrorResponses(400, 404)
    async revoke(
      @CallerAccess() a: Access,
      @UuidParam(k.ownerParam) id: string,
      @ValidBody(Body) body: PermissionsV1Dto | PermissionsV2Dto,
    ): Promise<void> {
      await this.svc.revokePermissions(a, k, id, body.permissions);
    }
  }
  return versioned(PermissionController, k.tag.replace(/\s/g, ''), v);
}
