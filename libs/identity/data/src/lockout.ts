import { rows, isUuid, type Queryable } from './sql.js';

/** Brute-force protection: `threshold` consecutive failures lock the account for `lockSeconds`. */
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

/**
 * Count one failed password login, atomically (one UPDATE, safe under concurrent attempts). The failure that reaches
 * the threshold locks the account for `lockSeconds` and starts the count again; failures while locked change nothing.
 * Returns null for an unknown user.
 */
export async function registerFailedLogin(
  db: Queryable,
  userId: string,
  policy: LockoutPolicy,
): Promise<FailedLoginResult | null> {
  if (!isUuid(userId)) return null;
  if (!(policy.threshold >= 1) || !(policy.lockSeconds >= 0)) throw new RangeError('invalid lockout policy');
  const [row] = await rows<{ failed_login_count: number; locked_until: Date | null; locked: boolean }>(
    db,
    `UPDATE users SET
       failed_login_count = CASE
         WHEN locked_until > now() THEN failed_login_count
         WHEN failed_login_count + 1 >= $2 THEN 0
         ELSE failed_login_count + 1 END,
       locked_until = CASE
         WHEN locked_until > now() THEN locked_until
         WHEN failed_login_count + 1 >= $2 THEN now() + make_interval(secs => $3)
         ELSE locked_until END
     WHERE id = $1
     RETURNING failed_login_count, locked_until, coalesce(locked_until > now(), false) AS locked`,
    [userId, policy.threshold, policy.lockSeconds],
  );
  if (!row) return null;
  return { failedLoginCount: row.failed_login_count, lockedUntil: row.locked_until, locked: row.locked };
}

/** Clear the failure count and any lock (e.g. an administrator unlocking the account). */
export async function resetFailedLogins(db: Queryable, userId: string): Promise<void> {
  if (!isUuid(userId)) return;
  await db.query(`UPDATE users SET failed_login_count = 0, locked_until = NULL WHERE id = $1`, [userId]);
}

/** A successful login: failures and lock cleared, `last_login_at` set, `login_count` incremented. */
export async function recordSuccessfulLogin(db: Queryable, userId: string): Promise<void> {
  if (!isUuid(userId)) return;
  await db.query(
    `UPDATE users SET failed_login_count = 0, locked_until = NULL, last_login_at = now(), login_count = login_count + 1
     WHERE id = $1`,
    [userId],
  );
}
