import { Inject, Injectable } from '@nestjs/common';
import { Db, type Sql } from '@gatehouse/db';
import { conflict } from '@gatehouse/errors';
import {
  findClient,
  findUser,
  issueTicket,
  SECRET_BOX,
  TICKET_KEY_PURPOSE,
  TICKET_PATHS,
  type SecretBox,
  type TicketKind,
} from '@gatehouse/identity-data';
import { SERVICE_ENV } from '@gatehouse/service';
import type { Access } from '../common/access.js';
import { EMAIL_VERIFICATION_TTL_SEC, PASSWORD_CHANGE_TTL_SEC } from './dto/ticket.dto.js';

export interface TicketInput {
  user_id: string;
  result_url?: string | null;
  ttl_sec?: number;
  client_id?: string | null;
  mark_email_as_verified?: boolean;
}

export interface IssuedTicket {
  /** The link (the token server's public URL). */
  url: string;
  expiresAt: string;
}

/** The token server's public URL: ISSUER, else what the token server itself defaults to. */
export const publicIssuer = (env: { ISSUER?: string; AUTH_PORT: number }) =>
  (env.ISSUER ?? `http://localhost:${env.AUTH_PORT}`).replace(/\/+$/, '');

/**
 * Tickets: single-use links to a page of the token server that sets a user's password or verifies its e-mail.
 * Only a keyed hash of the link's token is stored (HMAC with a key derived from SECRET_ENCRYPTION_KEY, which the
 * token server derives alike), so a read of the table gives no usable link.
 */
@Injectable()
export class TicketsService {
  private readonly keys: Buffer[];
  private readonly issuer: string;

  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SECRET_BOX) box: SecretBox,
    @Inject(SERVICE_ENV) env: { ISSUER?: string; AUTH_PORT: number },
  ) {
    this.keys = box.derive(TICKET_KEY_PURPOSE);
    this.issuer = publicIssuer(env);
  }

  /** POST /tickets/password-change and /tickets/email-verification. */
  async create(access: Access, kind: TicketKind, input: TicketInput): Promise<{ ticket: string }> {
    return this.db.transaction(async (tx) => {
      const user = await findUser(tx, access, input.user_id);
      if (kind === 'email_verification' && !user.user_email) {
        throw conflict(`User ${user.id} has no user_email to verify`);
      }
      const clientId = input.client_id ? (await findClient(tx, access, input.client_id)).id : null;
      const issued = await this.issue(tx, access, {
        userId: user.id,
        userEmail: user.user_email,
        kind,
        ttlSec: input.ttl_sec,
        clientId,
        resultUrl: input.result_url ?? null,
        markEmailVerified: kind === 'password_change' && input.mark_email_as_verified === true,
      });
      return { ticket: issued.url };
    });
  }

  /** A ticket for a user already found in the caller's scope, in the caller's transaction. */
  async issue(
    tx: Sql,
    access: Access,
    t: {
      userId: string;
      /** The user's e-mail now: the only address the ticket may verify. */
      userEmail: string | null;
      kind: TicketKind;
      ttlSec?: number;
      clientId: string | null;
      resultUrl: string | null;
      markEmailVerified: boolean;
    },
  ): Promise<IssuedTicket> {
    const ttlSec =
      t.ttlSec ?? (t.kind === 'password_change' ? PASSWORD_CHANGE_TTL_SEC : EMAIL_VERIFICATION_TTL_SEC);
    const issued = await issueTicket(tx, this.keys, {
      instanceId: access.instanceId,
      userId: t.userId,
      userEmail: t.userEmail,
      kind: t.kind,
      ttlSec,
      clientId: t.clientId,
      resultUrl: t.resultUrl,
      markEmailVerified: t.markEmailVerified,
      actor: access.actor,
    });
    return {
      url: `${this.issuer}${TICKET_PATHS[t.kind]}?ticket=${issued.token}`,
      expiresAt: issued.expiresAt,
    };
  }
}
