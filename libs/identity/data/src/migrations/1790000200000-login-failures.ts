import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failed password logins per user and source address (lockout keyed by account and address, so that
 * failing on purpose from one address cannot lock a user out everywhere). The per-user columns of `users`
 * (`failed_login_count`, `locked_until`) no longer lock anyone; they stay for the records that show them.
 */
export class LoginFailures1790000200000 implements MigrationInterface {
  name = 'LoginFailures1790000200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE login_failures (
        user_id uuid NOT NULL,
        source text NOT NULL,
        instance_id uuid NOT NULL,
        failed_count integer NOT NULL DEFAULT 0,
        locked_until timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_login_failures PRIMARY KEY (user_id, source),
        CONSTRAINT fk_login_failures_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT fk_login_failures_instance FOREIGN KEY (instance_id) REFERENCES instances (id)
      )`);
    await q.query(`CREATE INDEX ix_login_failures_updated ON login_failures (updated_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE login_failures`);
  }
}
