import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Patch,
  Post,
  Query,
  UseGuards,
  type Type,
} from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess, type Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { routeOf, type ApiVersion } from '../common/version.js';
import { UserIdsDto } from '../memberships/dto/memberships.dto.js';
import { UserV1Doc, UserV2Doc } from '../users/dto/user.docs.js';
import { shapeUser, userSpecs } from '../users/user.record.js';
import { CreateInstanceDto, UpdateInstanceDto } from './dto/instance.dto.js';
import { InstanceV1Doc, InstanceV2Doc } from './dto/instance.docs.js';
import { instanceSpecs, shapeInstance, type InstanceRecord } from './instance.record.js';
import { InstancesService } from './instances.service.js';
import { MultiInstanceGuard } from './multi-instance.guard.js';

export const INSTANCES_READ = 'instances:read';
export const INSTANCES_WRITE = 'instances:write';

const MODE =
  ' Multi-instance mode only: with MULTI_INSTANCE=false this operation answers 501 `not_implemented` (after the ' +
  'token and its scope are checked: 401/403 first).';
const REACH =
  ' A global client of the default instance reaches every instance; any other caller only its own (another ' +
  "instance's id: 404).";

/** Instances and Instance Admins (document 2), one controller class per presentation. */
export function instancesController(v: ApiVersion): Type<unknown> {
  const P = new Presenter<InstanceRecord>(v, instanceSpecs[v], shapeInstance(v));
  const U = new Presenter(v, userSpecs[v], shapeUser(v));
  const Doc = v === 'v1' ? InstanceV1Doc : InstanceV2Doc;
  const UserDoc = v === 'v1' ? UserV1Doc : UserV2Doc;

  @ApiTags(`Instances (${v})`)
  @Controller(routeOf(v, 'instances'))
  @UseGuards(MultiInstanceGuard)
  @ApiResponse({
    status: 501,
    description: 'not_implemented: multi-instance mode is off (MULTI_INSTANCE=false)',
  })
  class InstancesController {
    constructor(@Inject(InstancesService) private readonly svc: InstancesService) {}

    @Get()
    @Scopes(INSTANCES_READ)
    @ApiOperation({
      summary: 'Get instances',
      description:
        'A global client of the default instance lists every instance; any other caller gets its own instance ' +
        `alone (a list of one). \`${v === 'v1' ? 'aggregations' : 'aggregates'}\` counts the instance's clients, ` +
        'tenants, resources (system ones included), users and roles.' +
        MODE,
    })
    @ApiListQuery(v)
    @ApiCollection(Doc, v)
    async list(@CallerAccess() a: Access, @Query() query: QueryParams) {
      return P.page(await this.svc.list(a, P.list(query)));
    }

    @Post()
    @Scopes(INSTANCES_WRITE)
    @ApiOperation({
      summary: 'Create an instance',
      description:
        'Only a global client of the default instance creates instances (any other caller: 403). The new ' +
        'instance gets, in one transaction, its own system resources (urn:gatehouse:management, ' +
        'urn:gatehouse:tree, every scope) and its own default client (cannot be deleted, client_credentials, ' +
        'granted every system scope); the answer carries that client under `default_client` (`client_id`, ' +
        '`client_secret`) this once: no read shows the secret again (rotate it with POST /clients/:id/rotate-secret ' +
        "using the new client's own token). instance_metadata lists not given get the defaults (the 8-character " +
        'password rule, `en` and `mn`, no identity provider). A taken instance_name (any case): 409. The instance has no ' +
        'users and no admins yet: create users with its default client, then add them as admins.' +
        MODE,
    })
    @ApiReadQuery()
    @ApiBody({ type: CreateInstanceDto })
    @ApiRecord(Doc, 201)
    @ApiErrorResponses(400, 403, 409)
    async create(
      @CallerAccess() a: Access,
      @ValidBody(CreateInstanceDto) body: CreateInstanceDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      const rec = await this.svc.create(a, body, read);
      // The credentials are part of the answer whatever `fields` asks for: they are never shown again.
      return { ...P.one(rec, read), default_client: rec.default_client };
    }

    @Get(':instance_id')
    @Scopes(INSTANCES_READ)
    @ApiOperation({ summary: 'Get an instance', description: REACH.trim() + MODE })
    @ApiUuidParams('instance_id')
    @ApiReadQuery()
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async get(@CallerAccess() a: Access, @UuidParam('instance_id') id: string, @Query() query: QueryParams) {
      const read = P.read(query);
      return P.one(await this.svc.get(a, id, read), read);
    }

    @Patch(':instance_id')
    @Scopes(INSTANCES_WRITE)
    @ApiOperation({
      summary: 'Modify an instance',
      description:
        'Fields not given keep their value; each instance_metadata list given (identity_providers, ' +
        'supported_locales, password_validators) replaces that list, the others stay. A password rule must ' +
        'compile and must not backtrack catastrophically (400 naming the field, nothing stored); the rules are ' +
        'enforced from the next password set on (existing passwords are not re-checked). A client bound to a ' +
        'tenant: 403. A taken instance_name: 409.' +
        REACH +
        MODE,
    })
    @ApiUuidParams('instance_id')
    @ApiReadQuery()
    @ApiBody({ type: UpdateInstanceDto })
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 403, 404, 409)
    async update(
      @CallerAccess() a: Access,
      @UuidParam('instance_id') id: string,
      @ValidBody(UpdateInstanceDto) body: UpdateInstanceDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.update(a, id, body, read), read);
    }

    @Get(':instance_id/admins')
    @Scopes(INSTANCES_READ)
    @ApiOperation({
      summary: "Get instance's admins",
      description:
        'The users who administer the instance, as User records (as Get a user answers them), with q, sort and ' +
        'paging over the User attributes. A client bound to a tenant sees only the admins of its tenant. An admin ' +
        "holds the instance's admin role (every scope of its management and tree APIs), given and taken with " +
        'the admin link; its user tokens carry what it holds of what their client was granted.' +
        REACH +
        MODE,
    })
    @ApiUuidParams('instance_id')
    @ApiListQuery(v)
    @ApiCollection(UserDoc, v)
    @ApiErrorResponses(404)
    async listAdmins(
      @CallerAccess() a: Access,
      @UuidParam('instance_id') id: string,
      @Query() query: QueryParams,
    ) {
      return U.page(await this.svc.listAdmins(a, id, U.list(query)));
    }

    @Post(':instance_id/admins')
    @Scopes(INSTANCES_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: "Add instance's admins",
      description:
        'Idempotent (204). Every id must be a user of that instance: any other (unknown, or of another ' +
        'instance) is 409 and nothing is written. A client bound to a tenant: 403.' +
        REACH +
        MODE,
    })
    @ApiUuidParams('instance_id')
    @ApiBody({ type: UserIdsDto })
    @ApiNoContent('Added')
    @ApiErrorResponses(400, 403, 404, 409)
    async addAdmins(
      @CallerAccess() a: Access,
      @UuidParam('instance_id') id: string,
      @ValidBody(UserIdsDto) body: UserIdsDto,
    ): Promise<void> {
      await this.svc.addAdmins(a, id, body.users);
    }

    @Delete(':instance_id/admins')
    @Scopes(INSTANCES_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: "Remove instance's admins",
      description:
        'Idempotent (204; a user who is no admin is no error). An id that is no user of the instance: 409, ' +
        'nothing is written. A client bound to a tenant: 403.' +
        REACH +
        MODE,
    })
    @ApiUuidParams('instance_id')
    @ApiBody({ type: UserIdsDto })
    @ApiNoContent('Removed')
    @ApiErrorResponses(400, 403, 404, 409)
    async removeAdmins(
      @CallerAccess() a: Access,
      @UuidParam('instance_id') id: string,
      @ValidBody(UserIdsDto) body: UserIdsDto,
    ): Promise<void> {
      await this.svc.removeAdmins(a, id, body.users);
    }
  }
  return versioned(InstancesController, 'Instances', v);
}
