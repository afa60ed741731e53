import { Controller, Inject, Post, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses } from '@gatehouse/http';
import { CallerAccess, type Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned } from '../common/controller.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { EmailVerificationTicketDto, PasswordChangeTicketDto, TicketDoc } from './dto/ticket.dto.js';
import { TicketsService } from './tickets.service.js';

export const TICKETS_WRITE = 'tickets:write';

const COMMON =
  'Answers 201 `{"ticket": "<url>"}`: a page of the token server at its public URL (ISSUER) that works once ' +
  'and until `ttl_sec` (at most 2592000, 30 days) has passed; a used, expired or unknown link shows an error page ' +
  '(400). Only a keyed hash of the link is stored, so the URL is shown once. `result_url` (an absolute http(s) URL) ' +
  'is where the page sends the user after success, else it shows a success page. `user_id` and `client_id` must be ' +
  "in the caller's reach (a tenant-bound caller: its tenant's users and clients), else 404. Same body and answer " +
  'under /api/v1 and /api/v2.';

/** Tickets (document 1's group): links that set a password or verify an e-mail on the token server. */
export function ticketsController(v: ApiVersion): Type<unknown> {
  @ApiTags(`Tickets (${v})`)
  @Controller(routeOf(v, 'tickets'))
  class TicketsController {
    constructor(@Inject(TicketsService) private readonly tickets: TicketsService) {}

    @Post('password-change')
    @Scopes(TICKETS_WRITE)
    @ApiOperation({
      summary: 'Create a password change ticket',
      description:
        `${COMMON} The page asks for a new password (field \`password\`), checked against the instance's ` +
        "password_validators; setting it clears a login lock, revokes the user's grants and tokens (as PUT " +
        "/users/:user_id/password) and ends the user's other open password-change tickets. " +
        '`mark_email_as_verified: true` also marks the e-mail verified. Default ttl_sec 86400 (1 day).',
    })
    @ApiBody({ type: PasswordChangeTicketDto })
    @ApiResponse({ status: 201, type: TicketDoc })
    @ApiErrorResponses(400, 404)
    async passwordChange(
      @CallerAccess() a: Access,
      @ValidBody(PasswordChangeTicketDto) body: PasswordChangeTicketDto,
    ) {
      return this.tickets.create(a, 'password_change', body);
    }

    @Post('email-verification')
    @Scopes(TICKETS_WRITE)
    @ApiOperation({
      summary: 'Create an email verification ticket',
      description:
        `${COMMON} The page asks the user to confirm with a button (a POST, so a mail scanner that fetches the ` +
        'link does not use it up), then marks user_email verified: the address the user had when the ticket was made ' +
        '(after a change of e-mail the link verifies nothing). A user without user_email: 409. Default ' +
        'ttl_sec 432000 (5 days).',
    })
    @ApiBody({ type: EmailVerificationTicketDto })
    @ApiResponse({ status: 201, type: TicketDoc })
    @ApiErrorResponses(400, 404, 409)
    async emailVerification(
      @CallerAccess() a: Access,
      @ValidBody(EmailVerificationTicketDto) body: EmailVerificationTicketDto,
    ) {
      return this.tickets.create(a, 'email_verification', body);
    }
  }
  return versioned(TicketsController, 'Tickets', v);
}
