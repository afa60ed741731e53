/**
 * Brute-force protection: `threshold` consecutive failures of one user from one source address lock that user's
 * password logins from that address for `lockSeconds` (other addresses keep working).
 */
export interface LockoutPolicy {
  threshold: number;
  lockSeconds: number;
}

export interface FailedLoginResult {
  /** Failures counted since the last success or lock (0 right after a lock). */
  failedLoginCount: number;
  lockedUntil: Date | null;
  /** True when the account is locked now (this failure locked it, or it already was). */
  locked: boolean;
}

/** True while `lockedUntil` is in the future. */
export function isLockedOut(user: { lockedUntil: Date | string | null }, now: Date = new Date()): boolean {
  return user.lockedUntil != null && new Date(user.lockedUntil).getTime() > now.getTime();
}

/** Longest a source address may be, as stored (an IPv6 address with zone fits easily). */
const MAX_SOURCE_LENGTH = 100;
const sourceKey = (source: string) => (source || 'unknown').slice(0, MAX_SOURCE_LENGTH);

/** True while the user's password logins from `source` are locked (at `now`: the caller's clock). */
export async function isLockedFrom(
  db: Sql,
  userId: string,
  source: string,
  now: Date = new Date(),
): Promise<boolean> {
  if (!isUuid(userId)) return false;
  const [row] = await db.rows<{ locked: boolean }>(
    `SELECT coalesce(locked_until > $3, false) AS locked FROM login_failures WHERE user_id = $1 AND source = $2`,
    [userId, sourceKey(source), now],
  );
  return row?.locked ?? false;
}

/**
 * Count one failed password login of the user from `source`, atomically (one statement, safe under concurrent
 * attempts). The failure that reaches the threshold locks that user's logins from that source for `lockSeconds`
 * and starts the count again; failures while locked change nothing. Other addresses are not affected.
 * Returns null for an unknown user.
 */
export async function registerFailedLogin(
  db: Sql,
  userId: string,
  source: string,
  policy: LockoutPolicy,
  now: Date = new Date(),
): Promise<FailedLoginResult | null> {
  if (!isUuid(userId)) return null;
  if (!(policy.threshold >= 1) || !(policy.lockSeconds >= 0)) throw new RangeError('invalid lockout policy');
  const [row] = await db.rows<{ failed_count: number; locked_until: Date | null; locked: boolean }>(
    `INSERT INTO login_failures AS f (user_id, source, instance_id, failed_count, locked_until, updated_at)
     SELECT u.id, $2, u.instance_id,
            CASE WHEN 1 >= $3 THEN 0 ELSE 1 END,
            CASE WHEN 1 >= $3 THEN $5::timestamptz + make_interval(secs => $4) END,
            $5::timestamptz
       FROM users u WHERE u.id = $1
     ON CONFLICT (user_id, source) DO UPDATE SET
       failed_count = CASE
         WHEN f.locked_until > $5::timestamptz THEN f.failed_count
         WHEN f.failed_count + 1 >= $3 THEN 0
         ELSE f.failed_count + 1 END,
       locked_until = CASE
         WHEN f.locked_until > $5::timestamptz THEN f.locked_until
         WHEN f.failed_count + 1 >= $3 THEN $5::timestamptz + make_interval(secs => $4)
         ELSE f.locked_until END,
       updated_at = $5::timestamptz
     RETURNING failed_count, locked_until, coalesce(locked_until > $5::timestamptz, false) AS locked`,
    [userId, sourceKey(source), policy.threshold, policy.lockSeconds, now],
  );
  if (!row) return null;
  return { failedLoginCount: row.failed_count, lockedUntil: row.locked_until, locked: row.locked };
}

/**
 * Clear every failure count and lock of the user (an administrator unlocking it, a new password): password logins
 * and one-time codes alike.
 */
export async function resetFailedLogins(db: Sql, userId: string): Promise<void> {
  if (!isUuid(userId)) return;
  await db.exec(`DELETE FROM login_failures WHERE user_id = $1`, [userId]);
  await db.exec(`DELETE FROM otp_failures WHERE user_id = $1`, [userId]);
  await db.exec(`UPDATE users SET failed_login_count = 0, locked_until = NULL WHERE id = $1`, [userId]);
}

/**
 * A successful login from `source`: that source's failures cleared, `last_login_at` set, `login_count`
 * incremented. True when this cleared a lock of that source (one that had run out: a live one refuses the login
 * before), i.e. the account is unlocked from there from now on.
 */
export async function recordSuccessfulLogin(db: Sql, userId: string, source: string): Promise<boolean> {
  if (!isUuid(userId)) return false;
  // One statement (data-modifying CTEs) for both writes: one round trip on every sign-in instead of two, and the
  // pair is atomic.
  const [r] = await db.rows<{ locked: boolean }>(
    `WITH cleared AS (DELETE FROM login_failures WHERE user_id = $1 AND source = $2
                      RETURNING locked_until IS NOT NULL AS locked),
          seen AS (UPDATE users SET failed_login_count = 0, locked_until = NULL, last_login_at = now(),
                                    login_count = login_count + 1
                    WHERE id = $1)
     SELECT coalesce(bool_or(locked), false) AS locked FROM cleared`,
    [userId, sourceKey(source)],
  );
  return r?.locked ?? false;
}

/** Delete failure rows no attempt touched for `olderThanSec` whose lock (if any) has run out; returns how many. */
export async function purgeLoginFailures(db: Sql, olderThanSec = 86_400): Promise<number> {
  const gone = await db.rows<{ n: number }>(
    `WITH gone AS (
       DELETE FROM login_failures
        WHERE updated_at < now() - make_interval(secs => $1) AND (locked_until IS NULL OR locked_until < now())
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [olderThanSec],
  );
  return gone[0]?.n ?? 0;
}
import { isUuid, type Sql } from '@gatehouse/db';

/** True while the account is locked, as a whole or from any source (what a password set by an administrator ends). */
export async function isAccountLocked(db: Sql, userId: string): Promise<boolean> {
  if (!isUuid(userId)) return false;
  const [r] = await db.rows<{ locked: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM login_failures WHERE user_id = $1 AND locked_until > now())
         OR EXISTS (SELECT 1 FROM users WHERE id = $1 AND locked_until > now()) AS locked`,
    [userId],
  );
  return r?.locked ?? false;
}
