import { createHmac, randomBytes } from 'node:crypto';
import { column, iso, Table, type RowOf, type Sql } from '@gatehouse/db';

/**
 * The `tickets` table (alias `tk`): single-use links to a page of the token server, made by the management API
 * (Tickets, User Registration) and redeemed by apps/auth. A ticket belongs to its user's instance; who may make one
 * is decided through the user (a tenant-bound caller reaches only its tenant's users). Its columns, declared once:
 * TicketRow and the select list derive from them.
 */
export const ticketsTable = new Table({
  name: 'tickets',
  alias: 'tk',
  tenantScoped: false,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    user_id: column.uuid(),
    kind: column.textOf<TicketKind>(),
    client_id: column.uuid().nullable(),
    result_url: column.text().nullable(),
    /** The address the ticket was made for (it verifies only that one). */
    user_email: column.text().nullable(),
    mark_email_verified: column.boolean(),
    /** The keyed hash of the token: looked up, never read. */
    token_hash: column.text().hiddenColumn(),
    expires_at: column.timestamp().hiddenColumn(),
    used_at: column.timestamp().nullable().hiddenColumn(),
  },
});

/** Page of the token server that redeems a ticket of each kind (its link carries `?ticket=<token>`). */
export const TICKET_PATHS: Record<TicketKind, string> = {
  password_change: '/tickets/password-change',
  email_verification: '/tickets/email-verification',
};

/** Purpose the HMAC keys of ticket tokens are derived for (`box.derive(TICKET_KEY_PURPOSE)`, the same on every app). */
export const TICKET_KEY_PURPOSE = 'tickets';

export type TicketKind = 'password_change' | 'email_verification';

/** A live (unused, unexpired) ticket as the token server reads it. */
export type TicketRow = RowOf<typeof ticketsTable.columns>;

/** The keyed hash of a ticket token under `key` (HMAC-SHA256, base64url). */
export function ticketTokenHash(key: Buffer, token: string): string {
  return createHmac('sha256', key).update(`ticket:${token}`).digest('base64url');
}

/** A token shaped as issued (32 random bytes, base64url): anything else is never looked up. */
const TOKEN = /^[\w-]{43}$/;

/**
 * A new ticket for the user: 32 random bytes as its token, only the keyed hash (current key) stored. Runs in the
 * caller's transaction (an invitation whose e-mail fails leaves no ticket). Returns the token and its expiry.
 */
export async function issueTicket(
  tx: Sql,
  keys: Buffer[],
  t: {
    instanceId: string;
    userId: string;
    kind: TicketKind;
    ttlSec: number;
    clientId?: string | null;
    resultUrl?: string | null;
    /** The user's e-mail now: the only address the ticket may verify. */
    userEmail: string | null;
    markEmailVerified?: boolean;
    actor: string | null;
  },
): Promise<{ id: string; token: string; expiresAt: string }> {
  const token = randomBytes(32).toString('base64url');
  const row = await tx.one<{ id: string; expires_at: string }>(
    `INSERT INTO tickets (instance_id, user_id, kind, token_hash, client_id, result_url, user_email,
                          mark_email_verified, expires_at, created_by, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6, $10, $7, now() + make_interval(secs => $8), $9, $9)
     RETURNING id, ${iso('expires_at')} AS expires_at`,
    [
      t.instanceId,
      t.userId,
      t.kind,
      ticketTokenHash(keys[0], token),
      t.clientId ?? null,
      t.resultUrl ?? null,
      t.markEmailVerified ?? false,
      t.ttlSec,
      t.actor,
      t.userEmail,
    ],
  );
  if (!row) throw new Error('the ticket was not stored');
  return { id: row.id, token, expiresAt: row.expires_at };
}

/** The live ticket of `kind` with this token (any current or previous key), without using it; else undefined. */
export async function findLiveTicket(sql: Sql, keys: Buffer[], token: string, kind: TicketKind) {
  if (!TOKEN.test(token)) return undefined;
  return sql.one<TicketRow>(
    `SELECT ${ticketsTable.select} FROM ${ticketsTable.from}
      WHERE token_hash = ANY($1::text[]) AND kind = $2 AND used_at IS NULL AND expires_at > now()`,
    [keys.map((k) => ticketTokenHash(k, token)), kind],
  );
}

/**
 * Uses the ticket up: one atomic UPDATE that only an unused, unexpired ticket passes, so two submissions of one
 * link cannot both succeed. The ticket's row, or undefined (unknown, used, expired, another kind).
 */
export async function redeemTicket(sql: Sql, keys: Buffer[], token: string, kind: TicketKind) {
  if (!TOKEN.test(token)) return undefined;
  return sql.one<TicketRow>(
    `UPDATE ${ticketsTable.from} SET used_at = now(), updated_at = now()
      WHERE token_hash = ANY($1::text[]) AND kind = $2 AND used_at IS NULL AND expires_at > now()
      RETURNING ${ticketsTable.select}`,
    [keys.map((k) => ticketTokenHash(k, token)), kind],
  );
}

/** Ends the user's other open tickets of `kind` (a password set through one link ends the others). */
export async function endOpenTickets(sql: Sql, userId: string, kind: TicketKind): Promise<number> {
  return sql.exec(
    `UPDATE tickets SET used_at = now(), updated_at = now() WHERE user_id = $1 AND kind = $2 AND used_at IS NULL`,
    [userId, kind],
  );
}

/** Tickets expired or used more than a day ago, deleted by the token server's housekeeping. */
export async function purgeTickets(sql: Sql): Promise<number> {
  return sql.exec(
    `DELETE FROM tickets WHERE expires_at < now() - interval '1 day' OR used_at < now() - interval '1 day'`,
  );
}
