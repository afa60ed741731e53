import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Second factors (issue 29): a user's authenticators, the second-factor failure budget and the MFA policy.
 *
 * - `user_authenticators`: one row per authenticator of a user (type `totp` or `recovery_codes`; `webauthn` is kept
 *   for passkeys). A TOTP row holds its secret sealed with the SecretBox (`secret_enc`, bound to the row) and the
 *   last time step it accepted (`last_step`: a code, i.e. a step, is accepted once). A recovery-codes row holds the
 *   SHA-256 of each code (`code_hashes`, over the row id and the code); a used code's hash is marked `used:` in one
 *   UPDATE, so it works once even when two requests race, and a second use is told apart from a wrong code. `confirmed_at` is null while an enrolment waits for
 *   its first code. Rows go with their user.
 * - `mfa_failures`: wrong second factors of an account in the current window, and the lock the budget sets
 *   (the one-time codes' `otp_failures` shape, without the back-off).
 * - `mfa` on instances, tenants and clients: `off`, `optional` or `required`; null inherits. The effective policy
 *   of a sign-in is the client's, else the user's tenant's, else the instance's, else `optional`.
 */
export class Mfa1795900000000 implements MigrationInterface {
  name = 'Mfa1795900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE user_authenticators (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        user_id uuid NOT NULL,
        type text NOT NULL,
        name text NOT NULL,
        secret_enc text,
        last_step bigint,
        code_hashes text[],
        confirmed_at timestamptz,
        last_used_at timestamptz,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_user_authenticators PRIMARY KEY (id),
        CONSTRAINT ck_user_authenticators_type CHECK (type IN ('totp', 'recovery_codes', 'webauthn')),
        CONSTRAINT fk_user_authenticators_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_user_authenticators_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_user_authenticators_user ON user_authenticators (user_id)`);
    await q.query(`
      CREATE TABLE mfa_failures (
        user_id uuid NOT NULL,
        instance_id uuid NOT NULL,
        failed_count integer NOT NULL DEFAULT 0,
        window_start timestamptz NOT NULL DEFAULT now(),
        locked_until timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_mfa_failures PRIMARY KEY (user_id),
        CONSTRAINT fk_mfa_failures_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT fk_mfa_failures_instance FOREIGN KEY (instance_id) REFERENCES instances (id)
      )`);
    await q.query(`CREATE INDEX ix_mfa_failures_updated ON mfa_failures (updated_at)`);
    for (const table of ['instances', 'tenants', 'clients']) {
      await q.query(
        `ALTER TABLE ${table} ADD COLUMN mfa text,
           ADD CONSTRAINT ck_${table}_mfa CHECK (mfa IN ('off', 'optional', 'required'))`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['clients', 'tenants', 'instances']) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ck_${table}_mfa, DROP COLUMN mfa`);
    }
    await q.query(`DROP TABLE mfa_failures`);
    await q.query(`DROP TABLE user_authenticators`);
  }
}
