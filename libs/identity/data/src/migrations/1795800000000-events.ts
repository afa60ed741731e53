import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `events`: the audit trail (docs/events.md). One row per sign-in, token, change... written in the transaction of
 * the change it describes (management writes) or by the token server's batched writer (libs/identity/data
 * events/writer.ts).
 *
 * - Partitioned by day on `created_at`, so retention drops whole partitions (`DETACH ... CONCURRENTLY`, then
 *   `DROP`): a purge never deletes row by row and never blocks writes. `events_ensure_partitions(from, days)` makes
 *   the partitions ahead of time (every service start and hourly); no default partition, since a default partition
 *   holding rows of a day would stop that day's partition from being created.
 * - `id` is a UUIDv7 (`events_uuid7`): its first 48 bits are `created_at` in milliseconds, so `GET /logs/:id`
 *   finds the one partition to look in.
 * - `seq` orders events for log streams; `txid` (the writing transaction) lets a stream reader take only events
 *   whose transaction, and every older one, has ended (`txid < pg_snapshot_xmin(pg_current_snapshot())`): a
 *   cursor over `seq` then never skips an event committed late with a smaller `seq`.
 */
export class Events1795800000000 implements MigrationInterface {
  name = 'Events1795800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION events_uuid7(ts timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
        SELECT encode(
          set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                    placing substring(int8send((extract(epoch FROM ts) * 1000)::bigint) FROM 3)
                    FROM 1 FOR 6),
            52, 1), 53, 1),
          'hex')::uuid
      $$`);
    await q.query(`CREATE SEQUENCE events_seq AS bigint`);
    await q.query(`
      CREATE TABLE events (
        id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        seq bigint NOT NULL DEFAULT nextval('events_seq'),
        txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        type text NOT NULL,
        outcome text NOT NULL,
        reason text,
        instance_id uuid NOT NULL,
        tenant_id uuid,
        actor_type text NOT NULL,
        actor_id text,
        via_client_id uuid,
        user_id uuid,
        client_id uuid,
        record_type text,
        record_id text,
        ip text,
        user_agent text,
        details jsonb NOT NULL DEFAULT '{}'::jsonb,
        CONSTRAINT pk_events PRIMARY KEY (id, created_at),
        CONSTRAINT ck_events_outcome CHECK (outcome IN ('success', 'failure')),
        CONSTRAINT ck_events_actor_type CHECK (actor_type IN ('user', 'client', 'system', 'anonymous'))
      ) PARTITION BY RANGE (created_at)`);
    await q.query(`ALTER SEQUENCE events_seq OWNED BY events.seq`);
    await q.query(`CREATE INDEX ix_events_instance_time ON events (instance_id, created_at DESC)`);
    await q.query(
      `CREATE INDEX ix_events_user_time ON events (user_id, created_at DESC) WHERE user_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX ix_events_client_time ON events (client_id, created_at DESC) WHERE client_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX ix_events_type_time ON events (instance_id, type, created_at DESC)`);
    await q.query(`CREATE INDEX ix_events_seq ON events (seq)`);
    // Daily partitions [day, day + 1) in UTC, named events_YYYYMMDD; creation is serialized by an advisory lock so
    // replicas starting together do not race on one name.
    await q.query(`
      CREATE FUNCTION events_ensure_partitions(from_day date, days integer) RETURNS integer
      LANGUAGE plpgsql AS $$
      DECLARE
        d date;
        made integer := 0;
        part text;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('gatehouse.events.partitions'));
        FOR i IN 0 .. days - 1 LOOP
          d := from_day + i;
          part := 'events_' || to_char(d, 'YYYYMMDD');
          IF to_regclass(part) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                           part, d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');
            made := made + 1;
          END IF;
        END LOOP;
        RETURN made;
      END
      $$`);
    // A day before today too: a clock a little behind, or a migration run just before midnight.
    await q.query(`SELECT events_ensure_partitions((now() AT TIME ZONE 'UTC')::date - 1, 9)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE events`);
    await q.query(`DROP FUNCTION events_ensure_partitions(date, integer)`);
    await q.query(`DROP FUNCTION events_uuid7(timestamptz)`);
  }
}
