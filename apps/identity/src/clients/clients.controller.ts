import { Controller, Delete, Get, HttpCode, Inject, Patch, Post, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess } from '../common/access.js';
import type { Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { CLIENTS_READ, CLIENTS_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { clientBodies, clientPresenters, type ClientBodies } from './client.presenter.js';
import { ClientsService } from './clients.service.js';
import { ClientV1Doc, ClientV2Doc } from './dto/client.docs.js';
import { SecretExpiryDto } from './dto/client.dto.js';

/** Clients, one controller class per presentation over the one ClientsService. */
export function clientsController<V extends ApiVersion>(v: V): Type<unknown> {
  const P = clientPresenters[v];
  const Doc = v === 'v1' ? ClientV1Doc : ClientV2Doc;
  const { create: CreateDto, update: UpdateDto, input } = clientBodies[v];

  @ApiTags(`Clients (${v})`)
  @Controller(routeOf(v, 'clients'))
  class ClientsController {
    constructor(@Inject(ClientsService) private readonly clients: ClientsService) {}

    @Get()
    @Scopes(CLIENTS_READ)
    @ApiOperation({
      summary: 'Get clients',
      description:
        'Clients of the instance (a client that is not global sees only its tenant). Secrets never appear here.',
    })
    @ApiListQuery(v)
    @ApiCollection(Doc, v)
    async list(@CallerAccess() access: Access, @Query() query: QueryParams) {
      return P.page(await this.clients.list(access, P.list(query)));
    }

    @Post()
    @Scopes(CLIENTS_WRITE)
    @ApiOperation({
      summary: 'Create a client',
      description:
        'A confidential client gets a generated secret (shown in the answer) and, without grant_types, is allowed ' +
        'client_credentials. The secret expires at client_secret_expires_at (in the future, else 400) or ' +
        'client_secret_lifetime seconds from now; without either it never expires. A client that is not global creates only non-global clients of its own tenant (403 ' +
        'otherwise). is_global false needs a tenant_id (400). A client_name already used in the tenant: 409.',
    })
    @ApiReadQuery()
    @ApiBody({ type: CreateDto })
    @ApiRecord(Doc, 201)
    @ApiErrorResponses(400, 409)
    async create(
      @CallerAccess() access: Access,
      @ValidBody(CreateDto) body: ClientBodies[V]['create'],
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.clients.create(access, input(body), read), read);
    }

    @Get(':client_id')
    @Scopes(CLIENTS_READ)
    @ApiOperation({
      summary: 'Get a client',
      description:
        'client_secret only for a caller holding clients:read_secrets (only the default client has it by default); ' +
        'the create and rotate-secret answers show a new secret once.',
    })
    @ApiUuidParams('client_id')
    @ApiReadQuery()
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async get(
      @CallerAccess() access: Access,
      @UuidParam('client_id') id: string,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.clients.get(access, id, read), read);
    }

    @Patch(':client_id')
    @Scopes(CLIENTS_WRITE)
    @ApiOperation({
      summary: 'Modify a client',
      description:
        'Partial update. client_metadata keys given replace the stored ones (null removes a key); app_metadata is ' +
        'replaced whole. client_secret_expires_at (null: never) or client_secret_lifetime set when the current ' +
        "secret expires. Turning a client public drops its secret. The default client's is_public, is_global and " +
        'tenant_id cannot change (403). is_global false needs a tenant_id (400).',
    })
    @ApiUuidParams('client_id')
    @ApiReadQuery()
    @ApiBody({ type: UpdateDto })
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404, 409)
    async update(
      @CallerAccess() access: Access,
      @UuidParam('client_id') id: string,
      @ValidBody(UpdateDto) body: ClientBodies[V]['update'],
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.clients.update(access, id, input(body), read), read);
    }

    @Delete(':client_id')
    @Scopes(CLIENTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Delete a client',
      description:
        'Also drops its authorizations and permissions; its tokens are inactive from now on. The default client: 403.',
    })
    @ApiUuidParams('client_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(@CallerAccess() access: Access, @UuidParam('client_id') id: string): Promise<void> {
      await this.clients.remove(access, id);
    }

    @Post(':client_id/rotate-secret')
    @Scopes(CLIENTS_WRITE)
    @HttpCode(200)
    @ApiOperation({
      summary: 'Change a client secret',
      description:
        'A new secret; the token endpoint refuses the old one at once. The body is optional: the new secret ' +
        'expires at client_secret_expires_at (in the future, else 400) or client_secret_lifetime seconds from now; ' +
        'without either it never expires. A public client: 409.',
    })
    @ApiUuidParams('client_id')
    @ApiReadQuery()
    @ApiBody({ type: SecretExpiryDto, required: false })
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404, 409)
    async rotateSecret(
      @CallerAccess() access: Access,
      @UuidParam('client_id') id: string,
      @ValidBody(SecretExpiryDto) body: SecretExpiryDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.clients.rotateSecret(access, id, body, read), read);
    }
  }
  return versioned(ClientsController, 'Clients', v);
}
