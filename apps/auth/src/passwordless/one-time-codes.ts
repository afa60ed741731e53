import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Sql } from '@gatehouse/db';

/** Passwordless codes: 6 digits, 5 minutes, 5 attempts, one use; only a keyed hash is stored. */
export const CODE_TTL_SEC = 300;
export const MAX_ATTEMPTS = 5;

export type CodeCheck = 'ok' | 'invalid';

export class OneTimeCodes {
  constructor(
    private readonly sql: Sql,
    /** HMAC keys (current first), derived from the secret key: the same on every replica. */
    private readonly keys: Buffer[],
    /** The clock codes expire by (tests move it). */
    public clock: () => Date = () => new Date(),
  ) {}

  private hash(id: string, code: string, key = this.keys[0]): string {
    return createHmac('sha256', key).update(`${id}:${code}`).digest('base64url');
  }

  /**
   * A new code for the user at this client: earlier unused ones of that pair stop working. Runs in the caller's
   * transaction, so a failed delivery leaves no code behind.
   */
  async issue(
    tx: Sql,
    o: { instanceId: string; userId: string; clientId: string; channel: string; scope?: string },
  ) {
    await tx.exec(
      `UPDATE one_time_codes SET consumed_at = $3
        WHERE user_id = $1 AND client_id = $2 AND consumed_at IS NULL AND channel IN ('email', 'sms')`,
      [o.userId, o.clientId, this.clock()],
    );
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const row = await tx.one<{ id: string }>(
      `INSERT INTO one_time_codes (instance_id, user_id, client_id, channel, code_hash, scope, expires_at)
       VALUES ($1, $2, $3, $4, '', $5, $6) RETURNING id`,
      [
        o.instanceId,
        o.userId,
        o.clientId,
        o.channel,
        o.scope ?? null,
        new Date(this.clock().getTime() + CODE_TTL_SEC * 1000),
      ],
    );
    await tx.exec(`UPDATE one_time_codes SET code_hash = $2 WHERE id = $1`, [
      row!.id,
      this.hash(row!.id, code),
    ]);
    return code;
  }

  /**
   * Checks `code` against the user's live code at this client: a wrong one counts an attempt (the fifth ends the
   * code); a right one is used up. Any other case (none, expired, used, too many attempts): invalid.
   */
  async check(userId: string, clientId: string, code: string): Promise<CodeCheck> {
    return this.sql.transaction(async (tx) => {
      const now = this.clock();
      const row = await tx.one<{ id: string; code_hash: string; attempts: number }>(
        `SELECT id, code_hash, attempts FROM one_time_codes
          WHERE user_id = $1 AND client_id = $2 AND channel IN ('email', 'sms') AND consumed_at IS NULL
            AND expires_at > $3 AND attempts < $4
          ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
        [userId, clientId, now, MAX_ATTEMPTS],
      );
      if (!row) return 'invalid';
      const given = /^\d{6}$/.test(code) ? code : '';
      const matches = this.keys.some((k) => {
        const expected = Buffer.from(row.code_hash);
        const actual = Buffer.from(this.hash(row.id, given, k));
        return expected.length === actual.length && timingSafeEqual(expected, actual);
      });
      if (!matches) {
        await tx.exec(`UPDATE one_time_codes SET attempts = attempts + 1 WHERE id = $1`, [row.id]);
        return 'invalid';
      }
      await tx.exec(`UPDATE one_time_codes SET consumed_at = $2 WHERE id = $1`, [row.id, now]);
      return 'ok';
    });
  }

  /**
   * A single-use link token (e-mail verification): 32 random bytes, only their keyed hash stored, valid `ttlSec`.
   * Runs in the caller's transaction.
   */
  async issueLink(
    tx: Sql,
    o: {
      instanceId: string;
      userId: string;
      clientId: string;
      purpose: string;
      ttlSec: number;
      params?: Record<string, string>;
    },
  ) {
    const token = randomBytes(32).toString('base64url');
    await tx.exec(
      `INSERT INTO one_time_codes (instance_id, user_id, client_id, channel, code_hash, expires_at, params)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`,
      [
        o.instanceId,
        o.userId,
        o.clientId,
        o.purpose,
        this.linkHash(token),
        new Date(this.clock().getTime() + o.ttlSec * 1000),
        o.params ? JSON.stringify(o.params) : null,
      ],
    );
    return token;
  }

  /** Uses up a link token of `purpose`; the user it was for, or undefined (unknown, used, expired). */
  async redeemLink(token: string, purpose: string): Promise<string | undefined> {
    return (await this.redeem(token, purpose))?.user_id;
  }

  /** Uses up a link token of `purpose`: its user, client and kept request, or undefined. */
  async redeem(
    token: string,
    purpose: string,
  ): Promise<{ user_id: string; client_id: string; params: Record<string, string> | null } | undefined> {
    if (!/^[\w-]{20,100}$/.test(token)) return undefined;
    const hashes = this.keys.map((k) => this.linkHash(token, k));
    return this.sql.one<{ user_id: string; client_id: string; params: Record<string, string> | null }>(
      `UPDATE one_time_codes SET consumed_at = $3
        WHERE code_hash = ANY($1::text[]) AND channel = $2 AND consumed_at IS NULL AND expires_at > $3
        RETURNING user_id, client_id, params`,
      [hashes, purpose, this.clock()],
    );
  }

  private linkHash(token: string, key = this.keys[0]): string {
    return createHmac('sha256', key).update(`link:${token}`).digest('base64url');
  }

  /** Codes past their expiry, deleted by the token server's housekeeping. */
  async purge(): Promise<number> {
    return this.sql.exec(`DELETE FROM one_time_codes WHERE expires_at < now() - interval '1 day'`);
  }
}
