import {
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Inject,
  Patch,
  Post,
  Query,
  type Type,
} from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess } from '../common/access.js';
import type { Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { RESOURCES_READ, RESOURCES_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { ResourceV1Doc, ResourceV2Doc } from './dto/resource-record.docs.js';
import { resourceBodies, resourcePresenters, type ResourceBodies } from './resource.presenter.js';
import { ResourcesService } from './resources.service.js';

/** Resources, one controller class per presentation over the one ResourcesService. */
export function resourcesController<V extends ApiVersion>(v: V): Type<unknown> {
  const P = resourcePresenters[v];
  const Doc = v === 'v1' ? ResourceV1Doc : ResourceV2Doc;
  const { create: CreateDto, update: UpdateDto, input } = resourceBodies[v];

  @ApiTags(`Resources (${v})`)
  @Controller(routeOf(v, 'resources'))
  class ResourcesController {
    constructor(@Inject(ResourcesService) private readonly resources: ResourcesService) {}

    @Get()
    @Scopes(RESOURCES_READ)
    @ApiOperation({
      summary: 'Get resources',
      description: 'Signing secrets never appear here. A client that is not global sees only its tenant.',
    })
    @ApiHeader({
      name: 'tenant_id',
      required: false,
      schema: { type: 'string', format: 'uuid' },
      description:
        "Honoured in multi-tenant mode (MULTI_TENANT, default true): only that tenant's resources (a malformed id: " +
        '400); otherwise ignored',
    })
    @ApiListQuery(v)
    @ApiCollection(Doc, v)
    async list(
      @CallerAccess() access: Access,
      @Query() query: QueryParams,
      @Headers('tenant_id') tenant: string | undefined,
    ) {
      return P.page(await this.resources.list(access, P.list(query), tenant));
    }

    @Post()
    @Scopes(RESOURCES_WRITE)
    @ApiOperation({
      summary: 'Create a resource',
      description:
        'signing_algorithm ES256 (default; resources made before ES256 became the default, and the system resources keep RS256), ' +
        'RS256 or HS256 (with signing_secret, generated when not given). ' +
        'An identifier_url already used in the instance: 409. A caller that is not global creates in its tenant.',
    })
    @ApiReadQuery()
    @ApiBody({ type: CreateDto })
    @ApiRecord(Doc, 201)
    @ApiErrorResponses(400, 409)
    async create(
      @CallerAccess() access: Access,
      @ValidBody(CreateDto) body: ResourceBodies[V]['create'],
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.resources.create(access, input(body), read), read);
    }

    @Get(':resource_id')
    @Scopes(RESOURCES_READ)
    @ApiOperation({
      summary: 'Get a resource',
      description:
        'The HS256 signing_secret only for a caller holding resources:read_secrets (only the default client has it ' +
        'by default); the create answer, and a modify answer that sets a new secret, show it once.',
    })
    @ApiUuidParams('resource_id')
    @ApiReadQuery()
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async get(
      @CallerAccess() access: Access,
      @UuidParam('resource_id') id: string,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.resources.get(access, id, read), read);
    }

    @Patch(':resource_id')
    @Scopes(RESOURCES_WRITE)
    @ApiOperation({
      summary: 'Modify a resource',
      description:
        'Partial update; the next token for the resource follows the new identifier, lifetime and signing ' +
        "algorithm. A system resource's name, identifier, signing and rbac settings are protected (403).",
    })
    @ApiUuidParams('resource_id')
    @ApiReadQuery()
    @ApiBody({ type: UpdateDto })
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404, 409)
    async update(
      @CallerAccess() access: Access,
      @UuidParam('resource_id') id: string,
      @ValidBody(UpdateDto) body: ResourceBodies[V]['update'],
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.resources.update(access, id, input(body), read), read);
    }

    @Delete(':resource_id')
    @Scopes(RESOURCES_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Delete a resource',
      description: 'With its scopes, authorizations and permissions. A system resource: 403.',
    })
    @ApiUuidParams('resource_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(@CallerAccess() access: Access, @UuidParam('resource_id') id: string): Promise<void> {
      await this.resources.remove(access, id);
    }
  }
  return versioned(ResourcesController, 'Resources', v);
}
