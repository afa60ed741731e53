import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * - `delivery_outbox`: the messages Gatehouse sends (e-mail, SMS), queued in the transaction that decides them and
 *   delivered after the answer by a worker of the sending service (`queue`), with retries and back-off
 *   (libs/identity/delivery). `payload` (subject, text, html: one-time codes and links) is dropped once the row is
 *   delivered or given up; such rows are deleted after a retention period.
 * - `signup_counters`: sign-ups counted per window (per source address and hour, per instance and minute), shared by
 *   every replica of the token server; expired windows are purged.
 */
export class DeliveryOutbox1795706191082 implements MigrationInterface {
  name = 'DeliveryOutbox1795706191082';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE delivery_outbox (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        queue text NOT NULL,
        channel text NOT NULL,
        kind text NOT NULL,
        recipient text NOT NULL,
        payload jsonb,
        status text NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        CONSTRAINT pk_delivery_outbox PRIMARY KEY (id)
      )`);
    await q.query(`CREATE INDEX ix_delivery_outbox_due ON delivery_outbox (queue, status, next_attempt_at)`);
    await q.query(`CREATE INDEX ix_delivery_outbox_finished ON delivery_outbox (finished_at)`);
    await q.query(`
      CREATE TABLE signup_counters (
        bucket text NOT NULL,
        window_start timestamptz NOT NULL,
        window_end timestamptz NOT NULL,
        count integer NOT NULL DEFAULT 0,
        CONSTRAINT pk_signup_counters PRIMARY KEY (bucket, window_start)
      )`);
    await q.query(`CREATE INDEX ix_signup_counters_window_end ON signup_counters (window_end)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE signup_counters`);
    await q.query(`DROP TABLE delivery_outbox`);
  }
}
