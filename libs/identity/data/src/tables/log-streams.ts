import { column, Params, Table, type FullRowOf, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';

/**
 * The `log_streams` table (alias `ls`): webhooks of an instance that receive its events; one with a `tenant_id`
 * receives only that tenant's, and a restricted caller reaches only its tenant's streams. Its columns, declared
 * once: LogStreamRow, LOG_STREAM_COLUMNS, the list spec and the record (apps/identity log-streams) derive from them.
 * The cursor, lease and secret are the delivery worker's (below), never answered.
 */
export const logStreamsTable = new Table({
  name: 'log_streams',
  alias: 'ls',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    tenant_id: column.uuid().nullable(),
    name: column.text(),
    url: column.text(),
    event_types: column.json<string[]>(),
    status: column.text(),
    paused_reason: column.text().nullable(),
    failures: column.integer(),
    next_attempt_at: column.timestamp(),
    last_error: column.text().nullable(),
    last_delivered_at: column.timestamp().nullable(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
    /** The sealed signing secret: read only by the delivery worker. */
    secret_enc: column.text().hiddenColumn(),
  },
});

export type LogStreamRow = RowOf<typeof logStreamsTable.columns>;

export const LOG_STREAM_COLUMNS = logStreamsTable.select;

export const LOG_STREAM_CONFLICTS = {
  uq_log_streams_name: 'A log stream with this name already exists in the instance',
};

/** The log stream `id` in the caller's scope, or 404. */
export async function findLogStream(
  db: Sql,
  scope: RecordScope,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<LogStreamRow> {
  const p = new Params([id]);
  const [row] = await db.rows<LogStreamRow>(
    `SELECT ${LOG_STREAM_COLUMNS} FROM ${logStreamsTable.from}
      WHERE ls.id = $1 AND ${logStreamsTable.where(scope, p)}${opts.lock ? ' FOR UPDATE OF ls' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`Log stream ${id} not found`);
  return row;
}

/** A stream as the delivery worker holds it while it has the lease. */
export type DueLogStream = Pick<
  FullRowOf<typeof logStreamsTable.columns>,
  'id' | 'instance_id' | 'tenant_id' | 'url' | 'event_types' | 'secret_enc' | 'failures'
> & { cursor_txid: string; cursor_seq: string };

/**
 * Leases up to `limit` active streams that are due (their next attempt has come, no live lease) for `leaseMs`;
 * replicas running the worker at once never lease one stream twice (`SKIP LOCKED`), and a stream whose worker died
 * is leased again once its lease ran out. Every instance's: the worker serves them all.
 */
export async function leaseDueLogStreams(db: Sql, limit: number, leaseMs: number): Promise<DueLogStream[]> {
  return db.rows<DueLogStream>(
    `UPDATE log_streams s SET lease_until = now() + make_interval(secs => $2::double precision / 1000)
       FROM (SELECT id FROM log_streams
              WHERE status = 'active' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
              ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED) due
      WHERE s.id = due.id
      RETURNING s.id, s.instance_id, s.tenant_id, s.url, to_jsonb(s.event_types) AS event_types, s.secret_enc,
                s.failures, s.cursor_txid::text AS cursor_txid, s.cursor_seq::text AS cursor_seq`,
    [limit, leaseMs],
  );
}

/** An event as a stream delivers it (and its position, to move the cursor past it). */
export interface StreamedEvent {
  id: string;
  type: string;
  outcome: string;
  reason: string | null;
  instance_id: string;
  tenant_id: string | null;
  actor: { type: string; id: string | null; via_client_id: string | null };
  user_id: string | null;
  client_id: string | null;
  record: { type: string; id: string } | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
  created_at: string;
  txid: string;
  seq: string;
}

/**
 * The next events of `stream` after its cursor, oldest first, at most `limit`: of its instance (and tenant), of its
 * types (none listed: all), and only those whose writing transaction and every older one of this database have
 * ended, so a later read can never find an event before the cursor. `horizon` is where the cursor may move when no event of the
 * stream is left before it (past every finished transaction's events), so the next read starts there.
 */
export async function nextStreamEvents(
  db: Sql,
  stream: DueLogStream,
  limit: number,
): Promise<{ events: StreamedEvent[]; horizon: string }> {
  // Transactions of OTHER databases of the server, read BEFORE the snapshot below: they cannot write our events,
  // so a long one (a bulk import next door) does not hold deliveries back. A transaction missing from this list is
  // taken as ours (one that started after this read, or a prepared one): it can only hold back, never skip.
  const [others] = await db.rows<{ xids: string[] }>(
    `SELECT coalesce(array_agg(backend_xid::text), '{}') AS xids FROM pg_stat_activity
      WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM current_database()`,
  );
  // One statement, so the events and the horizon come from one snapshot: an event committed between two
  // statements could otherwise fall below a horizon read after it without ever having been read. The horizon is the
  // oldest transaction of this database still running at the snapshot (else the snapshot's xmax): every event
  // below it that will ever commit is visible now.
  const [r] = await db.rows<{ horizon: string; events: StreamedEvent[] }>(
    `WITH s AS (SELECT pg_current_snapshot() AS snap),
     h AS (SELECT coalesce((SELECT min(x) FROM pg_snapshot_xip(s.snap) x
                             WHERE (x::xid)::text <> ALL($7::text[])),
                           pg_snapshot_xmax(s.snap)) AS xmin
             FROM s),
     ev AS (
       SELECT e.id, e.type, e.outcome, e.reason, e.instance_id, e.tenant_id,
              jsonb_build_object('type', e.actor_type, 'id', e.actor_id, 'via_client_id', e.via_client_id) AS actor,
              e.user_id, e.client_id,
              CASE WHEN e.record_type IS NULL THEN NULL
                   ELSE jsonb_build_object('type', e.record_type, 'id', e.record_id) END AS record,
              e.ip, e.user_agent, e.details, e.created_at, e.txid::text AS txid, e.seq::text AS seq,
              e.txid AS order_txid, e.seq AS order_seq
         FROM events e, h
        WHERE e.txid < h.xmin
          AND (e.txid, e.seq) > ($1::text::xid8, $2::bigint)
          AND e.instance_id = $3
          AND ($4::uuid IS NULL OR e.tenant_id = $4)
          AND (cardinality($5::text[]) = 0 OR e.type = ANY($5::text[]))
        ORDER BY e.txid, e.seq
        LIMIT $6)
     SELECT h.xmin::text AS horizon,
            COALESCE((SELECT jsonb_agg(to_jsonb(ev) - 'order_txid' - 'order_seq' ORDER BY ev.order_txid, ev.order_seq)
                        FROM ev), '[]'::jsonb) AS events
       FROM h`,
    [
      stream.cursor_txid,
      stream.cursor_seq,
      stream.instance_id,
      stream.tenant_id,
      stream.event_types,
      limit,
      others.xids,
    ],
  );
  return { events: r.events, horizon: r.horizon };
}

/**
 * After a 2xx: the cursor moves past the last event delivered (or, when the read found fewer than it asked for,
 * to the horizon: every event of a finished transaction before it has been seen) and the failures are forgotten.
 * The lease ends, or with `keepLeaseMs` is renewed for the next batch. A stream changed meanwhile (paused,
 * deleted) keeps its state; the cursor still moves.
 */
export async function markStreamDelivered(
  db: Sql,
  id: string,
  cursor: { txid: string; seq: string },
  delivered: number,
  keepLeaseMs?: number,
): Promise<void> {
  await db.exec(
    `UPDATE log_streams
        SET cursor_txid = $2::bigint, cursor_seq = $3::bigint, failures = 0, last_error = NULL,
            lease_until = CASE WHEN $5::double precision IS NULL THEN NULL
                               ELSE now() + make_interval(secs => $5::double precision / 1000) END,
            next_attempt_at = now(), last_delivered_at = CASE WHEN $4 > 0 THEN now() ELSE last_delivered_at END
      WHERE id = $1`,
    [id, cursor.txid, cursor.seq, delivered, keepLeaseMs ?? null],
  );
}

/**
 * After a failure: the next attempt waits `delayMs`; the `pauseAfter`-th failure in a row pauses the stream with
 * the reason. The cursor stays: the same events are sent again, in the same order.
 */
export async function markStreamFailed(
  db: Sql,
  id: string,
  error: string,
  delayMs: number,
  pauseAfter: number,
): Promise<{ failures: number; paused: boolean }> {
  const [r] = await db.rows<{ failures: number; paused: boolean }>(
    `UPDATE log_streams
        SET failures = failures + 1, last_error = $2, lease_until = NULL,
            next_attempt_at = now() + make_interval(secs => $3::double precision / 1000),
            status = CASE WHEN failures + 1 >= $4 THEN 'paused' ELSE status END,
            paused_reason = CASE WHEN failures + 1 >= $4
                                 THEN 'paused after ' || (failures + 1) || ' failed deliveries in a row: ' || $2
                                 ELSE paused_reason END
      WHERE id = $1
      RETURNING failures, status = 'paused' AS paused`,
    [id, error.slice(0, 500), delayMs, pauseAfter],
  );
  return r ?? { failures: 0, paused: false };
}
