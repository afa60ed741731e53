import { Controller, Delete, Get, HttpCode, Inject, Patch, Post, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess, type Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { routeOf, type ApiVersion } from '../common/version.js';
import {
  CreateIdentityProviderDto,
  IdentityProviderDoc,
  UpdateIdentityProviderDto,
} from './dto/identity-provider.dto.js';
import { identityProviderSpecs, shapeIdentityProvider } from './identity-provider.record.js';
import { IdentityProvidersService } from './identity-providers.service.js';

export const TENANTS_READ = 'tenants:read';
export const TENANTS_WRITE = 'tenants:write';

const REACH =
  'A caller that is not global reaches only its own tenant: another tenant answers 404, as an unknown one does.';

/** Tenant Identity Providers: `/tenants/:tenant_id/identity-providers`, one controller class per presentation. */
export function identityProvidersController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, identityProviderSpecs[v], shapeIdentityProvider(v));

  @ApiTags(`Tenant Identity Providers (${v})`)
  @Controller(routeOf(v, 'tenants/:tenant_id/identity-providers'))
  class IdentityProvidersController {
    constructor(@Inject(IdentityProvidersService) private readonly svc: IdentityProvidersService) {}

    @Get()
    @Scopes(TENANTS_READ)
    @ApiOperation({
      summary: "Get a tenant's identity providers",
      description: `Never with the client secret. ${REACH}`,
    })
    @ApiUuidParams('tenant_id')
    @ApiListQuery(v)
    @ApiCollection(IdentityProviderDoc, v)
    @ApiErrorResponses(404)
    async list(@CallerAccess() a: Access, @UuidParam('tenant_id') tid: string, @Query() query: QueryParams) {
      return P.page(await this.svc.list(a, tid, P.list(query)));
    }

    @Post()
    @Scopes(TENANTS_WRITE)
    @ApiOperation({
      summary: 'Create an identity provider of a tenant',
      description:
        'An OpenID Connect provider whose ID tokens (and JWT access tokens) token exchange accepts for users of ' +
        'the tenant: `issuer` (the `iss` of its tokens; trailing slashes are dropped; unique in the tenant: 409), ' +
        '`client_id` (our client there: the `aud` its tokens must carry), `client_secret` (optional; sealed at ' +
        'rest, answered by this operation only, never by reads, lists or updates), `jwks_uri` (optional: else the ' +
        '`jwks_uri` of `<issuer>/.well-known/openid-configuration`), `enabled` (default true). URLs must be https ' +
        `(http only on a loopback host). ${REACH}`,
    })
    @ApiUuidParams('tenant_id')
    @ApiReadQuery()
    @ApiBody({ type: CreateIdentityProviderDto })
    @ApiRecord(IdentityProviderDoc, 201)
    @ApiErrorResponses(400, 404, 409)
    async create(
      @CallerAccess() a: Access,
      @UuidParam('tenant_id') tid: string,
      @ValidBody(CreateIdentityProviderDto) body: CreateIdentityProviderDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.create(a, tid, body), read);
    }

    @Get(':provider_id')
    @Scopes(TENANTS_READ)
    @ApiOperation({
      summary: 'Get an identity provider of a tenant',
      description: `Never with the client secret. ${REACH}`,
    })
    @ApiUuidParams('tenant_id', 'provider_id')
    @ApiReadQuery()
    @ApiRecord(IdentityProviderDoc, 200)
    @ApiErrorResponses(400, 404)
    async get(
      @CallerAccess() a: Access,
      @UuidParam('tenant_id') tid: string,
      @UuidParam('provider_id') id: string,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.get(a, tid, id), read);
    }

    @Patch(':provider_id')
    @Scopes(TENANTS_WRITE)
    @ApiOperation({
      summary: 'Modify an identity provider of a tenant',
      description:
        'Fields not given keep their value. `client_secret` replaces the secret (null removes it) and is not ' +
        'answered: the caller knows what it sent. `jwks_uri: null` goes back to discovery. `enabled: false` stops ' +
        `token exchange through it at once. Another provider of the tenant with the issuer: 409. ${REACH}`,
    })
    @ApiUuidParams('tenant_id', 'provider_id')
    @ApiReadQuery()
    @ApiBody({ type: UpdateIdentityProviderDto })
    @ApiRecord(IdentityProviderDoc, 200)
    @ApiErrorResponses(400, 404, 409)
    async update(
      @CallerAccess() a: Access,
      @UuidParam('tenant_id') tid: string,
      @UuidParam('provider_id') id: string,
      @ValidBody(UpdateIdentityProviderDto) body: UpdateIdentityProviderDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.update(a, tid, id, body), read);
    }

    @Delete(':provider_id')
    @Scopes(TENANTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Delete an identity provider of a tenant',
      description:
        'Its tokens are no longer exchanged. The users it created and their identities stay (an identity keeps ' +
        `its issuer and subject, and is used again if a provider of that issuer is added back). ${REACH}`,
    })
    @ApiUuidParams('tenant_id', 'provider_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(
      @CallerAccess() a: Access,
      @UuidParam('tenant_id') tid: string,
      @UuidParam('provider_id') id: string,
    ): Promise<void> {
      await this.svc.remove(a, tid, id);
    }
  }
  return versioned(IdentityProvidersController, 'TenantIdentityProviders', v);
}
