import { Controller, Inject, Post, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses } from '@gatehouse/http';
import { CallerAccess, type Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { USERS_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { UserV1Doc, UserV2Doc } from '../users/dto/user.docs.js';
import { shapeUser, userSpecs } from '../users/user.record.js';
import { UsersService } from '../users/users.service.js';
import { InviteUserDto } from './dto/invitation.dto.js';
import { InvitationsService } from './invitations.service.js';

/** User Registration: POST /users/invite (its own controller beside the Users one; no route of it collides). */
export function invitationsController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, userSpecs[v], shapeUser(v));
  const Doc = v === 'v1' ? UserV1Doc : UserV2Doc;

  @ApiTags(`Users (${v})`)
  @Controller(routeOf(v, 'users'))
  class InvitationsController {
    constructor(
      @Inject(InvitationsService) private readonly invitations: InvitationsService,
      @Inject(UsersService) private readonly users: UsersService,
    ) {}

    @Post('invite')
    @Scopes(USERS_WRITE)
    @ApiOperation({
      summary: 'Invite a user',
      description:
        'Creates a user without a password (`is_invited: true`, `invited_at`) and e-mails it an invitation: a ' +
        'password-change ticket (the token server page at its public ISSUER URL, single use, `ttl_sec` default ' +
        '432000 = 5 days, at most 30 days). Setting the password through it also marks user_email verified (the ' +
        'e-mailed link proves the address); `is_invited` stays true as history. `client_id` names the application ' +
        'in the e-mail, `result_url` is where the page goes after success. Body: the fields of Create a user ' +
        'without password and user_email_verified, user_email required. A taken e-mail, login name or phone: 409. ' +
        'The e-mail is queued in the delivery outbox with the user and sent after the answer (retried while the ' +
        'mail server is down). Answers 201 with the User.',
    })
    @ApiReadQuery()
    @ApiBody({ type: InviteUserDto })
    @ApiRecord(Doc, 201)
    @ApiErrorResponses(400, 403, 404, 409)
    async invite(
      @CallerAccess() a: Access,
      @ValidBody(InviteUserDto) body: InviteUserDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      const id = await this.invitations.invite(a, body);
      return P.one(await this.users.get(a, id, read), read);
    }
  }
  return versioned(InvitationsController, 'Invitations', v);
}
