import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Sql } from '@gatehouse/db';

/** Passwordless codes: 6 digits, 5 minutes, 5 attempts, one use; only a keyed hash is stored. */
export const CODE_TTL_SEC = 300;
export const MAX_ATTEMPTS = 5;
/** The channel of a code proving a new phone number (the account page). */
export const PHONE_VERIFICATION = 'phone_verification';

/** Longest lock of an account's passwordless sign-in, however many locks came before. */
export const MAX_OTP_LOCK_SEC = 86_400;

/**
 * The budgets of passwordless sign-in (Auth0's "passwordless brute-force protection"): `maxFailures` wrong codes
 * of one account across all its codes within `failureWindowSec` lock it for `lockSec`, doubling with each further
 * lock up to a day; at most one message per `sendIntervalSec` and `sendsPerHour` an hour to one account and to one
 * address.
 */
export interface OtpPolicy {
  maxFailures: number;
  failureWindowSec: number;
  lockSec: number;
  sendIntervalSec: number;
  sendsPerHour: number;
}

export const DEFAULT_OTP_POLICY: OtpPolicy = {
  maxFailures: 10,
  failureWindowSec: 900,
  lockSec: 900,
  sendIntervalSec: 60,
  sendsPerHour: 5,
};

/** The policy of the token server's environment (its defaults where a variable is not set). */
export function otpPolicyOf(env: {
  AUTH_OTP_MAX_FAILURES?: number;
  AUTH_OTP_FAILURE_WINDOW_SEC?: number;
  AUTH_OTP_LOCK_SECONDS?: number;
  AUTH_OTP_SEND_INTERVAL_SEC?: number;
  AUTH_OTP_SENDS_PER_HOUR?: number;
}): OtpPolicy {
  const d = DEFAULT_OTP_POLICY;
  return {
    maxFailures: env.AUTH_OTP_MAX_FAILURES ?? d.maxFailures,
    failureWindowSec: env.AUTH_OTP_FAILURE_WINDOW_SEC ?? d.failureWindowSec,
    lockSec: env.AUTH_OTP_LOCK_SECONDS ?? d.lockSec,
    sendIntervalSec: env.AUTH_OTP_SEND_INTERVAL_SEC ?? d.sendIntervalSec,
    sendsPerHour: env.AUTH_OTP_SENDS_PER_HOUR ?? d.sendsPerHour,
  };
}

/** `locked`: the account's passwordless sign-in is locked (callers answer as for a wrong code: no oracle). */
export type CodeCheck = 'ok' | 'invalid' | 'locked';

export class OneTimeCodes {
  constructor(
    private readonly sql: Sql,
    /** HMAC keys (current first), derived from the secret key: the same on every replica. */
    private readonly keys: Buffer[],
    private readonly policy: OtpPolicy = DEFAULT_OTP_POLICY,
    /** The clock codes expire by, and their budgets count by (tests move it). */
    public clock: () => Date = () => new Date(),
  ) {}

  /**
   * Whether a message (a code or a link) may go to the user at `destination` now; when it may, it is counted
   * (before delivery: a message that then fails still counts, as an attempt). A short transaction of its own holds
   * the rows of the account and of the destination, so concurrent requests are counted one after the other on every
   * replica, and none waits on another's delivery (a burst for one account cannot tie up the connection pool). Not
   * while the account is locked. Keys are locked in one order (destination, then account): no deadlock.
   */
  mayBeSent(o: { userId: string; channel: string; destination: string }): Promise<boolean> {
    return this.sql.transaction((tx) => this.countSend(tx, o));
  }

  private async countSend(
    tx: Sql,
    o: { userId: string; channel: string; destination: string },
  ): Promise<boolean> {
    const now = this.clock();
    const locked = await tx.one<{ locked: boolean }>(
      `SELECT locked_until > $2 AS locked FROM otp_failures WHERE user_id = $1`,
      [o.userId, now],
    );
    if (locked?.locked) return false;
    const destination = createHmac('sha256', this.keys[0])
      .update(`dest:${o.channel}:${o.destination.trim().toLowerCase()}`)
      .digest('base64url');
    const keys = [`d:${destination}`, `u:${o.userId}`];
    await tx.exec(
      `INSERT INTO otp_sends (send_key, hour_start, hour_count, last_sent_at)
       SELECT k, to_timestamp(0), 0, to_timestamp(0) FROM unnest($1::text[]) AS k ORDER BY k
       ON CONFLICT (send_key) DO NOTHING`,
      [keys],
    );
    const rows = await tx.rows<{
      send_key: string;
      hour_start: Date;
      hour_count: number;
      last_sent_at: Date;
    }>(
      `SELECT send_key, hour_start, hour_count, last_sent_at FROM otp_sends
        WHERE send_key = ANY($1::text[]) ORDER BY send_key FOR UPDATE`,
      [keys],
    );
    const t = now.getTime();
    const { sendIntervalSec, sendsPerHour } = this.policy;
    const newHour = (r: { hour_start: Date }) => t - new Date(r.hour_start).getTime() >= 3_600_000;
    const allowed = rows.every(
      (r) =>
        t - new Date(r.last_sent_at).getTime() >= sendIntervalSec * 1000 &&
        (newHour(r) || r.hour_count < sendsPerHour),
    );
    if (!allowed || rows.length !== keys.length) return false;
    for (const r of rows) {
      await tx.exec(
        `UPDATE otp_sends SET last_sent_at = $2, hour_start = $3, hour_count = $4 WHERE send_key = $1`,
        [r.send_key, now, newHour(r) ? now : r.hour_start, newHour(r) ? 1 : r.hour_count + 1],
      );
    }
    return true;
  }

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
    return this.newCode(tx, o);
  }

  /** A 6-digit code stored as its keyed hash over the row's id, live {@link CODE_TTL_SEC}. */
  private async newCode(
    tx: Sql,
    o: {
      instanceId: string;
      userId: string;
      clientId: string | null;
      channel: string;
      scope?: string;
      params?: Record<string, string>;
    },
  ): Promise<string> {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const row = await tx.one<{ id: string }>(
      `INSERT INTO one_time_codes (instance_id, user_id, client_id, channel, code_hash, scope, params, expires_at)
       VALUES ($1, $2, $3, $4, '', $5, $6::jsonb, $7) RETURNING id`,
      [
        o.instanceId,
        o.userId,
        o.clientId,
        o.channel,
        o.scope ?? null,
        o.params ? JSON.stringify(o.params) : null,
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
   * A code proving that the person holds the phone number `phone` (the account page): the person's earlier pending
   * numbers stop waiting. Bound to no client; the number is kept in `params.phone`. Runs in the caller's transaction
   * (the one queueing the text message).
   */
  async issuePhoneCode(tx: Sql, o: { instanceId: string; userId: string; phone: string }): Promise<string> {
    await this.endPhoneCodes(tx, o.userId);
    return this.newCode(tx, {
      instanceId: o.instanceId,
      userId: o.userId,
      clientId: null,
      channel: PHONE_VERIFICATION,
      params: { phone: o.phone },
    });
  }

  /** The number waiting for its code (live, attempts left), or undefined. */
  async pendingPhone(userId: string): Promise<string | undefined> {
    const row = await this.sql.one<{ phone: string }>(
      `SELECT params->>'phone' AS phone FROM one_time_codes
        WHERE user_id = $1 AND channel = $2 AND consumed_at IS NULL AND expires_at > $3 AND attempts < $4
        ORDER BY created_at DESC LIMIT 1`,
      [userId, PHONE_VERIFICATION, this.clock(), MAX_ATTEMPTS],
    );
    return row?.phone ?? undefined;
  }

  /** Ends the person's pending phone codes (a new number asked for, the number removed, or the wait given up). */
  async endPhoneCodes(tx: Sql, userId: string): Promise<void> {
    await tx.exec(
      `UPDATE one_time_codes SET consumed_at = $3 WHERE user_id = $1 AND channel = $2 AND consumed_at IS NULL`,
      [userId, PHONE_VERIFICATION, this.clock()],
    );
  }

  /**
   * The code of the person's pending phone number checked, in the caller's transaction (the one that then saves the
   * number): right, it is used up and the number returned; wrong, an attempt is counted (the fifth ends the code);
   * `none`: no live code (expired, used up, never asked for).
   */
  async checkPhoneCode(
    tx: Sql,
    userId: string,
    code: string,
  ): Promise<{ result: 'ok'; phone: string } | { result: 'wrong' | 'none' }> {
    const now = this.clock();
    const row = await tx.one<{ id: string; code_hash: string; phone: string }>(
      `SELECT id, code_hash, params->>'phone' AS phone FROM one_time_codes
        WHERE user_id = $1 AND channel = $2 AND consumed_at IS NULL AND expires_at > $3 AND attempts < $4
        ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
      [userId, PHONE_VERIFICATION, now, MAX_ATTEMPTS],
    );
    if (!row) return { result: 'none' };
    if (this.matches(row, code)) {
      await tx.exec(`UPDATE one_time_codes SET consumed_at = $2 WHERE id = $1`, [row.id, now]);
      return { result: 'ok', phone: row.phone };
    }
    await tx.exec(`UPDATE one_time_codes SET attempts = attempts + 1 WHERE id = $1`, [row.id]);
    return { result: 'wrong' };
  }

  /** Whether `code` (6 digits) is the one of the row, under any of the keys (constant time). */
  private matches(row: { id: string; code_hash: string }, code: string): boolean {
    const given = /^\d{6}$/.test(code) ? code : '';
    return this.keys.some((k) => {
      const expected = Buffer.from(row.code_hash);
      const actual = Buffer.from(this.hash(row.id, given, k));
      return expected.length === actual.length && timingSafeEqual(expected, actual);
    });
  }

  /**
   * Checks `code` against the user's live code at this client: a wrong one counts an attempt (the fifth ends the
   * code) and a failure of the account; a right one is used up and clears the account's failures. The account's
   * checks run one at a time (a transaction-scoped advisory lock), so concurrent guesses cannot overrun the budget.
   * While the account is locked nothing is checked ('locked', even for the right code). Otherwise (no live code,
   * expired, used, too many attempts): invalid, and counted.
   */
  async check(userId: string, clientId: string, code: string): Promise<CodeCheck> {
    return this.sql.transaction(async (tx) => {
      const now = this.clock();
      await tx.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`gatehouse:otp:${userId}`]);
      const budget = await tx.one<{
        failed_count: number;
        window_start: Date;
        locked: boolean;
        lock_count: number;
      }>(
        `SELECT failed_count, window_start, coalesce(locked_until > $2, false) AS locked, lock_count
           FROM otp_failures WHERE user_id = $1`,
        [userId, now],
      );
      if (budget?.locked) return 'locked';
      const row = await tx.one<{ id: string; code_hash: string; attempts: number }>(
        `SELECT id, code_hash, attempts FROM one_time_codes
          WHERE user_id = $1 AND client_id = $2 AND channel IN ('email', 'sms') AND consumed_at IS NULL
            AND expires_at > $3 AND attempts < $4
          ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
        [userId, clientId, now, MAX_ATTEMPTS],
      );
      const matches = !!row && this.matches(row, code);
      if (row && matches) {
        await tx.exec(`UPDATE one_time_codes SET consumed_at = $2 WHERE id = $1`, [row.id, now]);
        if (budget) await tx.exec(`DELETE FROM otp_failures WHERE user_id = $1`, [userId]);
        return 'ok';
      }
      if (row) await tx.exec(`UPDATE one_time_codes SET attempts = attempts + 1 WHERE id = $1`, [row.id]);
      await this.countFailure(tx, userId, budget, now);
      return 'invalid';
    });
  }

  /**
   * One more wrong code of the account (its row locked by the caller). The one that reaches the budget locks the
   * account, each lock twice as long as the one before (at most a day), ends its live codes and starts the count
   * again.
   */
  private async countFailure(
    tx: Sql,
    userId: string,
    budget: { failed_count: number; window_start: Date; lock_count: number } | undefined,
    now: Date,
  ): Promise<void> {
    const { maxFailures, failureWindowSec, lockSec } = this.policy;
    const inWindow =
      !!budget && now.getTime() - new Date(budget.window_start).getTime() < failureWindowSec * 1000;
    const count = (inWindow ? budget.failed_count : 0) + 1;
    const windowStart = inWindow ? budget.window_start : now;
    const lockCount = budget?.lock_count ?? 0;
    const lock = count >= maxFailures;
    const lockedUntil = lock
      ? new Date(now.getTime() + Math.min(lockSec * 2 ** Math.min(lockCount, 20), MAX_OTP_LOCK_SEC) * 1000)
      : null;
    await tx.exec(
      `INSERT INTO otp_failures AS f (user_id, instance_id, failed_count, window_start, locked_until, lock_count,
                                      updated_at)
       SELECT u.id, u.instance_id, $2, $3, $4, $5, $6 FROM users u WHERE u.id = $1
       ON CONFLICT (user_id) DO UPDATE SET failed_count = $2, window_start = $3, locked_until = $4,
                                           lock_count = $5, updated_at = $6`,
      [userId, lock ? 0 : count, windowStart, lockedUntil, lock ? lockCount + 1 : lockCount, now],
    );
    if (lock) {
      await tx.exec(
        `UPDATE one_time_codes SET consumed_at = $2
          WHERE user_id = $1 AND consumed_at IS NULL AND channel IN ('email', 'sms')`,
        [userId, now],
      );
    }
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

  /** The user and client of a live link token of `purpose`, without using it up (a page asks first). */
  async findLink(
    token: string,
    purpose: string,
  ): Promise<{ user_id: string; client_id: string; params: Record<string, string> | null } | undefined> {
    if (!/^[\w-]{20,100}$/.test(token)) return undefined;
    const hashes = this.keys.map((k) => this.linkHash(token, k));
    return this.sql.one<{ user_id: string; client_id: string; params: Record<string, string> | null }>(
      `SELECT user_id, client_id, params FROM one_time_codes
        WHERE code_hash = ANY($1::text[]) AND channel = $2 AND consumed_at IS NULL AND expires_at > $3`,
      [hashes, purpose, this.clock()],
    );
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

  /**
   * Codes past their expiry, failure counts untouched for a day whose lock is over (the back-off starts again) and
   * send counts older than an hour: deleted by the token server's housekeeping.
   */
  async purge(): Promise<number> {
    const codes = await this.sql.exec(
      `DELETE FROM one_time_codes WHERE expires_at < now() - interval '1 day'`,
    );
    await this.sql.exec(
      `DELETE FROM otp_failures
        WHERE updated_at < now() - interval '1 day' AND (locked_until IS NULL OR locked_until < now())`,
    );
    await this.sql.exec(
      `DELETE FROM otp_sends WHERE last_sent_at < now() - interval '1 hour' AND hour_start < now() - interval '1 hour'`,
    );
    return codes;
  }
}
