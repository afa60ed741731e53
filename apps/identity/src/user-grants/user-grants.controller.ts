import { Controller, Delete, Get, HttpCode, Inject, Param, Query, type Type } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess, type Access } from '../common/access.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { USERS_READ, USERS_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { shapeUserGrant, UserGrantDoc, userGrantSpecs } from './user-grant.record.js';
import { UserGrantsService } from './user-grants.service.js';

/** User Grants: GET /users/:user_id/grants, DELETE /users/:user_id/grants/:grant_id. */
export function userGrantsController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, userGrantSpecs[v], shapeUserGrant());

  @ApiTags(`Users (${v})`)
  @Controller(routeOf(v, 'users'))
  class UserGrantsController {
    constructor(@Inject(UserGrantsService) private readonly grants: UserGrantsService) {}

    @Get(':user_id/grants')
    @Scopes(USERS_READ)
    @ApiOperation({
      summary: 'Get user grants',
      description:
        'The consents and logins the user gave clients, as the token server keeps them (one grant per login or ' +
        'consent of a client; expired ones are left out): `id` (the grant id), `client_id`, `client_name`, ' +
        '`scopes` (OpenID scopes), `resources` (scopes granted per API), `refresh_tokens` (live ones) and ' +
        '`has_refresh_token`, `created_at`, `expires_at`. `q`, `sort` (default newest first), paging as any list. ' +
        "Same shape under /api/v1 and /api/v2 (the envelope follows the version). A user out of the caller's reach: 404.",
    })
    @ApiUuidParams('user_id')
    @ApiListQuery(v)
    @ApiCollection(UserGrantDoc, v)
    @ApiErrorResponses(400, 404)
    async list(@CallerAccess() a: Access, @UuidParam('user_id') userId: string, @Query() query: QueryParams) {
      return P.page(await this.grants.list(a, userId, P.list(query)));
    }

    @Delete(':user_id/grants/:grant_id')
    @Scopes(USERS_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Revoke a user grant',
      description:
        'Deletes the grant and, in the same transaction, every token-server artifact of it: refresh tokens, ' +
        'authorization codes, stored (opaque) access tokens. At once: a refresh with one of its refresh tokens ' +
        'fails with invalid_grant, and /tokeninfo and /token/introspection answer inactive for its access tokens, ' +
        "JWTs included (the token server checks that a token's grant exists; opaque access tokens kept in Redis " +
        'are refused the same way). A resource server that verifies JWTs only by signature keeps accepting them ' +
        "until they expire (their lifetime is the resource's token_lifetime). The identity change feed drops the " +
        "bearer caches of the user's tokens in every identity and tree replica. The client asks for consent again " +
        "at its next authorization. An unknown grant, another user's, or a user out of reach: 404. 204.",
    })
    @ApiUuidParams('user_id')
    @ApiParam({ name: 'grant_id', schema: { type: 'string' }, required: true })
    @ApiNoContent('Revoked')
    @ApiErrorResponses(400, 404)
    async revoke(
      @CallerAccess() a: Access,
      @UuidParam('user_id') userId: string,
      @Param('grant_id') grantId: string,
    ): Promise<void> {
      await this.grants.revoke(a, userId, grantId);
    }
  }
  return versioned(UserGrantsController, 'UserGrants', v);
}
