import { randomUUID } from 'node:crypto';
import type { Sql } from '@gatehouse/db';
import { defaultOutcome, type EventOutcome, type EventType } from './catalogue.js';

/** Who did it: a user (signed in through `viaClientId`), a client on its own, Gatehouse itself, or nobody known. */
export interface EventActor {
  type: 'user' | 'client' | 'system' | 'anonymous';
  id?: string | null;
  viaClientId?: string | null;
}

/** One event as its writer gives it; docs/events.md says what each field holds. */
export interface EventInput {
  type: EventType;
  /** Default: the type's (`defaultOutcome`). */
  outcome?: EventOutcome;
  /** A reason code (e.g. `wrong_password`, an OAuth error), never free text with a secret in it. */
  reason?: string | null;
  instanceId: string;
  tenantId?: string | null;
  actor?: EventActor;
  /** The user the event is about (the one signing in, the one changed). */
  userId?: string | null;
  /** The client the event is about or came through. */
  clientId?: string | null;
  record?: { type: string; id: string } | null;
  ip?: string | null;
  userAgent?: string | null;
  /** Event-specific fields (grant_type, changes, upstream_issuer...). Never a secret, a token or a hash. */
  details?: Record<string, unknown>;
  /** Default: now. */
  at?: Date;
}

/** A UUIDv7 (RFC 9562) for `at`: the partition of an event can be found from its id. */
export function eventId(at: Date = new Date()): string {
  // randomUUID draws from a cached entropy pool (randomBytes(16) per event asks OpenSSL each time): its text with
  // the first 48 bits replaced by the time and the version nibble set to 7; the variant bits are already 10.
  const ms = at.getTime().toString(16).padStart(12, '0');
  const r = randomUUID();
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${r.slice(15)}`;
}

/** The instant a UUIDv7 event id was made at (its first 48 bits), or undefined for any other id. */
export function eventIdTime(id: string): Date | undefined {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id)) return undefined;
  return new Date(parseInt(id.slice(0, 8) + id.slice(9, 13), 16));
}

const COLUMNS = [
  'id',
  'created_at',
  'type',
  'outcome',
  'reason',
  'instance_id',
  'tenant_id',
  'actor_type',
  'actor_id',
  'via_client_id',
  'user_id',
  'client_id',
  'record_type',
  'record_id',
  'ip',
  'user_agent',
  'details',
] as const;
const TYPES = [
  'uuid',
  'timestamptz',
  'text',
  'text',
  'text',
  'uuid',
  'uuid',
  'text',
  'text',
  'uuid',
  'uuid',
  'uuid',
  'text',
  'text',
  'text',
  'text',
  'jsonb',
];

/** One INSERT for any number of events (one array parameter per column), on `sql` (a transaction or the pool). */
export const INSERT_EVENTS = `INSERT INTO events (${COLUMNS.join(', ')})
  SELECT * FROM unnest(${TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;

/** The column arrays of `events` for INSERT_EVENTS. */
export function eventParams(events: readonly EventInput[]): unknown[][] {
  const cols: unknown[][] = COLUMNS.map(() => new Array<unknown>(events.length));
  events.forEach((e, i) => {
    const at = e.at ?? new Date();
    const actor = e.actor ?? { type: 'anonymous' as const };
    const row = [
      eventId(at),
      at,
      e.type,
      e.outcome ?? defaultOutcome(e.type),
      e.reason ?? null,
      e.instanceId,
      e.tenantId ?? null,
      actor.type,
      actor.id ?? null,
      actor.viaClientId ?? null,
      e.userId ?? null,
      e.clientId ?? null,
      e.record?.type ?? null,
      e.record?.id ?? null,
      e.ip ?? null,
      e.userAgent ? e.userAgent.slice(0, 512) : null,
      JSON.stringify(e.details ?? {}),
    ];
    for (let c = 0; c < row.length; c++) cols[c][i] = row[c];
  });
  return cols;
}

/**
 * Writes `events` on `sql`: inside a transaction they commit or roll back with it (a management write that fails
 * writes no event).
 */
export async function insertEvents(sql: Sql, events: readonly EventInput[]): Promise<void> {
  if (events.length) await sql.exec(INSERT_EVENTS, eventParams(events));
}

/** Today (UTC) as the partition function takes it. */
function utcDay(d = new Date()): string {
  return d.toISOString().slice(0, 10);
}

/** Makes the daily partitions from yesterday to `daysAhead` days ahead (idempotent; replicas may call it together). */
export async function ensureEventPartitions(sql: Sql, daysAhead = 7): Promise<number> {
  const [r] = await sql.rows<{ made: number }>(`SELECT events_ensure_partitions($1::date - 1, $2) AS made`, [
    utcDay(),
    daysAhead + 2,
  ]);
  return r.made;
}

/**
 * Drops the partitions whose whole day is older than `retentionDays` (UTC). Each is detached CONCURRENTLY (writers
 * to other partitions never wait) and then dropped. Must run outside a transaction (`sql` is the pool).
 */
export async function purgeEventPartitions(sql: Sql, retentionDays: number): Promise<string[]> {
  if (!Number.isInteger(retentionDays) || retentionDays < 1) {
    throw new Error(`retention days must be a positive integer, got ${retentionDays}`);
  }
  const cutoff = new Date(Date.now() - retentionDays * 86_400_000);
  const old = await sql.rows<{ name: string }>(
    `SELECT c.relname AS name
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'events'::regclass AND c.relname ~ '^events_[0-9]{8}$'
        AND to_date(substring(c.relname FROM 8), 'YYYYMMDD') + 1 <= $1::date
      ORDER BY c.relname`,
    [utcDay(cutoff)],
  );
  for (const { name } of old) {
    await sql.exec(`ALTER TABLE events DETACH PARTITION "${name}" CONCURRENTLY`);
    await sql.exec(`DROP TABLE "${name}"`);
  }
  return old.map((o) => o.name);
}

export interface EventWriterOptions {
  /** How long an event may wait in memory before it is written (default 200 ms): what a crash can lose. */
  flushMs?: number;
  /** Events per INSERT (default 1,000); a fuller buffer is written at once. */
  batch?: number;
  /** Events kept while the database refuses writes (default 100,000); beyond that the oldest are dropped. */
  maxBuffered?: number;
  /** Called once per event written (the Prometheus counter). */
  onWritten?: (type: string, outcome: string) => void;
  onError?: (err: unknown, dropped: number) => void;
}

/**
 * Events of the hot paths (token issuance, sign-ins), written in batches: `record` only queues (no I/O on the
 * request), a timer writes what queued every `flushMs` in one INSERT. `close()` writes everything still queued
 * (a clean shutdown loses nothing); a crash loses at most the last `flushMs` plus one INSERT. A failed write keeps
 * the events for the next round (bounded by `maxBuffered`).
 */
export class EventWriter {
  private queue: EventInput[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private closed = false;
  private readonly flushMs: number;
  private readonly batch: number;
  private readonly maxBuffered: number;

  constructor(
    private readonly sql: Sql,
    private readonly opts: EventWriterOptions = {},
  ) {
    this.flushMs = opts.flushMs ?? 200;
    this.batch = opts.batch ?? 1000;
    this.maxBuffered = opts.maxBuffered ?? 100_000;
  }

  /** Queues one event (stamped now unless it says when). */
  record(event: EventInput): void {
    if (this.closed) return void this.writeNow([event]);
    if (!event.at) event.at = new Date();
    this.queue.push(event);
    if (this.queue.length > this.maxBuffered) {
      const dropped = this.queue.splice(0, this.queue.length - this.maxBuffered).length;
      this.opts.onError?.(new Error('event buffer full'), dropped);
    }
    if (this.queue.length >= this.batch) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Writes everything queued now (also what queues while it writes). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    if (!this.queue.length) return;
    const run = this.drain();
    this.flushing = run;
    try {
      await run;
    } finally {
      this.flushing = undefined;
    }
    if (this.queue.length && !this.closed) this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Writes what is queued and stops batching: later events are written one statement each. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  /** Events waiting to be written. */
  get pending(): number {
    return this.queue.length;
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const take = this.queue.slice(0, this.batch);
      try {
        await insertEvents(this.sql, take).catch(async (err: unknown) => {
          // No partition for the day (no service ran its hourly housekeeping for a week): make it, once.
          if ((err as { code?: string }).code !== '23514') throw err;
          await ensureEventPartitions(this.sql);
          await insertEvents(this.sql, take);
        });
      } catch (err) {
        this.opts.onError?.(err, 0);
        return;
      }
      this.queue.splice(0, take.length);
      if (this.opts.onWritten)
        for (const e of take) this.opts.onWritten(e.type, e.outcome ?? defaultOutcome(e.type));
    }
  }

  private async writeNow(events: EventInput[]): Promise<void> {
    try {
      await insertEvents(this.sql, events);
      if (this.opts.onWritten)
        for (const e of events) this.opts.onWritten(e.type, e.outcome ?? defaultOutcome(e.type));
    } catch (err) {
      this.opts.onError?.(err, events.length);
    }
  }
}

/**
 * The events the current transaction wrote, by type and outcome (the management-write trigger's, for the Prometheus
 * counter once the transaction commits): one look-up of `ix_events_txid_seq` per partition.
 */
export async function eventsOfThisTransaction(
  tx: Sql,
): Promise<{ type: string; outcome: string; n: number }[]> {
  return tx.rows(
    `SELECT type, outcome, count(*)::int AS n FROM events WHERE txid = pg_current_xact_id_if_assigned()
      GROUP BY type, outcome`,
  );
}
