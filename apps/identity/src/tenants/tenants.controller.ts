import { Controller, Delete, Get, HttpCode, Inject, Patch, Post, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess, type Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { TENANTS_READ, TENANTS_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { UserIdsDto } from '../memberships/dto/memberships.dto.js';
import { UserV1Doc, UserV2Doc } from '../users/dto/user.docs.js';
import { shapeUser, userSpecs } from '../users/user.record.js';
import { CreateTenantDto, TenantV1Doc, TenantV2Doc, UpdateTenantDto } from './dto/tenant.dto.js';
import { shapeTenant, tenantSpecs } from './tenant.record.js';
import { TenantsService } from './tenants.service.js';

const REACH =
  'A caller that is not global (a client with is_global false) reaches only its own tenant: any other is 404.';

/** Tenants, one controller class per presentation. */
export function tenantsController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, tenantSpecs[v], shapeTenant(v));
  const Doc = v === 'v1' ? TenantV1Doc : TenantV2Doc;

  @ApiTags(`Tenants (${v})`)
  @Controller(routeOf(v, 'tenants'))
  class TenantsController {
    constructor(@Inject(TenantsService) private readonly svc: TenantsService) {}

    @Get()
    @Scopes(TENANTS_READ)
    @ApiOperation({
      summary: 'Get tenants',
      description:
        `The tenants of the caller's instance. ${REACH} ${v === 'v1' ? 'aggregations' : 'aggregates'} counts ` +
        "the tenant's users, clients, resources, roles, groups and admins; `admins` (User records) is linked, " +
        'or embedded with expand=all.',
    })
    @ApiListQuery(v)
    @ApiCollection(Doc, v)
    async list(@CallerAccess() a: Access, @Query() query: QueryParams) {
      return P.page(await this.svc.list(a, P.list(query)));
    }

    @Post()
    @Scopes(TENANTS_WRITE)
    @ApiOperation({
      summary: 'Create a tenant',
      description:
        'tenant_name is unique in the instance, in any case (409). A caller that is not global cannot create ' +
        'tenants (403).',
    })
    @ApiReadQuery()
    @ApiBody({ type: CreateTenantDto })
    @ApiRecord(Doc, 201)
    @ApiErrorResponses(400, 403, 409)
    async create(
      @CallerAccess() a: Access,
      @ValidBody(CreateTenantDto) body: CreateTenantDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.create(a, body, read), read);
    }

    @Get(':tenant_id')
    @Scopes(TENANTS_READ)
    @ApiOperation({ summary: 'Get a tenant', description: REACH })
    @ApiUuidParams('tenant_id')
    @ApiReadQuery()
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async get(@CallerAccess() a: Access, @UuidParam('tenant_id') id: string, @Query() query: QueryParams) {
      const read = P.read(query);
      return P.one(await this.svc.get(a, id, read), read);
    }

    @Patch(':tenant_id')
    @Scopes(TENANTS_WRITE)
    @ApiOperation({
      summary: 'Modify a tenant',
      description: `Fields not given keep their value. A taken tenant_name: 409. ${REACH} It may modify its own.`,
    })
    @ApiUuidParams('tenant_id')
    @ApiReadQuery()
    @ApiBody({ type: UpdateTenantDto })
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404, 409)
    async update(
      @CallerAccess() a: Access,
      @UuidParam('tenant_id') id: string,
      @ValidBody(UpdateTenantDto) body: UpdateTenantDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.update(a, id, body, read), read);
    }

    @Delete(':tenant_id')
    @Scopes(TENANTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Delete a tenant',
      description:
        'Refused with 409 while the tenant still holds users, clients, resources, roles or groups (the message ' +
        'counts them): delete or move them first, nothing is deleted in cascade. Its admin links (and, where ' +
        'present, its identity providers) go with it. A caller that is not global cannot delete tenants (403).',
    })
    @ApiUuidParams('tenant_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 403, 404, 409)
    async remove(@CallerAccess() a: Access, @UuidParam('tenant_id') id: string): Promise<void> {
      await this.svc.remove(a, id);
    }
  }
  return versioned(TenantsController, 'Tenants', v);
}

/** Tenant Admins: `GET`, `POST`, `DELETE /tenants/:tenant_id/admins`, one controller class per presentation. */
export function tenantAdminsController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, userSpecs[v], shapeUser(v));
  const Doc = v === 'v1' ? UserV1Doc : UserV2Doc;

  @ApiTags(`Tenant Admins (${v})`)
  @Controller(routeOf(v, 'tenants/:tenant_id/admins'))
  class TenantAdminsController {
    constructor(@Inject(TenantsService) private readonly svc: TenantsService) {}

    @Get()
    @Scopes(TENANTS_READ)
    @ApiOperation({
      summary: "Get tenant's admins",
      description:
        'The users who administer the tenant, as User records (q, sort and fields as Get users). Being an admin ' +
        'is a record of the tenant (for applications to read, e.g. in the user record `tenants`); it grants no ' +
        `scope by itself. ${REACH}`,
    })
    @ApiUuidParams('tenant_id')
    @ApiListQuery(v)
    @ApiCollection(Doc, v)
    @ApiErrorResponses(404)
    async list(@CallerAccess() a: Access, @UuidParam('tenant_id') id: string, @Query() query: QueryParams) {
      return P.page(await this.svc.listAdmins(a, id, P.list(query)));
    }

    @Post()
    @Scopes(TENANTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: "Add tenant's admins",
      description:
        'Idempotent. An admin is a user of this tenant or a global user (no tenant); a user of another tenant: ' +
        '409. A user the caller cannot reach: 404. Nothing is written on any error. An admin holds the ' +
        "tenant's admin role (created with the first admin), whose user tokens act in this tenant only.",
    })
    @ApiUuidParams('tenant_id')
    @ApiBody({ type: UserIdsDto })
    @ApiNoContent('Added')
    @ApiErrorResponses(400, 404, 409)
    async add(
      @CallerAccess() a: Access,
      @UuidParam('tenant_id') id: string,
      @ValidBody(UserIdsDto) body: UserIdsDto,
    ): Promise<void> {
      await this.svc.addAdmins(a, id, body.users);
    }

    @Delete()
    @Scopes(TENANTS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: "Remove tenant's admins",
      description:
        'Idempotent (a user who is not an admin is no error); a user the caller cannot reach: 404. The ' +
        "tenant's admin role is taken from those removed.",
    })
    @ApiUuidParams('tenant_id')
    @ApiBody({ type: UserIdsDto })
    @ApiNoContent('Removed')
    @ApiErrorResponses(400, 404)
    async remove(
      @CallerAccess() a: Access,
      @UuidParam('tenant_id') id: string,
      @ValidBody(UserIdsDto) body: UserIdsDto,
    ): Promise<void> {
      await this.svc.removeAdmins(a, id, body.users);
    }
  }
  return versioned(TenantAdminsController, 'TenantAdmins', v);
}
