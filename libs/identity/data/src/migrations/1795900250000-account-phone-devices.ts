import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The account pages (issue 29): a phone number's verification code and the devices of the sessions.
 *
 * - `one_time_codes.client_id` may be null: a code the account page sends to a new phone number (channel
 *   `phone_verification`, the number in `params.phone`) belongs to the person, not to a client.
 * - `session_devices`: what a session's browser looked like (user agent, source address) and when it was last
 *   used, by the session's public uid (never its id, the cookie's value). Written at each successful
 *   authorization through the session (the sign-in among them) and at each visit of the account page; a row whose
 *   session is gone is purged by the token server's housekeeping. Rows go with their user.
 */
export class AccountPhoneDevices1795900250000 implements MigrationInterface {
  name = 'AccountPhoneDevices1795900250000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE one_time_codes ALTER COLUMN client_id DROP NOT NULL`);
    await q.query(`
      CREATE TABLE session_devices (
        session_uid text NOT NULL,
        instance_id uuid NOT NULL,
        user_id uuid NOT NULL,
        user_agent text,
        ip text,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_session_devices PRIMARY KEY (session_uid),
        CONSTRAINT fk_session_devices_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_session_devices_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_session_devices_user ON session_devices (user_id)`);
    await q.query(`CREATE INDEX ix_session_devices_last_seen ON session_devices (last_seen_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE session_devices`);
    await q.query(`DELETE FROM one_time_codes WHERE client_id IS NULL`);
    await q.query(`ALTER TABLE one_time_codes ALTER COLUMN client_id SET NOT NULL`);
  }
}
