import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `log_streams`: webhooks that receive the audit trail (docs/events.md, "Streams"). The events table is the
 * outbox: a stream keeps a cursor into it, (`cursor_txid`, `cursor_seq`), and a delivery worker reads the events
 * after the cursor in (`txid`, `seq`) order, taking only events whose writing transaction, and every older one,
 * has ended (`txid < pg_snapshot_xmin(pg_current_snapshot())`). An event committed later always has a `txid` at or
 * above that bound, so the cursor never passes an event that is not visible yet: nothing is skipped, and each
 * stream sees one fixed order. The cursor moves only after the receiver answered 2xx (at least once).
 *
 * `ix_events_txid_seq` serves that read.
 */
export class LogStreams1795800000100 implements MigrationInterface {
  name = 'LogStreams1795800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE log_streams (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        tenant_id uuid,
        name text NOT NULL,
        url text NOT NULL,
        event_types text[] NOT NULL DEFAULT '{}',
        secret_enc text NOT NULL,
        status text NOT NULL DEFAULT 'active',
        paused_reason text,
        cursor_txid bigint NOT NULL,
        cursor_seq bigint NOT NULL DEFAULT 0,
        failures integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz,
        last_error text,
        last_delivered_at timestamptz,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_log_streams PRIMARY KEY (id),
        CONSTRAINT uq_log_streams_name UNIQUE (instance_id, name),
        CONSTRAINT ck_log_streams_status CHECK (status IN ('active', 'paused')),
        CONSTRAINT fk_log_streams_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_log_streams_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_log_streams_due ON log_streams (status, next_attempt_at)`);
    await q.query(`CREATE INDEX ix_events_txid_seq ON events (txid, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_events_txid_seq`);
    await q.query(`DROP TABLE log_streams`);
  }
}
