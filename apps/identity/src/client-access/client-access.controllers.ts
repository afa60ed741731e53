import { Controller, Delete, Get, HttpCode, Inject, Post, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess } from '../common/access.js';
import type { Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent } from '../common/openapi.js';
import { CLIENTS_READ, CLIENTS_WRITE, RESOURCES_READ, RESOURCES_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import {
  clientPermissionPresenters,
  clientResourcePresenters,
  resourceClientPresenters,
} from './client-access.presenter.js';
import { ClientAccessService, type PermissionEntry } from './client-access.service.js';
import {
  ClientPermissionV1Doc,
  ClientPermissionV2Doc,
  ClientResourceV1Doc,
  ClientResourceV2Doc,
} from './dto/client-access.docs.js';
import { ClientIdsDto, PermissionsV1Dto, PermissionsV2Dto, ResourceIdsDto } from './dto/client-access.dto.js';
import { ResourceClientV1Doc, ResourceClientV2Doc } from './dto/resource-client.docs.js';

/** Client Resources: `/clients/:client_id/resources`. */
export function clientResourcesController(v: ApiVersion): Type<unknown> {
  const P = clientResourcePresenters[v];

  @ApiTags(`Client Resources (${v})`)
  @Controller(routeOf(v, 'clients/:client_id/resources'))
  class ClientResourcesController {
    constructor(@Inject(ClientAccessService) private readonly access: ClientAccessService) {}

    @Get()
    @Scopes(CLIENTS_READ)
    @ApiOperation({
      summary: "Get client's resources",
      description: 'The resources authorized to the client.',
    })
    @ApiUuidParams('client_id')
    @ApiListQuery(v)
    @ApiCollection(v === 'v1' ? ClientResourceV1Doc : ClientResourceV2Doc, v)
    @ApiErrorResponses(404)
    async list(@CallerAccess() a: Access, @UuidParam('client_id') id: string, @Query() query: QueryParams) {
      return P.page(await this.access.listClientResources(a, id, P.list(query)));
    }

    @Post()
    @Scopes(CLIENTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Authorize resource to client',
      description:
        'Idempotent. An unknown resource: 404 (nothing is written); a resource of another tenant than the client: 409.',
    })
    @ApiUuidParams('client_id')
    @ApiBody({ type: ResourceIdsDto })
    @ApiNoContent('Authorized')
    @ApiErrorResponses(400, 404, 409)
    async authorize(
      @CallerAccess() a: Access,
      @UuidParam('client_id') id: string,
      @ValidBody(ResourceIdsDto) body: ResourceIdsDto,
    ): Promise<void> {
      await this.access.authorize(a, [id], body.resources, 'client');
    }

    @Delete()
    @Scopes(CLIENTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Revoke resources from client',
      description:
        "Idempotent; the client's permissions on those resources go too and its next tokens for them are refused. " +
        'System resources cannot be revoked from the default client (403).',
    })
    @ApiUuidParams('client_id')
    @ApiBody({ type: ResourceIdsDto })
    @ApiNoContent('Revoked')
    @ApiErrorResponses(400, 404)
    async revoke(
      @CallerAccess() a: Access,
      @UuidParam('client_id') id: string,
      @ValidBody(ResourceIdsDto) body: ResourceIdsDto,
    ): Promise<void> {
      await this.access.revoke(a, [id], body.resources, 'client');
    }
  }
  return versioned(ClientResourcesController, 'ClientResources', v);
}

/** Client Permissions: `/clients/:client_id/permissions`. */
export function clientPermissionsController(v: ApiVersion): Type<unknown> {
  const P = clientPermissionPresenters[v];
  const Body = v === 'v1' ? PermissionsV1Dto : PermissionsV2Dto;

  @ApiTags(`Client Permissions (${v})`)
  @Controller(routeOf(v, 'clients/:client_id/permissions'))
  class ClientPermissionsController {
    constructor(@Inject(ClientAccessService) private readonly access: ClientAccessService) {}

    @Get()
    @Scopes(CLIENTS_READ)
    @ApiOperation({ summary: 'Get client permissions' })
    @ApiUuidParams('client_id')
    @ApiListQuery(v)
    @ApiCollection(v === 'v1' ? ClientPermissionV1Doc : ClientPermissionV2Doc, v)
    @ApiErrorResponses(404)
    async list(@CallerAccess() a: Access, @UuidParam('client_id') id: string, @Query() query: QueryParams) {
      return P.page(await this.access.listClientPermissions(a, id, P.list(query)));
    }

    @Post()
    @Scopes(CLIENTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Grant permissions to a client',
      description:
        'Idempotent; the next token of the client carries the scopes. An unknown resource, or a scope that is not ' +
        "one of its resource's: 404. A resource not authorized to the client: 409. A scope of a system resource " +
        '(management or tree API), or any scope granted to the calling client itself, must already be held by the ' +
        'calling client: 403 naming the scopes otherwise. Nothing is written on an error.' +
        (v === 'v2' ? ' Under v2 resource_id may be left out: each scope names its resource.' : ''),
    })
    @ApiUuidParams('client_id')
    @ApiBody({ type: Body })
    @ApiNoContent('Granted')
    @ApiErrorResponses(400, 403, 404, 409)
    async grant(
      @CallerAccess() a: Access,
      @UuidParam('client_id') id: string,
      @ValidBody(Body) body: { permissions: PermissionEntry[] },
    ): Promise<void> {
      await this.access.grant(a, id, body.permissions);
    }

    @Delete()
    @Scopes(CLIENTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Revoke permissions from a client',
      description:
        "Idempotent; the client's next token lacks the scopes. Permissions on system resources cannot be revoked " +
        'from the default client (403).',
    })
    @ApiUuidParams('client_id')
    @ApiBody({ type: Body })
    @ApiNoContent('Revoked')
    @ApiErrorResponses(400, 404)
    async revoke(
      @CallerAccess() a: Access,
      @UuidParam('client_id') id: string,
      @ValidBody(Body) body: { permissions: PermissionEntry[] },
    ): Promise<void> {
      await this.access.revokePermissions(a, id, body.permissions);
    }
  }
  return versioned(ClientPermissionsController, 'ClientPermissions', v);
}

/** Resource Clients: `/resources/:resource_id/clients`. */
export function resourceClientsController(v: ApiVersion): Type<unknown> {
  const P = resourceClientPresenters[v];

  @ApiTags(`Resource Clients (${v})`)
  @Controller(routeOf(v, 'resources/:resource_id/clients'))
  class ResourceClientsController {
    constructor(@Inject(ClientAccessService) private readonly access: ClientAccessService) {}

    @Get()
    @Scopes(RESOURCES_READ)
    @ApiOperation({
      summary: 'Get resource clients',
      description:
        'Every client the caller reaches, each with `authorized` (the resource is authorized to it).',
    })
    @ApiUuidParams('resource_id')
    @ApiListQuery(v)
    @ApiCollection(v === 'v1' ? ResourceClientV1Doc : ResourceClientV2Doc, v)
    @ApiErrorResponses(404)
    async list(@CallerAccess() a: Access, @UuidParam('resource_id') id: string, @Query() query: QueryParams) {
      return P.page(await this.access.listResourceClients(a, id, P.list(query)));
    }

    @Post()
    @Scopes(RESOURCES_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Authorize clients to the resource',
      description: 'Idempotent. An unknown client: 404; a client of another tenant than the resource: 409.',
    })
    @ApiUuidParams('resource_id')
    @ApiBody({ type: ClientIdsDto })
    @ApiNoContent('Authorized')
    @ApiErrorResponses(400, 404, 409)
    async authorize(
      @CallerAccess() a: Access,
      @UuidParam('resource_id') id: string,
      @ValidBody(ClientIdsDto) body: ClientIdsDto,
    ): Promise<void> {
      await this.access.authorize(a, body.clients, [id], 'resource');
    }

    @Delete()
    @Scopes(RESOURCES_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Revoke clients from the resource',
      description:
        "Idempotent; drops the clients' permissions on the resource. A system resource cannot be revoked from the default client (403).",
    })
    @ApiUuidParams('resource_id')
    @ApiBody({ type: ClientIdsDto })
    @ApiNoContent('Revoked')
    @ApiErrorResponses(400, 404)
    async revoke(
      @CallerAccess() a: Access,
      @UuidParam('resource_id') id: string,
      @ValidBody(ClientIdsDto) body: ClientIdsDto,
    ): Promise<void> {
      await this.access.revoke(a, body.clients, [id], 'resource');
    }
  }
  return versioned(ResourceClientsController, 'ResourceClients', v);
}
