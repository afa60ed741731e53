import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tickets: single-use links to a page of the token server that sets a user's password
 * (`password_change`, also the invitation's link) or verifies its e-mail (`email_verification`). Only a keyed hash
 * of the link's token is kept (HMAC-SHA256 with a key derived from SECRET_ENCRYPTION_KEY), never the token.
 * `user_email` is the address the ticket was made for: it verifies that address only, not one set later.
 * `used_at` is set once, by the `UPDATE ... WHERE used_at IS NULL AND expires_at > now()` that redeems it.
 */
export class Tickets1790000520000 implements MigrationInterface {
  name = 'Tickets1790000520000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tickets (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        user_id uuid NOT NULL,
        kind text NOT NULL,
        token_hash text NOT NULL,
        client_id uuid,
        result_url text,
        user_email text,
        mark_email_verified boolean NOT NULL DEFAULT false,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_tickets PRIMARY KEY (id),
        CONSTRAINT fk_tickets_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_tickets_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT fk_tickets_client FOREIGN KEY (client_id) REFERENCES clients (id) ON DELETE SET NULL
      )`);
    await q.query(`CREATE UNIQUE INDEX ux_tickets_token_hash ON tickets (token_hash)`);
    await q.query(`CREATE INDEX ix_tickets_user ON tickets (user_id)`);
    await q.query(`CREATE INDEX ix_tickets_client ON tickets (client_id)`);
    await q.query(`CREATE INDEX ix_tickets_expires ON tickets (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tickets`);
  }
}
