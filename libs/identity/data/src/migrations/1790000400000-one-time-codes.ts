import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One-time codes of passwordless sign-in: a 6-digit code sent by e-mail or SMS, or a link token, kept only
 * as a keyed hash, valid minutes, for one client, at most 5 attempts, used once; `params` keeps the authorization
 * request a link signs in to.
 */
export class OneTimeCodes1790000400000 implements MigrationInterface {
  name = 'OneTimeCodes1790000400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE one_time_codes (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        user_id uuid NOT NULL,
        client_id uuid NOT NULL,
        channel text NOT NULL,
        code_hash text NOT NULL,
        scope text,
        params jsonb,
        attempts integer NOT NULL DEFAULT 0,
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_one_time_codes PRIMARY KEY (id),
        CONSTRAINT fk_one_time_codes_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_one_time_codes_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT fk_one_time_codes_client FOREIGN KEY (client_id) REFERENCES clients (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_one_time_codes_user_client ON one_time_codes (user_id, client_id)`);
    await q.query(`CREATE INDEX ix_one_time_codes_expires ON one_time_codes (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE one_time_codes`);
  }
}
