import { column, Params, Table, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import { eventIdTime } from '../events/writer.js';

/**
 * The `events` table (alias `e`), read by `GET /logs`: rows of an instance, each of at most one tenant. Written by
 * events/writer.ts only; never changed through the API. `seq` and `txid` (log-stream ordering) are not part of
 * the record.
 */
export const eventsTable = new Table({
  name: 'events',
  alias: 'e',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    type: column.text(),
    outcome: column.textOf<'success' | 'failure'>(),
    reason: column.text().nullable(),
    instance_id: column.uuid(),
    tenant_id: column.uuid().nullable(),
    actor_type: column.textOf<'user' | 'client' | 'system' | 'anonymous'>(),
    actor_id: column.text().nullable(),
    via_client_id: column.uuid().nullable(),
    user_id: column.uuid().nullable(),
    client_id: column.uuid().nullable(),
    record_type: column.text().nullable(),
    record_id: column.text().nullable(),
    ip: column.text().nullable(),
    user_agent: column.text().nullable(),
    details: column.json<Record<string, unknown>>(),
    created_at: column.timestamp(),
  },
});

/** An events row as EVENT_COLUMNS reads it (created_at as ISO text). */
export type EventRow = RowOf<typeof eventsTable.columns>;

export const EVENT_COLUMNS = eventsTable.select;

/**
 * The event `id` in the caller's scope, or 404 (unknown, another instance's or tenant's). The id is a UUIDv7 whose
 * first 48 bits are `created_at` in milliseconds: the look-up bounds `created_at` to that millisecond, so it reads
 * one partition. The bounds are a millisecond wide on both sides: `events_uuid7` (rows written in SQL) rounds the
 * microseconds of `created_at`, the writer's ids truncate. An id that is not a UUIDv7 was never an event's: 404
 * without a query.
 */
export async function findEvent(db: Sql, scope: RecordScope, id: string): Promise<EventRow> {
  const at = eventIdTime(id);
  if (!at) throw notFound(`Event ${id} not found`);
  const ms = at.getTime();
  const p = new Params([id.toLowerCase(), new Date(ms - 1).toISOString(), new Date(ms + 1).toISOString()]);
  const [row] = await db.rows<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM ${eventsTable.from}
      WHERE e.id = $1 AND e.created_at BETWEEN $2::timestamptz AND $3::timestamptz
        AND ${eventsTable.where(scope, p)}`,
    p.values,
  );
  if (!row) throw notFound(`Event ${id} not found`);
  return row;
}
