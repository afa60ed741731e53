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

/** A PostgreSQL array literal element: NULL, or the text quoted (backslashes and double quotes escaped). */
function quoted(v: string | null | undefined): string {
  if (v == null) return 'NULL';
  return /["\\]/.test(v) ? `"${v.replace(/["\\]/g, '\\$&')}"` : `"${v}"`;
}

/**
 * The column arrays of `events` for INSERT_EVENTS, each as the text of a PostgreSQL array literal: written here in
 * one pass (the ids and times made here need no quoting) rather than by the driver, which escapes every element of
 * every array.
 */
export function eventParams(events: readonly EventInput[]): string[] {
  const cols: string[][] = COLUMNS.map(() => new Array<string>(events.length));
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const at = e.at ?? new Date();
    const actor = e.actor ?? { type: 'anonymous' as const };
    cols[0][i] = eventId(at);
    cols[1][i] = at.toISOString();
    cols[2][i] = quoted(e.type);
    cols[3][i] = quoted(e.outcome ?? defaultOutcome(e.type));
    cols[4][i] = quoted(e.reason);
    cols[5][i] = quoted(e.instanceId);
    cols[6][i] = quoted(e.tenantId);
    cols[7][i] = quoted(actor.type);
    cols[8][i] = quoted(actor.id);
    cols[9][i] = quoted(actor.viaClientId);
    cols[10][i] = quoted(e.userId);
    cols[11][i] = quoted(e.clientId);
    cols[12][i] = quoted(e.record?.type);
    cols[13][i] = quoted(e.record?.id);
    cols[14][i] = quoted(e.ip);
    cols[15][i] = quoted(e.userAgent ? e.userAgent.slice(0, 512) : null);
    cols[16][i] = quoted(JSON.stringify(e.details ?? {}));
  }
  return cols.map((c) => `{${c.join(',')}}`);
}

/** The COPY of the batched writer: the same columns as INSERT_EVENTS. */
export const COPY_EVENTS = `COPY events (${COLUMNS.join(', ')}) FROM STDIN`;

/** A field of COPY's text format: `\\N` for null; backslash, tab, newline and carriage return escaped. */
function copyField(v: string | null | undefined): string {
  if (v == null) return '\\N';
  return /[\\\t\n\r]/.test(v) ? v.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : v;
}
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** `events` as the rows of COPY_EVENTS (text format), in COLUMNS' order. */
export function eventCopyText(events: readonly EventInput[]): string {
  let out = '';
  for (const e of events) {
    const at = e.at ?? new Date();
    const actor = e.actor ?? { type: 'anonymous' as const };
    out +=
      `${eventId(at)}\t${at.toISOString()}\t${copyField(e.type)}\t${copyField(e.outcome ?? defaultOutcome(e.type))}\t` +
      `${copyField(e.reason)}\t${copyField(e.instanceId)}\t${copyField(e.tenantId)}\t${copyField(actor.type)}\t` +
      `${copyField(actor.id)}\t${copyField(actor.viaClientId)}\t${copyField(e.userId)}\t${copyField(e.clientId)}\t` +
      `${copyField(e.record?.type)}\t${copyField(e.record?.id)}\t${copyField(e.ip)}\t` +
      `${copyField(e.userAgent ? e.userAgent.slice(0, 512) : null)}\t${copyField(JSON.stringify(e.details ?? {}))}\n`;
  }
  return out;
}

/** A database the batched writer can COPY into (the pool: `Db`); a transaction or a connection cannot. */
interface CopySql extends Sql {
  copyIn(statement: string, data: string): Promise<number>;
}

const canCopy = (sql: Sql): sql is CopySql => typeof (sql as Partial<CopySql>).copyIn === 'function';

/**
 * Writes a batch of `events` in one statement: COPY where `sql` can (about half PostgreSQL's CPU per event of the
 * INSERT), else INSERT_EVENTS.
 */
export async function writeEventBatch(sql: Sql, events: readonly EventInput[]): Promise<void> {
  if (!events.length) return;
  if (canCopy(sql)) await sql.copyIn(COPY_EVENTS, eventCopyText(events));
  else await insertEvents(sql, events);
}

/**
 * Writes `events` on `sql`: inside a transaction they commit or roll back with it (a management write that fails
 * writes no event).
 */
export async function insertEvents(sql: Sql, events: readonly EventInput[]): Promise<void> {
  if (events.length) await sql.exec(INSERT_EVENTS, eventParams(events));
}

/** How many occurrences an event stands for: its `details.count` (recordRepeatable), else one. */
function occurrences(e: EventInput): number {
  const n = e.details?.count;
  return typeof n === 'number' && n > 1 ? n : 1;
}

/** A refusal of the data itself (SQLSTATE classes 22 and 23), which no retry of the same rows can overcome. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
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
  /** Called once per event written (the Prometheus counter), with the occurrences it stands for (`repeats`). */
  onWritten?: (type: string, outcome: string, occurrences: number) => void;
  onError?: (err: unknown, dropped: number) => void;
}

/**
 * Events of the hot paths (token issuance, sign-ins), written in batches: `record` only queues (no I/O on the
 * request), a timer writes what queued every `flushMs` in one COPY (writeEventBatch). `close()` writes everything
 * still queued (a clean shutdown loses nothing); a crash loses at most the last `flushMs` plus one write. A write the
 * database could not take keeps the events for the next round (bounded by `maxBuffered`); a batch refused for its
 * data is written one event at a time, and the refused one is reported and dropped.
 */
export class EventWriter {
  private queue: EventInput[] = [];
  /** Events of `recordRepeatable` queued and not yet taken for writing, by their key. */
  private readonly repeats = new Map<string, EventInput>();
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
    // a write in flight takes what queued meanwhile too (it drains until the queue is empty)
    if (this.queue.length >= this.batch) {
      if (!this.flushing) void this.flush();
    } else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /**
   * Queues `event`, unless an event with the same `key` is still queued: then that one stands for one more
   * occurrence (`details.count`). For events that repeat identically many times a second (a machine client's
   * client_credentials tokens): one row per key and flush interval instead of one per request, the count kept.
   */
  recordRepeatable(key: string, event: EventInput): void {
    const queued = this.repeats.get(key);
    if (queued?.details) {
      queued.details.count = occurrences(queued) + 1;
      return;
    }
    event.details ??= {};
    this.record(event);
    if (!this.closed) this.repeats.set(key, event);
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
      // what is taken now counts no more repeats (it may be on its way to the database)
      this.repeats.clear();
      const take = this.queue.slice(0, this.batch);
      try {
        await writeEventBatch(this.sql, take).catch(async (err: unknown) => {
          // No partition for the day (no service ran its hourly housekeeping for a week): make it, once.
          if ((err as { code?: string }).code !== '23514') throw err;
          await ensureEventPartitions(this.sql);
          await writeEventBatch(this.sql, take);
        });
      } catch (err) {
        if (!isDataError(err)) {
          // the database is away or refusing writes: keep the batch for the next round
          this.opts.onError?.(err, 0);
          return;
        }
        // one event the database will never take (a value PostgreSQL refuses) must not hold back the rest forever
        this.queue.splice(0, take.length);
        await this.writeEach(take);
        continue;
      }
      this.queue.splice(0, take.length);
      if (this.opts.onWritten)
        for (const e of take)
          this.opts.onWritten(e.type, e.outcome ?? defaultOutcome(e.type), occurrences(e));
    }
  }

  /** Writes `events` one INSERT each, reporting (and dropping) the ones refused. */
  private async writeEach(events: EventInput[]): Promise<void> {
    for (const e of events) await this.writeNow([e]);
  }

  private async writeNow(events: EventInput[]): Promise<void> {
    try {
      await insertEvents(this.sql, events);
      if (this.opts.onWritten)
        for (const e of events)
          this.opts.onWritten(e.type, e.outcome ?? defaultOutcome(e.type), occurrences(e));
    } catch (err) {
      this.opts.onError?.(err, events.length);
    }
  }
}

/**
 * The events the current transaction wrote, by type and outcome (the management-write trigger's, for the Prometheus
 * counter once the transaction commits): one look-up of `ix_events_txid_seq` per partition. No parameters, so it can
 * share the COMMIT's round trip (TransactionSettings.commitRead).
 */
export const EVENTS_OF_THIS_TRANSACTION = `SELECT type, outcome, count(*)::int AS n FROM events
  WHERE txid = pg_current_xact_id_if_assigned() GROUP BY type, outcome`;
