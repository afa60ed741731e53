import { Inject, Injectable } from '@nestjs/common';
import { Db, withConflicts } from '@gatehouse/db';
import { displayName, escapeHtml } from '@gatehouse/delivery';
import { invalidRequest } from '@gatehouse/errors';
import { findClient, normalizePhone } from '@gatehouse/identity-data';
import type { Access } from '../common/access.js';
import { tenantForNewRecord } from '../common/tenants.js';
import { Mailer } from '../tickets/mailer.js';
import { TicketsService } from '../tickets/tickets.service.js';
import { EMAIL_VERIFICATION_TTL_SEC } from '../tickets/dto/ticket.dto.js';
import type { InviteUserDto } from './dto/invitation.dto.js';

// Unique in the instance, across its tenants: the answer says neither where nor whose, so that a tenant-bound caller
// learns no more than that the value cannot be used (docs/security.md).
const CONFLICTS = {
  ux_users_email: 'This user_email is not available',
  ux_users_name: 'This user_name is not available',
  ux_users_phone: 'This user_phone is not available',
};

/** `+976 9911-2233` -> `+97699112233`; a number that is not E.164 afterwards is 400. */
function phone(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const e164 = normalizePhone(value);
  if (!/^\+[1-9]\d{4,14}$/.test(e164)) {
    throw invalidRequest('user_phone must be an E.164 phone number (+ and 5 to 15 digits)', [
      { field: 'user_phone', message: 'not an E.164 number' },
    ]);
  }
  return e164;
}

/**
 * The invitation e-mail (English; the page it links to speaks English and Mongolian). The application's name is a
 * tenant's text: one line without control characters, cut, and escaped in the HTML part.
 */
function invitationText(o: { app: string; url: string; expiresAt: string }) {
  const app = displayName(o.app) || 'Gatehouse';
  return {
    subject: `You are invited to ${app}`,
    text:
      `You are invited to ${app}.\n\n` +
      `Open this link to choose your password (it works once, until ${o.expiresAt}):\n${o.url}\n\n` +
      `If you did not expect this invitation, ignore this e-mail.`,
    html:
      `<p>You are invited to ${escapeHtml(app)}.</p>` +
      `<p>Open this link to choose your password (it works once, until ${escapeHtml(o.expiresAt)}):<br>` +
      `<a href="${escapeHtml(o.url)}">${escapeHtml(o.url)}</a></p>` +
      `<p>If you did not expect this invitation, ignore this e-mail.</p>`,
  };
}

/**
 * User Registration (POST /users/invite): an invited user (no password, `is_invited`, `invited_at`) and a
 * password-change ticket, and the invitation e-mail queued in the delivery outbox, in one transaction (the mail is
 * sent after the answer, retried while the mail server is down).
 */
@Injectable()
export class InvitationsService {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(TicketsService) private readonly tickets: TicketsService,
    @Inject(Mailer) private readonly mailer: Mailer,
  ) {}

  /** The invited user's id. */
  async invite(access: Access, input: InviteUserDto): Promise<string> {
    const email = input.user_email.trim();
    const userName = input.user_name?.trim() || null;
    const phoneNumber = phone(input.user_phone);
    return this.db.transaction(async (tx) => {
      const tenantId = await tenantForNewRecord(tx, access, input.tenant_id);
      const client = input.client_id ? await findClient(tx, access, input.client_id) : undefined;
      const [row] = await withConflicts(CONFLICTS, () =>
        tx.rows<{ id: string }>(
          `INSERT INTO users (instance_id, tenant_id, user_email, user_name, phone_number, nickname, name,
                                phone_verified, user_metadata, app_metadata, is_invited, invited_at, created_by,
                                updated_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, true, now(), $11, $11) RETURNING id`,
          [
            access.instanceId,
            tenantId,
            email,
            userName,
            phoneNumber,
            input.user_nickname ?? null,
            input.user_fullName ?? null,
            input.user_phone_verified ?? false,
            JSON.stringify(input.user_metadata ?? {}),
            JSON.stringify(input.app_metadata ?? []),
            access.actor,
          ],
        ),
      );
      const ticket = await this.tickets.issue(tx, access, {
        userId: row.id,
        userEmail: email,
        kind: 'password_change',
        ttlSec: input.ttl_sec ?? EMAIL_VERIFICATION_TTL_SEC,
        clientId: client?.id ?? null,
        resultUrl: input.result_url ?? null,
        // the e-mailed link proves the address: setting the password through it verifies the e-mail
        markEmailVerified: true,
      });
      const mail = invitationText({
        app: client?.client_name ?? 'Gatehouse',
        url: ticket.url,
        expiresAt: ticket.expiresAt,
      });
      await this.mailer.delivery.email(email, mail.subject, mail.text, {
        tx,
        kind: 'invitation',
        html: mail.html,
      });
      return row.id;
    });
  }
}
