import { EVENT_TYPES, eventsTable, type EventRow } from '@gatehouse/identity-data';
import { defineVersionedRecord, type VersionedAttribute } from '../common/records.js';

export { EVENT_COLUMNS, type EventRow } from '@gatehouse/identity-data';

/** An event as `GET /logs` answers it (docs/events.md): the row, with `actor` and `record` nested. */
export interface LogRecord {
  id: string;
  type: string;
  outcome: 'success' | 'failure';
  reason: string | null;
  /** The catalogue's meaning of `type` (EVENT_TYPES). */
  description: string | null;
  instance_id: string;
  tenant_id: string | null;
  actor: { type: string; id: string | null; via_client_id: string | null };
  user_id: string | null;
  client_id: string | null;
  record: { type: string; id: string | null } | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

const describe = (type: string): string | null =>
  Object.prototype.hasOwnProperty.call(EVENT_TYPES, type)
    ? EVENT_TYPES[type as keyof typeof EVENT_TYPES]
    : null;

/** The record of a row (key order: the answer's). */
export function logRecord(r: EventRow): LogRecord {
  return {
    id: r.id,
    type: r.type,
    outcome: r.outcome,
    reason: r.reason,
    description: describe(r.type),
    instance_id: r.instance_id,
    tenant_id: r.tenant_id,
    actor: { type: r.actor_type, id: r.actor_id, via_client_id: r.via_client_id },
    user_id: r.user_id,
    client_id: r.client_id,
    record: r.record_type ? { type: r.record_type, id: r.record_id } : null,
    ip: r.ip,
    user_agent: r.user_agent,
    details: r.details ?? {},
    created_at: r.created_at,
  };
}

/**
 * Both presentations answer the same record: document 2 keeps record field names in snake_case (as it does for
 * every other record); only the envelope differs (`totalCount`, `hasMore`). An event has no children.
 */
export const shapeLog = () => (rec: LogRecord) => rec as unknown as Record<string, unknown>;

/** The flat columns `actor` and `record` are made of: `q` filters on them, `fields` names the nested objects. */
const FLAT = { select: false } as const;

export const logSpecs = defineVersionedRecord({
  name: 'log',
  attributes: eventsTable.attributes<VersionedAttribute>({
    actor_type: FLAT,
    actor_id: FLAT,
    via_client_id: FLAT,
    record_type: FLAT,
    record_id: FLAT,
    // keys inside details are the event's, never renamed
    details: { opaque: true },
  }),
  children: { v1: [], v2: [] },
  extraFields: [{ name: 'description' }, { name: 'actor' }, { name: 'record' }],
});
