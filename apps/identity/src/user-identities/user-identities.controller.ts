import { Controller, Delete, Get, HttpCode, Inject, Query, type Type } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess, type Access } from '../common/access.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { USERS_READ, USERS_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { shapeUserIdentity, UserIdentityDoc, userIdentitySpecs } from './user-identity.record.js';
import { UserIdentitiesService } from './user-identities.service.js';

/** User Identities: `/users/:user_id/identities`, one controller class per presentation. */
export function userIdentitiesController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, userIdentitySpecs[v], shapeUserIdentity(v));

  @ApiTags(`User Identities (${v})`)
  @Controller(routeOf(v, 'users/:user_id/identities'))
  class UserIdentitiesController {
    constructor(@Inject(UserIdentitiesService) private readonly svc: UserIdentitiesService) {}

    @Get()
    @Scopes(USERS_READ)
    @ApiOperation({
      summary: "Get a user's identities",
      description:
        'The accounts at identity providers linked to the user: made by token exchange on the first sign-in of an ' +
        'account (its issuer and `sub`), or linked to an existing user whose e-mail the provider verified. ' +
        '`identity_data` is what the provider said at the last sign-in. `refresh_token`, `access_token` and ' +
        "`access_token_secret` are always null: the provider's tokens are verified, never kept.",
    })
    @ApiUuidParams('user_id')
    @ApiListQuery(v)
    @ApiCollection(UserIdentityDoc, v)
    @ApiErrorResponses(404)
    async list(@CallerAccess() a: Access, @UuidParam('user_id') uid: string, @Query() query: QueryParams) {
      return P.page(await this.svc.list(a, uid, P.list(query)));
    }

    @Delete(':identity_id')
    @Scopes(USERS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: "Delete (unlink) a user's identity",
      description:
        "The user stays, with its tokens; the account is no longer the user's: its next token exchange links it " +
        'again by a verified e-mail, or creates a new user.',
    })
    @ApiUuidParams('user_id', 'identity_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(
      @CallerAccess() a: Access,
      @UuidParam('user_id') uid: string,
      @UuidParam('identity_id') id: string,
    ): Promise<void> {
      await this.svc.remove(a, uid, id);
    }
  }
  return versioned(UserIdentitiesController, 'UserIdentities', v);
}
