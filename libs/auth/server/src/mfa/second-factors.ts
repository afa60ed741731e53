import { createHash, randomInt, randomUUID } from 'node:crypto';
import type { Sql } from '@gatehouse/db';
import { sealedIn, type MfaPolicy, type SecretBox } from '@gatehouse/identity-data';
import { matchingSteps, newTotpSecret } from './totp.js';

/** `acr` of a sign-in with one factor (a password, a one-time code or link) and with a second factor. */
export const ACR_PWD = 'urn:gatehouse:acr:pwd';
export const ACR_MFA = 'urn:gatehouse:acr:mfa';
export const ACR_VALUES = [ACR_PWD, ACR_MFA] as const;

/** RFC 8176 `amr` of a first factor: `pwd` (a password), `otp` (a one-time code or sign-in link). */
export type FirstFactor = 'pwd' | 'otp';

/** The `amr` and `acr` of a sign-in: the first factor, and `otp` + `mfa` once a second factor was used. */
export function authContext(first: readonly string[], second: boolean): { amr: string[]; acr: string } {
  const amr = [...new Set([...first.filter((m) => m !== 'mfa'), ...(second ? ['otp', 'mfa'] : [])])];
  return { amr, acr: second ? ACR_MFA : ACR_PWD };
}

/** What a sign-in needs after its first factor: nothing, the second factor, or enrolling one (browser only). */
export type MfaNeed = 'verify' | 'enrol' | undefined;

/** The effective policy of a sign-in and whether the user has a confirmed TOTP authenticator, and passkeys. */
export interface MfaState {
  policy: MfaPolicy;
  totp: boolean;
  /** At least one passkey (a second factor on the pages only: a grant without a page cannot use it). */
  passkeys?: boolean;
}

/**
 * The rule (docs/security.md "Second factors"): `off` asks nothing, even of a user with an authenticator (nor on
 * step-up); a user with a confirmed TOTP is asked for it (`optional`, `required`); `required` without one enrols;
 * `optional` without one enrols only when the request asks for the MFA acr (`acr_values`, step-up).
 */
export function mfaNeed(state: MfaState, stepUp: boolean): MfaNeed {
  if (state.policy === 'off') return undefined;
  if (state.totp || state.passkeys) return 'verify';
  if (state.policy === 'required' || stepUp) return 'enrol';
  return undefined;
}

/** The answer of a second-factor check. `locked`: the account's budget is spent (even a right code is refused). */
export type FactorCheck = 'ok' | 'wrong_code' | 'reused_code' | 'locked';

/** Which second factor is given. */
export type FactorKind = 'totp' | 'recovery_code' | 'webauthn';

/** The second-factor failure budget: `maxFailures` wrong factors within `windowSec` lock them for `lockSec`. */
export interface MfaBudget {
  maxFailures: number;
  windowSec: number;
  lockSec: number;
}

export const DEFAULT_MFA_BUDGET: MfaBudget = { maxFailures: 5, windowSec: 900, lockSec: 900 };

/** Recovery codes per set, and their alphabet (no 0/o, 1/l/i): 16 characters of 31, about 79 bits each. */
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const USED = 'used:';

/** A recovery code as typed: case, spaces and dashes do not matter. */
export const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');

/** The stored hash of a recovery code of authenticator `id`. */
export function recoveryCodeHash(id: string, code: string): string {
  return createHash('sha256')
    .update(`${id.toLowerCase()}:${normalizeRecoveryCode(code)}`)
    .digest('hex');
}

function newRecoveryCode(): string {
  let s = '';
  for (let i = 0; i < 16; i++) s += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return s.match(/.{4}/g)!.join('-');
}

/** How long an enrolment waits for its first code before a new secret is drawn. */
const ENROLMENT_TTL_MS = 30 * 60_000;

/**
 * A user's second factors as the token server checks them: the effective policy, TOTP enrolment and checks (a time
 * step accepted once), recovery codes (each once), and the failure budget per account, shared by every replica
 * (rows in PostgreSQL; an account's checks run one at a time under a transaction-scoped advisory lock, so
 * concurrent guesses cannot overrun it). No secret or code is logged or returned by a read.
 */
export class SecondFactors {
  constructor(
    private readonly sql: Sql,
    private readonly box: SecretBox,
    /** The name apps show beside the account (the QR code's issuer). */
    private readonly issuerName: string,
    private readonly budget: MfaBudget = DEFAULT_MFA_BUDGET,
    /** The clock codes and the budget count by (tests move it). */
    public clock: () => Date = () => new Date(),
  ) {}

  get appIssuer(): string {
    return this.issuerName;
  }

  /**
   * The effective policy of user `userId` signing in through client `clientId` (the client's, else the user's
   * tenant's, else the instance's, else `optional`) and whether the user has a confirmed TOTP. One statement.
   */
  async state(clientId: string, userId: string): Promise<MfaState> {
    const row = await this.sql.one<{ policy: MfaPolicy; totp: boolean; passkeys: boolean }>(
      /* unscoped: the signing-in user's own rows, found by the token server in the client's instance */
      `SELECT coalesce(c.mfa, t.mfa, i.mfa, 'optional') AS policy,
              EXISTS (SELECT 1 FROM user_authenticators a
                       WHERE a.user_id = u.id AND a.type = 'totp' AND a.confirmed_at IS NOT NULL) AS totp,
              EXISTS (SELECT 1 FROM user_authenticators a
                       WHERE a.user_id = u.id AND a.type = 'webauthn' AND a.confirmed_at IS NOT NULL) AS passkeys
         FROM users u
         JOIN instances i ON i.id = u.instance_id
         LEFT JOIN tenants t ON t.id = u.tenant_id
         LEFT JOIN clients c ON c.id = $1 AND c.instance_id = u.instance_id
        WHERE u.id = $2`,
      [clientId, userId],
    );
    return row ?? { policy: 'optional', totp: false, passkeys: false };
  }

  /**
   * The TOTP enrolment waiting for its first code (drawn anew after 30 minutes): its id and secret, shown once to
   * the person enrolling (QR code and text).
   */
  async startEnrolment(user: { id: string; instanceId: string }): Promise<{ id: string; secret: string }> {
    const now = this.clock();
    const pending = await this.sql.one<{ id: string; secret_enc: string }>(
      /* unscoped: the signing-in user's own rows */
      `SELECT id, secret_enc FROM user_authenticators
        WHERE user_id = $1 AND type = 'totp' AND confirmed_at IS NULL AND created_at > $2
        ORDER BY created_at DESC LIMIT 1`,
      [user.id, new Date(now.getTime() - ENROLMENT_TTL_MS)],
    );
    if (pending)
      return {
        id: pending.id,
        secret: this.box.decrypt(pending.secret_enc, sealedIn.totpSecret(pending.id)),
      };
    const id = randomUUID();
    const secret = newTotpSecret();
    await this.sql.exec(
      `INSERT INTO user_authenticators (id, instance_id, user_id, type, name, secret_enc, created_at, updated_at)
       VALUES ($1, $2, $3, 'totp', 'Authenticator app', $4, $5, $5)`,
      [id, user.instanceId, user.id, this.box.encrypt(secret, sealedIn.totpSecret(id)), now],
    );
    return { id, secret };
  }

  /**
   * Confirms the enrolment `authenticatorId` of the user with its first code: the TOTP is confirmed (its step
   * used), any other TOTP of the user removed, and a new set of recovery codes replaces the old one. Returns the
   * recovery codes in clear, to be shown once, or 'wrong_code'.
   */
  async confirmEnrolment(
    user: { id: string; instanceId: string },
    authenticatorId: string,
    code: string,
  ): Promise<{ codes: string[] } | 'wrong_code'> {
    return this.sql.transaction(async (tx) => {
      const now = this.clock();
      await tx.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`gatehouse:mfa:${user.id}`]);
      const row = await tx.one<{ id: string; secret_enc: string }>(
        /* unscoped: the signing-in user's own rows */
        `SELECT id, secret_enc FROM user_authenticators
          WHERE id = $1 AND user_id = $2 AND type = 'totp' AND confirmed_at IS NULL FOR UPDATE`,
        [authenticatorId, user.id],
      );
      if (!row) return 'wrong_code';
      const secret = this.box.decrypt(row.secret_enc, sealedIn.totpSecret(row.id));
      const [step] = matchingSteps(secret, code.trim(), now);
      if (step === undefined) return 'wrong_code';
      await tx.exec(
        `DELETE FROM user_authenticators
          WHERE user_id = $1 AND (type = 'recovery_codes' OR (type = 'totp' AND id <> $2))`,
        [user.id, row.id],
      );
      await tx.exec(
        `UPDATE user_authenticators SET confirmed_at = $2, last_used_at = $2, last_step = $3, updated_at = $2
          WHERE id = $1`,
        [row.id, now, step],
      );
      const codes = await this.insertRecoveryCodes(tx, user, now);
      await tx.exec(`DELETE FROM mfa_failures WHERE user_id = $1`, [user.id]);
      return { codes };
    });
  }

  /**
   * A new set of recovery codes for a user with a confirmed TOTP (the account page), replacing the old set: the
   * codes in clear, to be shown once; undefined without an authenticator app (recovery codes alone are no factor).
   */
  async regenerateRecoveryCodes(user: { id: string; instanceId: string }): Promise<string[] | undefined> {
    return this.sql.transaction(async (tx) => {
      const now = this.clock();
      await tx.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`gatehouse:mfa:${user.id}`]);
      const app = await tx.one<{ id: string }>(
        /* unscoped: the signed-in user's own rows */
        `SELECT id FROM user_authenticators WHERE user_id = $1 AND type = 'totp' AND confirmed_at IS NOT NULL`,
        [user.id],
      );
      if (!app) return undefined;
      await tx.exec(`DELETE FROM user_authenticators WHERE user_id = $1 AND type = 'recovery_codes'`, [
        user.id,
      ]);
      return this.insertRecoveryCodes(tx, user, now);
    });
  }

  private async insertRecoveryCodes(
    tx: Sql,
    user: { id: string; instanceId: string },
    now: Date,
  ): Promise<string[]> {
    const id = randomUUID();
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await tx.exec(
      `INSERT INTO user_authenticators (id, instance_id, user_id, type, name, code_hashes, confirmed_at,
                                        created_at, updated_at)
       VALUES ($1, $2, $3, 'recovery_codes', 'Recovery codes', $4::text[], $5, $5, $5)`,
      [id, user.instanceId, user.id, codes.map((c) => recoveryCodeHash(id, c)), now],
    );
    return codes;
  }

  /**
   * Checks a second factor of the user: a TOTP code (its time step must be later than the last one accepted: a
   * code works once) or a recovery code (each once). A wrong or reused one counts against the account's budget;
   * the one that spends it locks second factors for `lockSec`, during which even a right one is 'locked'. A right
   * one clears the count.
   */
  async check(userId: string, kind: Exclude<FactorKind, 'webauthn'>, code: string): Promise<FactorCheck> {
    return this.checkWith(userId, (tx, now) =>
      kind === 'totp'
        ? this.checkTotp(tx, userId, code.trim(), now)
        : this.checkRecovery(tx, userId, code, now),
    );
  }

  /**
   * Runs one second-factor check of the user under the account's budget (the passkeys' assertion too): one at a
   * time per account (an advisory lock), 'locked' while the budget is spent without calling `factor`, a failure
   * counted, a success clearing the count. `factor` answers 'ok' or why not (with what it verified, in `out`).
   */
  async checkWith<R extends string>(
    userId: string,
    factor: (tx: Sql, now: Date) => Promise<'ok' | R>,
  ): Promise<'ok' | 'locked' | R> {
    return this.sql.transaction(async (tx) => {
      const now = this.clock();
      await tx.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`gatehouse:mfa:${userId}`]);
      const budget = await tx.one<{ failed_count: number; window_start: Date; locked: boolean }>(
        `SELECT failed_count, window_start, coalesce(locked_until > $2, false) AS locked
           FROM mfa_failures WHERE user_id = $1`,
        [userId, now],
      );
      if (budget?.locked) return 'locked';
      const result = await factor(tx, now);
      if (result === 'ok') {
        if (budget) await tx.exec(`DELETE FROM mfa_failures WHERE user_id = $1`, [userId]);
        return 'ok';
      }
      const locked = await this.countFailure(tx, userId, budget, now);
      return locked ? 'locked' : result;
    });
  }

  private async checkTotp(tx: Sql, userId: string, code: string, now: Date): Promise<FactorCheck> {
    const rows = await tx.rows<{ id: string; secret_enc: string; last_step: string | null }>(
      /* unscoped: the signing-in user's own rows */
      `SELECT id, secret_enc, last_step FROM user_authenticators
        WHERE user_id = $1 AND type = 'totp' AND confirmed_at IS NOT NULL FOR UPDATE`,
      [userId],
    );
    let reused = false;
    for (const row of rows) {
      const steps = matchingSteps(this.box.decrypt(row.secret_enc, sealedIn.totpSecret(row.id)), code, now);
      const last = row.last_step === null ? -Infinity : Number(row.last_step);
      const fresh = steps.find((s) => s > last);
      if (fresh === undefined) {
        reused ||= steps.length > 0;
        continue;
      }
      await tx.exec(`UPDATE user_authenticators SET last_step = $2, last_used_at = $3 WHERE id = $1`, [
        row.id,
        fresh,
        now,
      ]);
      return 'ok';
    }
    return reused ? 'reused_code' : 'wrong_code';
  }

  private async checkRecovery(tx: Sql, userId: string, code: string, now: Date): Promise<FactorCheck> {
    const rows = await tx.rows<{ id: string }>(
      /* unscoped: the signing-in user's own rows */
      `SELECT id FROM user_authenticators
        WHERE user_id = $1 AND type = 'recovery_codes' AND confirmed_at IS NOT NULL FOR UPDATE`,
      [userId],
    );
    if (!/^[a-z0-9]{16}$/.test(normalizeRecoveryCode(code))) return 'wrong_code';
    for (const row of rows) {
      const hash = recoveryCodeHash(row.id, code);
      // a used code's hash stays, marked `used:`, so a second use is told apart (and refused)
      const used = await tx.exec(
        `UPDATE user_authenticators SET code_hashes = array_replace(code_hashes, $2, $3), last_used_at = $4
          WHERE id = $1 AND $2 = ANY (code_hashes)`,
        [row.id, hash, `${USED}${hash}`, now],
      );
      if (used) return 'ok';
      const again = await tx.one<{ n: number }>(
        `SELECT 1 AS n FROM user_authenticators WHERE id = $1 AND $2 = ANY (code_hashes)`,
        [row.id, `${USED}${hash}`],
      );
      if (again) return 'reused_code';
    }
    return 'wrong_code';
  }

  /** One more wrong factor of the account; true when it spent the budget (the account's factors are now locked). */
  private async countFailure(
    tx: Sql,
    userId: string,
    budget: { failed_count: number; window_start: Date } | undefined,
    now: Date,
  ): Promise<boolean> {
    const { maxFailures, windowSec, lockSec } = this.budget;
    const inWindow = !!budget && now.getTime() - new Date(budget.window_start).getTime() < windowSec * 1000;
    const count = (inWindow ? budget.failed_count : 0) + 1;
    const lock = count >= maxFailures;
    await tx.exec(
      `INSERT INTO mfa_failures AS f (user_id, instance_id, failed_count, window_start, locked_until, updated_at)
       SELECT u.id, u.instance_id, $2, $3, $4, $5 FROM users u WHERE u.id = $1
       ON CONFLICT (user_id) DO UPDATE SET failed_count = $2, window_start = $3, locked_until = $4, updated_at = $5`,
      [
        userId,
        lock ? 0 : count,
        inWindow ? budget.window_start : now,
        lock ? new Date(now.getTime() + lockSec * 1000) : null,
        now,
      ],
    );
    return lock;
  }

  /** Failure rows untouched for a day whose lock is over, enrolments never confirmed, dead challenges. */
  async purge(): Promise<void> {
    await this.sql.exec(`DELETE FROM webauthn_challenges WHERE expires_at < now()`);
    await this.sql.exec(
      `DELETE FROM mfa_failures
        WHERE updated_at < now() - interval '1 day' AND (locked_until IS NULL OR locked_until < now())`,
    );
    await this.sql.exec(
      `DELETE FROM user_authenticators WHERE confirmed_at IS NULL AND created_at < now() - interval '1 day'`,
    );
  }
}
