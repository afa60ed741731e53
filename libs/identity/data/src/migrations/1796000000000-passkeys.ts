import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Passkeys (WebAuthn, issue 29): `user_authenticators` rows of type `webauthn`, and the ceremonies' challenges.
 *
 * - On `user_authenticators`, for a `webauthn` row: `credential_id` (base64url, unique across the server: an
 *   assertion names its credential, and a credential belongs to one row), `public_key` (the COSE public key,
 *   base64url), `sign_count` (the authenticator's signature counter: an assertion whose counter does not move on
 *   is refused, a cloned key shows that way), `transports` (what the browser reported, handed back in the next
 *   ceremony's `allowCredentials`), `backup_eligible` (a synced passkey: amr `swk`, else `hwk`). `name`,
 *   `created_at` and `last_used_at` are the columns every authenticator has. None of them is a secret, but only the
 *   token server reads them: they are hidden columns of the management records.
 * - `webauthn_challenges`: one row per ceremony started (registration on the account page, assertion on the sign-in
 *   pages), bound to what started it (`binding`: the interaction's uid, or a hash of the account page's session),
 *   deleted by the one request that answers it (single use) and dead after `expires_at` (short-lived); a new
 *   ceremony of the same binding and purpose ends the last one (one live challenge each).
 */
export class Passkeys1796000000000 implements MigrationInterface {
  name = 'Passkeys1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE user_authenticators
         ADD COLUMN credential_id text,
         ADD COLUMN public_key text,
         ADD COLUMN sign_count bigint,
         ADD COLUMN transports text[],
         ADD COLUMN backup_eligible boolean`,
    );
    await q.query(
      `CREATE UNIQUE INDEX ux_user_authenticators_credential ON user_authenticators (credential_id)
        WHERE credential_id IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE webauthn_challenges (
        challenge text NOT NULL,
        instance_id uuid NOT NULL,
        purpose text NOT NULL,
        binding text NOT NULL,
        user_id uuid,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_webauthn_challenges PRIMARY KEY (challenge),
        CONSTRAINT ck_webauthn_challenges_purpose CHECK (purpose IN ('register', 'authenticate')),
        CONSTRAINT fk_webauthn_challenges_instance FOREIGN KEY (instance_id) REFERENCES instances (id) ON DELETE CASCADE,
        CONSTRAINT fk_webauthn_challenges_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_webauthn_challenges_expires ON webauthn_challenges (expires_at)`);
    await q.query(`CREATE INDEX ix_webauthn_challenges_binding ON webauthn_challenges (binding, purpose)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webauthn_challenges`);
    await q.query(`DELETE FROM user_authenticators WHERE type = 'webauthn'`);
    await q.query(`DROP INDEX ux_user_authenticators_credential`);
    await q.query(
      `ALTER TABLE user_authenticators DROP COLUMN credential_id, DROP COLUMN public_key, DROP COLUMN sign_count,
         DROP COLUMN transports, DROP COLUMN backup_eligible`,
    );
  }
}
