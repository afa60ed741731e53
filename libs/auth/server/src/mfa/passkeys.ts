import { createHash, randomUUID } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Sql } from '@gatehouse/db';
import { ACR_MFA, ACR_PWD, type SecondFactors } from './second-factors.js';

/** How long a ceremony's challenge lives (the browser's own timeout is one minute less). */
export const CHALLENGE_TTL_SEC = 300;
/** The longest passkey name kept (longer ones are cut). */
export const MAX_PASSKEY_NAME = 100;
/** The passkeys one person may have. */
export const MAX_PASSKEYS = 20;

/** Why a ceremony's answer is refused. */
export type PasskeyFailure =
  /** No live challenge of this binding and purpose (expired, already used, another interaction's). */
  | 'no_challenge'
  /** The assertion names a credential no account has. */
  | 'unknown_credential'
  /** The credential is another user's than the one signing in. */
  | 'wrong_user'
  /** The signature, origin, RP ID, type or flags do not verify. */
  | 'invalid'
  /** The signature counter did not move on: a cloned authenticator, or a replayed assertion. */
  | 'counter'
  /** The account's second-factor budget is spent. */
  | 'locked'
  /** Registration: this credential is already registered. */
  | 'duplicate'
  /** Registration: the person has MAX_PASSKEYS already. */
  | 'too_many';

/** A verified assertion: whose passkey, and what the authenticator said. */
export interface PasskeyUse {
  userId: string;
  authenticatorId: string;
  /** The authenticator verified the user (PIN, biometrics): the key and the verification are two factors. */
  userVerified: boolean;
  /** A synced passkey (backup eligible): amr `swk`; a device-bound one `hwk`. */
  backupEligible: boolean;
}

/** A user's passkey as the account page lists it (never its key). */
export interface PasskeySummary {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/**
 * The `amr` and `acr` of a sign-in that used a passkey (RFC 8176): `hwk` for a device-bound key (`swk` for a synced,
 * backup-eligible one), `user` (the authenticator's user-presence test), and `mfa` when it made the sign-in
 * multi-factor: after a first factor (`first`: the session's amr, a password or a one-time code), or alone when the
 * authenticator verified the user (possession and PIN or biometrics). Multi-factor is the MFA acr.
 */
export function passkeyContext(
  use: Pick<PasskeyUse, 'userVerified' | 'backupEligible'>,
  first: readonly string[] = [],
) {
  const key = use.backupEligible ? 'swk' : 'hwk';
  const firstFactors = first.filter((m) => m !== 'mfa');
  const multi = firstFactors.length > 0 || use.userVerified;
  const amr = [...new Set([...firstFactors, key, 'user', ...(multi ? ['mfa'] : [])])];
  return { amr, acr: multi ? ACR_MFA : ACR_PWD };
}

/** Whether an amr already holds a passkey (the same key cannot be the second factor of its own sign-in). */
export const usedPasskey = (amr: readonly string[] | undefined) =>
  !!amr?.some((m) => m === 'hwk' || m === 'swk');

/** The binding of an account page's ceremony: a hash of its session id (never the id, the cookie's value). */
export const accountBinding = (sessionId: string) =>
  `account:${createHash('sha256').update(sessionId).digest('base64url')}`;

const b64uToText = (s: string) => Buffer.from(s, 'base64url').toString('utf8');

/** The challenge a browser's answer signed (from its clientDataJSON), or undefined when it cannot be read. */
function answeredChallenge(response: { response?: { clientDataJSON?: unknown } }): string | undefined {
  try {
    const data = response.response?.clientDataJSON;
    if (typeof data !== 'string' || data.length > 4096) return undefined;
    const parsed = JSON.parse(b64uToText(data)) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' && parsed.challenge.length <= 128
      ? parsed.challenge
      : undefined;
  } catch {
    return undefined;
  }
}

/** A browser's answer as JSON (the form field the page's script fills), or undefined. */
export function parseCredential<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(
  text: string | undefined,
): T | undefined {
  if (!text || text.length > 16_384) return undefined;
  try {
    const v = JSON.parse(text) as T;
    return v && typeof v === 'object' && typeof v.id === 'string' && typeof v.response === 'object'
      ? v
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * WebAuthn passkeys (@simplewebauthn/server): registration from the account page, assertions on the sign-in pages
 * (a second factor after the password, or a passwordless sign-in with a discoverable credential). The relying
 * party is the issuer: RP ID its host name, expected origin its origin (one issuer serves every instance, so one RP
 * ID). Attestation `none`, user verification preferred, resident keys required. Each ceremony's challenge is a row
 * of `webauthn_challenges`, bound to the interaction or the account session that started it, used once, dead after
 * CHALLENGE_TTL_SEC. An assertion is checked under the account's second-factor budget (SecondFactors.checkWith):
 * failures count, a spent budget refuses even a right one. No key material is logged or answered.
 */
export class Passkeys {
  readonly rpId: string;
  readonly origin: string;

  constructor(
    private readonly sql: Sql,
    issuer: string,
    private readonly factors: SecondFactors,
    /** The name authenticators show for the relying party. */
    private readonly rpName: string = new URL(issuer).hostname,
  ) {
    const url = new URL(issuer);
    this.rpId = url.hostname;
    this.origin = url.origin;
  }

  private now(): Date {
    return this.factors.clock();
  }

  /** The person's passkeys, oldest first. */
  async list(userId: string): Promise<PasskeySummary[]> {
    const rows = await this.sql.rows<{
      id: string;
      name: string;
      created_at: Date;
      last_used_at: Date | null;
    }>(
      /* unscoped: the signed-in user's own rows; never a key */
      `SELECT id, name, created_at, last_used_at FROM user_authenticators
        WHERE user_id = $1 AND type = 'webauthn' AND confirmed_at IS NOT NULL ORDER BY created_at, id`,
      [userId],
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      createdAt: new Date(r.created_at),
      lastUsedAt: r.last_used_at ? new Date(r.last_used_at) : null,
    }));
  }

  private async credentialsOf(userId: string) {
    return this.sql.rows<{ credential_id: string; transports: string[] | null }>(
      /* unscoped: the user's own rows */
      `SELECT credential_id, transports FROM user_authenticators
        WHERE user_id = $1 AND type = 'webauthn' AND credential_id IS NOT NULL`,
      [userId],
    );
  }

  private async putChallenge(
    challenge: string,
    purpose: 'register' | 'authenticate',
    binding: string,
    instanceId: string,
    userId: string | null,
  ): Promise<void> {
    const now = this.now();
    // one live challenge per binding and purpose: a new ceremony ends the last one, so the rows stay bounded
    // however often the options are asked for (one statement: the delete and the insert see the same snapshot)
    await this.sql.exec(
      `WITH ended AS (DELETE FROM webauthn_challenges WHERE binding = $4 AND purpose = $3)
       INSERT INTO webauthn_challenges (challenge, instance_id, purpose, binding, user_id, expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        challenge,
        instanceId,
        purpose,
        binding,
        userId,
        new Date(now.getTime() + CHALLENGE_TTL_SEC * 1000),
        now,
      ],
    );
  }

  /** The live challenge answered, deleted (single use), when it is this binding's and purpose's. */
  private async takeChallenge(
    challenge: string | undefined,
    purpose: 'register' | 'authenticate',
    binding: string,
  ): Promise<{ instance_id: string; user_id: string | null } | undefined> {
    if (!challenge) return undefined;
    return this.sql.one<{ instance_id: string; user_id: string | null }>(
      `DELETE FROM webauthn_challenges
        WHERE challenge = $1 AND purpose = $2 AND binding = $3 AND expires_at > $4
        RETURNING instance_id, user_id`,
      [challenge, purpose, binding, this.now()],
    );
  }

  /** Options of a new passkey for `user` (its passkeys excluded), the challenge bound to `binding`. */
  async registrationOptions(
    user: { id: string; instanceId: string; label: string; name?: string | null },
    binding: string,
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const existing = await this.credentialsOf(user.id);
    const options = await generateRegistrationOptions({
      rpName: this.rpName,
      rpID: this.rpId,
      userName: user.label,
      userDisplayName: user.name ?? user.label,
      userID: new TextEncoder().encode(user.id),
      attestationType: 'none',
      timeout: (CHALLENGE_TTL_SEC - 60) * 1000,
      excludeCredentials: existing.map((c) => ({
        id: c.credential_id,
        transports: (c.transports ?? []) as AuthenticatorTransportFuture[],
      })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    await this.putChallenge(options.challenge, 'register', binding, user.instanceId, user.id);
    return options;
  }

  /**
   * Verifies a registration answer of `user` against the challenge of `binding` (used up whatever the outcome) and
   * stores the passkey under `name`: its id, or why not.
   */
  async register(
    user: { id: string; instanceId: string },
    binding: string,
    response: RegistrationResponseJSON,
    name: string,
  ): Promise<{ id: string } | PasskeyFailure> {
    const challenge = answeredChallenge(response);
    const taken = await this.takeChallenge(challenge, 'register', binding);
    if (!taken || taken.user_id !== user.id) return 'no_challenge';
    let info;
    try {
      const verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: challenge!,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        requireUserVerification: false,
      });
      if (!verified.verified) return 'invalid';
      info = verified.registrationInfo;
    } catch {
      return 'invalid';
    }
    const now = this.now();
    const id = randomUUID();
    const label = name.trim().slice(0, MAX_PASSKEY_NAME) || 'Passkey';
    const transports = (response.response.transports ?? []).filter((t) => /^[a-z-]{1,20}$/.test(t));
    try {
      return await this.sql.transaction(async (tx) => {
        await tx.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`gatehouse:mfa:${user.id}`]);
        const count = await tx.one<{ n: number }>(
          `SELECT count(*)::int AS n FROM user_authenticators WHERE user_id = $1 AND type = 'webauthn'`,
          [user.id],
        );
        if ((count?.n ?? 0) >= MAX_PASSKEYS) return 'too_many' as const;
        await tx.exec(
          `INSERT INTO user_authenticators (id, instance_id, user_id, type, name, credential_id, public_key, sign_count,
                                            transports, backup_eligible, confirmed_at, created_at, updated_at)
           VALUES ($1, $2, $3, 'webauthn', $4, $5, $6, $7, $8::text[], $9, $10, $10, $10)`,
          [
            id,
            user.instanceId,
            user.id,
            label,
            info.credential.id,
            Buffer.from(info.credential.publicKey).toString('base64url'),
            info.credential.counter,
            transports,
            info.credentialDeviceType === 'multiDevice',
            now,
          ],
        );
        return { id };
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return 'duplicate';
      throw err;
    }
  }

  /**
   * Options of an assertion, the challenge bound to `binding`: for `userId`'s passkeys (a second factor), or for
   * any discoverable credential (`userId` undefined: a passwordless sign-in, the authenticator offers its own).
   */
  async authenticationOptions(
    instanceId: string,
    binding: string,
    userId?: string,
  ): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const allow = userId ? await this.credentialsOf(userId) : [];
    const options = await generateAuthenticationOptions({
      rpID: this.rpId,
      timeout: (CHALLENGE_TTL_SEC - 60) * 1000,
      userVerification: 'preferred',
      allowCredentials: allow.map((c) => ({
        id: c.credential_id,
        transports: (c.transports ?? []) as AuthenticatorTransportFuture[],
      })),
    });
    await this.putChallenge(options.challenge, 'authenticate', binding, instanceId, userId ?? null);
    return options;
  }

  /**
   * Verifies an assertion against the challenge of `binding` (used up whatever the outcome). `expectedUserId`: the
   * user signing in (second factor), whose passkey it must be; undefined: a passwordless sign-in, the credential's
   * owner (in `instanceId`). Once the user is known, the check runs under that account's second-factor budget: a
   * failure counts (`userId` says whose), a spent budget is 'locked'.
   */
  async authenticate(
    instanceId: string,
    binding: string,
    response: AuthenticationResponseJSON,
    expectedUserId?: string,
  ): Promise<{ ok: true; use: PasskeyUse } | { ok: false; reason: PasskeyFailure; userId?: string }> {
    const challenge = answeredChallenge(response);
    const taken = await this.takeChallenge(challenge, 'authenticate', binding);
    const credentialId = typeof response.id === 'string' && response.id.length <= 1400 ? response.id : '';
    const cred = await this.sql.one<{
      id: string;
      user_id: string;
      instance_id: string;
      public_key: string;
      sign_count: string | null;
      transports: string[] | null;
    }>(
      /* unscoped: a credential is found by its id, then held to the instance and user signing in */
      `SELECT id, user_id, instance_id, public_key, sign_count, transports FROM user_authenticators
        WHERE credential_id = $1 AND type = 'webauthn' AND confirmed_at IS NOT NULL`,
      [credentialId],
    );
    const owner = cred && cred.instance_id === instanceId ? cred : undefined;
    const userId = expectedUserId ?? owner?.user_id;
    if (!userId) return { ok: false, reason: taken ? 'unknown_credential' : 'no_challenge' };
    let use: PasskeyUse | undefined;
    const result = await this.factors.checkWith<PasskeyFailure>(userId, async (tx, now) => {
      if (!taken || taken.instance_id !== instanceId) return 'no_challenge';
      if (taken.user_id && taken.user_id !== userId) return 'wrong_user';
      if (!owner) return 'unknown_credential';
      if (owner.user_id !== userId) return 'wrong_user';
      const handle = response.response?.userHandle;
      if (handle && b64uToText(handle) !== owner.user_id) return 'wrong_user';
      let info;
      try {
        const verified = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge!,
          expectedOrigin: this.origin,
          expectedRPID: this.rpId,
          requireUserVerification: false,
          credential: {
            id: credentialId,
            publicKey: new Uint8Array(Buffer.from(owner.public_key, 'base64url')),
            counter: Number(owner.sign_count ?? 0),
            transports: (owner.transports ?? []) as AuthenticatorTransportFuture[],
          },
        });
        if (!verified.verified) return 'invalid';
        info = verified.authenticationInfo;
      } catch (err) {
        return /counter/i.test((err as Error).message) ? 'counter' : 'invalid';
      }
      // the counter moves on under the account's lock; a concurrent use of the same value loses here
      const moved = await tx.exec(
        `UPDATE user_authenticators SET sign_count = $2, last_used_at = $3, backup_eligible = $4
          WHERE id = $1 AND coalesce(sign_count, 0) = $5`,
        [
          owner.id,
          info.newCounter,
          now,
          info.credentialDeviceType === 'multiDevice',
          Number(owner.sign_count ?? 0),
        ],
      );
      if (!moved) return 'counter';
      use = {
        userId,
        authenticatorId: owner.id,
        userVerified: info.userVerified,
        backupEligible: info.credentialDeviceType === 'multiDevice',
      };
      return 'ok';
    });
    if (result === 'ok' && use) return { ok: true, use };
    return { ok: false, reason: result === 'ok' ? 'invalid' : result, userId };
  }

  /** Renames one passkey of the user (true when it is theirs). */
  async rename(userId: string, id: string, name: string): Promise<boolean> {
    const label = name.trim().slice(0, MAX_PASSKEY_NAME);
    if (!label || !/^[0-9a-f-]{36}$/i.test(id)) return false;
    return (
      (await this.sql.exec(
        `UPDATE user_authenticators SET name = $3, updated_at = $4 WHERE id = $1 AND user_id = $2 AND type = 'webauthn'`,
        [id, userId, label, this.now()],
      )) > 0
    );
  }

  /** Removes one passkey of the user, in `tx`: its name, when it was theirs. */
  async remove(tx: Sql, userId: string, id: string): Promise<string | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const row = await tx.one<{ name: string }>(
      `DELETE FROM user_authenticators WHERE id = $1 AND user_id = $2 AND type = 'webauthn' RETURNING name`,
      [id, userId],
    );
    return row?.name;
  }
}
