import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Patch,
  Post,
  Put,
  Query,
  type Type,
} from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess } from '../common/access.js';
import type { Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { USERS_READ, USERS_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { CreateUserDto, SetPasswordDto, UpdateUserDto } from './dto/user.dto.js';
import { UserTenantDoc, UserV1Doc, UserV2Doc } from './dto/user.docs.js';
import { shapeUser, userSpecs, userTenantSpecs } from './user.record.js';
import { UsersService } from './users.service.js';

/** Users, User Password and User Block/Unblock, one controller class per presentation. */
export function usersController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, userSpecs[v], shapeUser(v));
  const Doc = v === 'v1' ? UserV1Doc : UserV2Doc;
  const Tenants = new Presenter<Record<string, unknown>>(v, userTenantSpecs[v], (r) => ({ ...r }));

  @ApiTags(`Users (${v})`)
  @Controller(routeOf(v, 'users'))
  class UsersController {
    constructor(@Inject(UsersService) private readonly users: UsersService) {}

    @Get()
    @Scopes(USERS_READ)
    @ApiOperation({ summary: 'Get users', description: 'Password hashes never appear.' })
    @ApiListQuery(v)
    @ApiCollection(Doc, v)
    async list(@CallerAccess() a: Access, @Query() query: QueryParams) {
      return P.page(await this.users.list(a, P.list(query)));
    }

    @Post()
    @Scopes(USERS_WRITE)
    @ApiOperation({
      summary: 'Create a user',
      description:
        "At least one of user_email, user_name, user_phone; a password is checked against the instance's " +
        'password_validators (400 naming the rules it fails). A taken e-mail, login name or phone: 409.',
    })
    @ApiReadQuery()
    @ApiBody({ type: CreateUserDto })
    @ApiRecord(Doc, 201)
    @ApiErrorResponses(400, 409)
    async create(
      @CallerAccess() a: Access,
      @ValidBody(CreateUserDto) body: CreateUserDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.users.create(a, body, read), read);
    }

    @Get(':user_id')
    @Scopes(USERS_READ)
    @ApiOperation({ summary: 'Get a user' })
    @ApiUuidParams('user_id')
    @ApiReadQuery()
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async get(@CallerAccess() a: Access, @UuidParam('user_id') id: string, @Query() query: QueryParams) {
      const read = P.read(query);
      return P.one(await this.users.get(a, id, read), read);
    }

    @Patch(':user_id')
    @Scopes(USERS_WRITE)
    @ApiOperation({
      summary: 'Modify a user',
      description: 'Partial update. A changed e-mail or phone is unverified unless said. A taken one: 409.',
    })
    @ApiUuidParams('user_id')
    @ApiReadQuery()
    @ApiBody({ type: UpdateUserDto })
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404, 409)
    async update(
      @CallerAccess() a: Access,
      @UuidParam('user_id') id: string,
      @ValidBody(UpdateUserDto) body: UpdateUserDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.users.update(a, id, body, read), read);
    }

    @Delete(':user_id')
    @Scopes(USERS_WRITE)
    @HttpCode(204)
    @ApiOperation({ summary: 'Delete a user', description: 'Its grants and tokens are revoked.' })
    @ApiUuidParams('user_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(@CallerAccess() a: Access, @UuidParam('user_id') id: string): Promise<void> {
      await this.users.remove(a, id);
    }

    @Get(':user_id/tenants')
    @Scopes(USERS_READ)
    @ApiOperation({
      summary: "Get a user's tenants",
      description:
        "The user's `tenants` child: its own tenant (is_member) and each tenant it administers (is_admin, see " +
        "Tenant Admins), one entry per tenant. `id` is the tenant's id (membership is a column of the user, not a " +
        "row of its own); the audit fields are the user's for its own tenant and the admin link's otherwise.",
    })
    @ApiUuidParams('user_id')
    @ApiListQuery(v)
    @ApiCollection(UserTenantDoc, v)
    @ApiErrorResponses(404)
    async tenants(@CallerAccess() a: Access, @UuidParam('user_id') id: string, @Query() query: QueryParams) {
      return Tenants.page(await this.users.listTenants(a, id, Tenants.list(query)));
    }

    @Put(':user_id/password')
    @Scopes(USERS_WRITE)
    @ApiOperation({
      summary: 'Set a user password',
      description:
        "Checked against the instance's password_validators: 400 naming every rule it fails (details list them). " +
        'Clears a login lock. 200 with the user.',
    })
    @ApiUuidParams('user_id')
    @ApiReadQuery()
    @ApiBody({ type: SetPasswordDto })
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async setPassword(
      @CallerAccess() a: Access,
      @UuidParam('user_id') id: string,
      @ValidBody(SetPasswordDto) body: SetPasswordDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.users.setPassword(a, id, body.password, read), read);
    }

    @Post(':user_id/block')
    @Scopes(USERS_WRITE)
    @HttpCode(200)
    @ApiOperation({
      summary: 'Block a user',
      description:
        'The user gets no token and its grants and refresh tokens are revoked at once. Idempotent.',
    })
    @ApiUuidParams('user_id')
    @ApiReadQuery()
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async block(@CallerAccess() a: Access, @UuidParam('user_id') id: string, @Query() query: QueryParams) {
      const read = P.read(query);
      return P.one(await this.users.setBlocked(a, id, true, read), read);
    }

    @Post(':user_id/unblock')
    @Scopes(USERS_WRITE)
    @HttpCode(200)
    @ApiOperation({ summary: 'Unblock a user', description: 'The user may log in again. Idempotent.' })
    @ApiUuidParams('user_id')
    @ApiReadQuery()
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async unblock(@CallerAccess() a: Access, @UuidParam('user_id') id: string, @Query() query: QueryParams) {
      const read = P.read(query);
      return P.one(await this.users.setBlocked(a, id, false, read), read);
    }
  }
  return versioned(UsersController, 'Users', v);
}
