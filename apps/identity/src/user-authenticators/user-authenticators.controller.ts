import { Controller, Delete, Get, HttpCode, Inject, Query, type Type } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { Presenter } from '@gatehouse/query';
import { CallerAccess, type Access } from '../common/access.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent } from '../common/openapi.js';
import { USERS_READ, USERS_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import {
  shapeUserAuthenticator,
  UserAuthenticatorDoc,
  userAuthenticatorSpecs,
} from './user-authenticator.record.js';
import { UserAuthenticatorsService } from './user-authenticators.service.js';

/** User Authenticators: `/users/:user_id/authenticators`, one controller class per presentation. */
export function userAuthenticatorsController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, userAuthenticatorSpecs[v], shapeUserAuthenticator(v));

  @ApiTags(`User Authenticators (${v})`)
  @Controller(routeOf(v, 'users/:user_id/authenticators'))
  class UserAuthenticatorsController {
    constructor(@Inject(UserAuthenticatorsService) private readonly svc: UserAuthenticatorsService) {}

    @Get()
    @Scopes(USERS_READ)
    @ApiOperation({
      summary: "Get a user's authenticators",
      description:
        "The user's second factors: an authenticator app (`totp`, enrolled at sign-in) and the recovery codes made " +
        'with it (`recovery_codes`), and passkeys (`webauthn`, added on the account page: `name` as its user ' +
        'named it, `created_at` when added, `last_used_at` its last sign-in). An enrolment that waits for its first ' +
        "code has `confirmed_at` null. No secret, code, hash or key is ever answered (a passkey's credential id " +
        'and public key neither). Scope `users:read`, as the user record (docs/contract.md).',
    })
    @ApiUuidParams('user_id')
    @ApiListQuery(v)
    @ApiCollection(UserAuthenticatorDoc, v)
    @ApiErrorResponses(400, 404)
    async list(@CallerAccess() a: Access, @UuidParam('user_id') uid: string, @Query() query: QueryParams) {
      return P.page(await this.svc.list(a, uid, P.list(query)));
    }

    @Delete(':authenticator_id')
    @Scopes(USERS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: "Delete a user's authenticator",
      description:
        'Removes one second factor. Removing the authenticator app also removes its recovery codes; removing a ' +
        'passkey removes that passkey only (it no longer signs in, with or without a password). The next ' +
        'sign-in then asks for no second factor, or enrols a new app where the MFA policy is `required`. ' +
        'Recorded as an `mfa.removed` event (`details.authenticator_type`).',
    })
    @ApiUuidParams('user_id', 'authenticator_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(
      @CallerAccess() a: Access,
      @UuidParam('user_id') uid: string,
      @UuidParam('authenticator_id') id: string,
    ): Promise<void> {
      await this.svc.remove(a, uid, id);
    }

    @Delete()
    @Scopes(USERS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: "Reset a user's authenticators",
      description:
        'Removes every second factor of the user, passkeys included (and its count of wrong second factors): ' +
        'what an administrator does for a person who lost the device. Idempotent (204 also when there was none). Recorded as an ' +
        '`mfa.removed` event with `details.authenticator_type: all`.',
    })
    @ApiUuidParams('user_id')
    @ApiNoContent('Reset')
    @ApiErrorResponses(400, 404)
    async reset(@CallerAccess() a: Access, @UuidParam('user_id') uid: string): Promise<void> {
      await this.svc.reset(a, uid);
    }
  }
  return versioned(UserAuthenticatorsController, 'UserAuthenticators', v);
}
