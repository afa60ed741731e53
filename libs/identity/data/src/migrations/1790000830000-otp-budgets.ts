import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Budgets of passwordless sign-in, shared by every token-server replica: `otp_failures` counts wrong one-time codes
 * per account across codes (and the lock they set, with its back-off level); `otp_sends` counts the messages sent
 * per account and per destination (a keyed hash of the address, so no address is stored here), for the issuance
 * limits.
 */
export class OtpBudgets1790000830000 implements MigrationInterface {
  name = 'OtpBudgets1790000830000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE otp_failures (
        user_id uuid NOT NULL,
        instance_id uuid NOT NULL,
        failed_count integer NOT NULL DEFAULT 0,
        window_start timestamptz NOT NULL DEFAULT now(),
        locked_until timestamptz,
        lock_count integer NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_otp_failures PRIMARY KEY (user_id),
        CONSTRAINT fk_otp_failures_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT fk_otp_failures_instance FOREIGN KEY (instance_id) REFERENCES instances (id)
      )`);
    await q.query(`CREATE INDEX ix_otp_failures_updated ON otp_failures (updated_at)`);
    await q.query(`
      CREATE TABLE otp_sends (
        send_key text NOT NULL,
        hour_start timestamptz NOT NULL,
        hour_count integer NOT NULL DEFAULT 0,
        last_sent_at timestamptz NOT NULL,
        CONSTRAINT pk_otp_sends PRIMARY KEY (send_key)
      )`);
    await q.query(`CREATE INDEX ix_otp_sends_last ON otp_sends (last_sent_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE otp_sends`);
    await q.query(`DROP TABLE otp_failures`);
  }
}
