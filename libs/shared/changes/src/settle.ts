import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { CACHE_ACKS_CHANNEL, IDENTITY_CHANGES_CHANNEL, SYNC_PREFIX, type IdentityChange } from './channel.js';
import { IdentityChangeFeed, IdentityChangeListener } from './feed.js';

/*
 * Exact invalidation of the caches of identity rows: a change made through the identity service counts
 * at every cache subscriber (each token server replica) from the very next request after its HTTP response.
 *
 * - Every write to a cached table notifies the change channel (its triggers, the only announcer: see watched.ts), in
 *   the writing transaction: PostgreSQL delivers notifications of different transactions in commit order.
 * - A subscriber keeps a row in `cache_subscribers` and heartbeats it every 500 ms on its LISTEN connection. Its
 *   cache is trusted only while the last heartbeat that started less than 1500 ms ago (local monotonic clock)
 *   succeeded; untrusted, it is cleared and nothing is stored.
 * - After every mutating request the identity service `settle()`s before it answers: one autocommit statement
 *   sends `sync:<token>` on the change channel (after the change's commit, so after its notifications) and lists
 *   the live subscribers (heartbeat less than 3 s old); each acknowledges on CACHE_ACKS_CHANNEL once it has applied
 *   every notification before the marker, and settle waits for all of them (3 s at most). A subscriber no longer
 *   counted as live has stopped trusting its cache 1.5 s before.
 * - A subscriber records in its row the server process (`pg_backend_pid()`) of its LISTEN connection, on every
 *   (re)connect. When an acknowledgement is still missing PROBE_MS into a settle, one statement deletes the rows of
 *   the missing subscribers whose recorded backend has left `pg_stat_activity` (a SIGKILLed replica, a terminated
 *   connection): such a subscriber can never acknowledge this marker, and it stopped trusting its cache when its
 *   connection went (PostgreSQL sends the termination to the client before it drops the backend from the view), so
 *   settle stops waiting for it at once. The check is repeated while acknowledgements are missing (at 100, 300, 900
 *   and 2700 ms): a replica killed while the marker was on its way may still be ending at the first one. A
 *   subscriber whose backend is still there (live but slow) is waited for up to the timeout, as one without a
 *   recorded backend (a row of an older version).
 */

/** How often a subscriber heartbeats. */
export const HEARTBEAT_MS = 500;
/** How long after the start of its last successful heartbeat a subscriber trusts its cache. */
export const TRUST_MS = 1500;
/** A subscriber whose heartbeat is older than this is not waited for by `settle` (twice TRUST_MS). */
export const LIVE_SEC = 3;
/** The longest `settle` waits for acknowledgements. */
export const SETTLE_TIMEOUT_MS = 3000;
/**
 * How long into a settle a missing acknowledgement makes it check whether the subscriber's backend is gone (acks
 * come within milliseconds: a settle that all acknowledge in time runs no check).
 */
export const PROBE_MS = 100;
/** Subscriber rows whose heartbeat is older than this are purged. */
export const STALE_SUBSCRIBER_SEC = 3600;

export interface CacheSubscriberOptions {
  /** Connection string of the identity database. */
  url: string;
  /** `application_name` of the LISTEN connection. */
  applicationName: string;
  /** `cache_subscribers.service`. */
  service: string;
  /** Drop what a change makes stale (`all` also when the feed was lost or the cache's trust lapsed). */
  onChange(change: IdentityChange): void;
  log: { warn(message: string): void };
  heartbeatMs?: number;
  trustMs?: number;
  /** The monotonic clock (milliseconds). */
  now?: () => number;
}

/** The cache side of the protocol: LISTEN, heartbeat, trust window, acknowledgements. */
export class CacheSubscriber {
  readonly id = randomUUID();
  private readonly listener: IdentityChangeListener;
  private readonly now: () => number;
  private readonly trustMs: number;
  /** Start (monotonic) of the latest successful heartbeat; undefined while disconnected. */
  private lastOk: number | undefined;
  private beating = false;
  private timer: NodeJS.Timeout | undefined;
  /** Settle markers acknowledged (for tests and metrics). */
  acks = 0;

  constructor(private readonly opts: CacheSubscriberOptions) {
    this.now = opts.now ?? (() => performance.now());
    this.trustMs = opts.trustMs ?? TRUST_MS;
    this.listener = new IdentityChangeListener({
      url: opts.url,
      applicationName: opts.applicationName,
      onChange: opts.onChange,
      log: opts.log,
      onSync: (token) => this.ack(token),
      onConnect: (client) => this.register(client),
      onDisconnect: () => {
        this.lastOk = undefined;
      },
    });
  }

  /** Notifications applied (for tests and metrics). */
  get applied(): number {
    return this.listener.applied;
  }

  /** Whether the cache may be used now: the last heartbeat that started less than `trustMs` ago succeeded. */
  trusted(): boolean {
    return this.lastOk !== undefined && this.now() - this.lastOk < this.trustMs;
  }

  /** Connects (awaited: a replica that starts serving is in step from its first request) and starts heartbeating. */
  async start(): Promise<void> {
    await this.listener.start();
    this.timer = setInterval(() => void this.beat(), this.opts.heartbeatMs ?? HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Stops heartbeating, deletes its row (identity stops waiting for it at once) and closes the connection. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.listener
      .query(`DELETE FROM cache_subscribers WHERE id = $1`, [this.id])
      .catch(() => undefined);
    await this.listener.stop();
    this.lastOk = undefined;
  }

  /** One heartbeat (exposed for tests); a missing row (purged, or deleted by hand) is inserted again. */
  async beat(): Promise<void> {
    if (this.beating || !this.listener.connected) return;
    this.beating = true;
    const started = this.now();
    try {
      const r = await this.listener.query(`UPDATE cache_subscribers SET heartbeat_at = now() WHERE id = $1`, [
        this.id,
      ]);
      if (!r.rowCount) {
        // Identity may have settled without waiting for this process meanwhile: forget everything.
        this.opts.onChange({ kind: 'all' });
        await this.listener.query(
          `INSERT INTO cache_subscribers (id, service, backend_pid) VALUES ($1, $2, pg_backend_pid())
           ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), backend_pid = excluded.backend_pid`,
          [this.id, this.opts.service],
        );
      }
      this.succeeded(started);
    } catch {
      // the trust window runs out; a lost connection is reported and retried by the listener
    } finally {
      this.beating = false;
    }
  }

  private async register(client: pg.Client): Promise<void> {
    const started = this.now();
    // Nothing this connection writes needs to survive a crash of the database (its connections, and with them
    // every subscriber's trust, end with it), so its commits do not wait for the WAL flush: a heartbeat with
    // synchronous commit costs a flush (6 ms median, 20 ms p99 on the 2-vCPU VM of docs/benchmarks.md), and a
    // settle marker's acknowledgement, queued behind it on this one connection, waited as long.
    await client.query(`SET synchronous_commit = off`);
    // The backend of this connection: once it is gone, settles stop waiting for this subscriber at once.
    await client.query(
      `INSERT INTO cache_subscribers (id, service, backend_pid) VALUES ($1, $2, pg_backend_pid())
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), backend_pid = excluded.backend_pid`,
      [this.id, this.opts.service],
    );
    this.succeeded(started);
  }

  private succeeded(started: number): void {
    // Trust lapsed (or never was): whatever was read meanwhile may predate a change identity did not wait for.
    if (!this.trusted()) this.opts.onChange({ kind: 'all' });
    this.lastOk = Math.max(this.lastOk ?? -Infinity, started);
  }

  /** Every notification before the marker has been applied (they are handled in order, synchronously). */
  private ack(token: string): void {
    if (!token || token.length > 100) return;
    this.listener
      .query(`SELECT pg_notify($1, $2)`, [CACHE_ACKS_CHANNEL, `${token}:${this.id}`])
      .then(() => this.acks++)
      .catch(() => undefined);
  }
}

/** A statement runner: the pool of the identity database (autocommit). */
interface Rows {
  rows<T>(text: string, params?: readonly unknown[]): Promise<T[]>;
}

interface Waiting {
  acked: Set<string>;
  check?: () => void;
}

/** The writer side: `settle()` after a change, `ack()` fed with the notifications of CACHE_ACKS_CHANNEL. */
export class CacheSettler {
  private readonly waiting = new Map<string, Waiting>();
  /** Settles that gave up waiting (for tests and metrics). */
  timeouts = 0;
  /** Subscribers found gone (their backend left `pg_stat_activity`) and not waited for (for tests and metrics). */
  gone = 0;

  constructor(
    private readonly sql: Rows,
    private readonly log: { warn(message: string): void },
    private readonly timeoutMs = SETTLE_TIMEOUT_MS,
    private readonly probeMs = PROBE_MS,
  ) {}

  /** One acknowledgement `<token>:<subscriberId>`. */
  ack(payload: string): void {
    const i = payload.lastIndexOf(':');
    if (i <= 0) return;
    const w = this.waiting.get(payload.slice(0, i));
    if (!w) return;
    w.acked.add(payload.slice(i + 1).toLowerCase());
    w.check?.();
  }

  /**
   * Returns once every live cache subscriber has applied every change committed before this call (3 s at most).
   * Must run outside any transaction (after the change's commit): it runs on the pool.
   */
  async settle(): Promise<void> {
    const token = randomUUID();
    const w: Waiting = { acked: new Set() };
    this.waiting.set(token, w);
    try {
      // One row whatever the table holds (an aggregate without GROUP BY): the marker is sent exactly once.
      const [row] = await this.sql.rows<{ ids: string[]; pids: (number | null)[] }>(
        `SELECT pg_notify($1, $2), coalesce(array_agg(id::text), '{}') AS ids,
                coalesce(array_agg(backend_pid), '{}') AS pids
           FROM cache_subscribers WHERE heartbeat_at > clock_timestamp() - make_interval(secs => $3)`,
        [IDENTITY_CHANGES_CHANNEL, `${SYNC_PREFIX}${token}`, LIVE_SEC],
      );
      const ids = (row?.ids ?? []).map((id) => id.toLowerCase());
      if (!ids.length) return;
      const pids = row?.pids ?? [];
      await new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        let reprobe: NodeJS.Timeout | undefined;
        const done = () => {
          clearTimeout(timer);
          clearTimeout(reprobe);
          timer = undefined;
          w.check = undefined;
          resolve();
        };
        const giveUp = () => {
          this.timeouts++;
          const missing = ids.filter((id) => !w.acked.has(id));
          this.log.warn(
            `cache settle: no acknowledgement from ${missing.join(', ')} within ${this.timeoutMs} ms; answering anyway`,
          );
          done();
        };
        // One timer while every acknowledgement comes in time: at PROBE_MS a settle still waiting checks for gone
        // backends, then waits out the rest. A replica killed a moment before may still be ending at that check (its
        // backend not yet out of pg_stat_activity): the check is repeated, each time after twice the time waited so
        // far (100, 300, 900, 2700 ms), so such a replica is not waited for 3 s and a live slow one costs four
        // queries per settle, not one per tick.
        const probeMs = Math.min(this.probeMs, this.timeoutMs);
        const probeAt = (waited: number) => {
          void this.probe(ids, pids, w).then(() => {
            w.check?.();
            const wait = waited * 2;
            if (!w.check || waited <= 0 || waited + wait >= this.timeoutMs) return;
            reprobe = setTimeout(() => probeAt(waited + wait), wait);
          });
        };
        timer = setTimeout(() => {
          timer = setTimeout(giveUp, this.timeoutMs - probeMs);
          probeAt(probeMs);
        }, probeMs);
        w.check = () => {
          if (ids.every((id) => w.acked.has(id))) done();
        };
        w.check();
      });
    } finally {
      this.waiting.delete(token);
    }
  }

  /**
   * The subscribers still missing whose recorded LISTEN backend has left `pg_stat_activity` count as acknowledged,
   * and their rows are deleted (later settles, of every identity replica, neither list nor probe them again; a
   * subscriber still running writes its row again on its next heartbeat and forgets its cache, as for any row
   * deleted under it).
   * Only the backend recorded when the marker was sent counts: a row rewritten since by a reconnected subscriber
   * (another pid) is left alone; that subscriber forgot everything on reconnecting. `pg_stat_activity` shows the pid
   * of every backend to every role; should it not show other roles' backends (none of the server's own processes
   * visible), nothing counts as gone and the timeout rule stays.
   */
  private async probe(ids: string[], pids: (number | null)[], w: Waiting): Promise<void> {
    const missingIds: string[] = [];
    const missingPids: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const pid = pids[i];
      if (pid != null && !w.acked.has(ids[i]!)) {
        missingIds.push(ids[i]!);
        missingPids.push(pid);
      }
    }
    if (!missingIds.length || !w.check) return;
    try {
      // Gone whoever deletes the row (another identity replica's settle may be at it too); the row is deleted only
      // while it still names that backend.
      const gone = await this.sql.rows<{ id: string; pid: number }>(
        `WITH gone AS (
           SELECT m.id, m.pid FROM unnest($1::uuid[], $2::int[]) AS m(id, pid)
            WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = m.pid)
              AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.usesysid IS NULL)),
         deleted AS (
           DELETE FROM cache_subscribers s USING gone WHERE s.id = gone.id AND s.backend_pid = gone.pid)
         SELECT id::text AS id, pid FROM gone`,
        [missingIds, missingPids],
      );
      for (const g of gone) {
        this.gone++;
        this.log.warn(
          `cache settle: subscriber ${g.id} is gone (its backend ${g.pid} ended); not waiting for it`,
        );
        w.acked.add(g.id.toLowerCase());
      }
    } catch (err) {
      this.log.warn(`cache settle: checking for gone subscribers failed: ${(err as Error)?.message ?? err}`);
    }
  }
}

/**
 * The writer's feed (the identity service): its own caches follow the change channel as any feed's, and `settle()`
 * after a change waits for the cache subscribers' acknowledgements (heard on CACHE_ACKS_CHANNEL on the same
 * connection). A subclass says where the identity database is and what a change makes stale.
 */
export abstract class SettlingChangeFeed extends IdentityChangeFeed {
  /** Waits for the cache subscribers' acknowledgements after a change. */
  readonly settler: CacheSettler;

  protected constructor(
    applicationName: string,
    sql: Rows,
    private readonly settleLog: { warn(message: string): void },
  ) {
    super(applicationName, settleLog);
    this.settler = new CacheSettler(sql, settleLog);
  }

  /**
   * Returns once every live cache subscriber has applied every change committed so far (3 s at most); never throws
   * (a failure is logged: the change itself is done). Without a feed (no database told) at once.
   */
  async settle(): Promise<void> {
    if (!this.url()) return;
    await this.settler.settle().catch((err: unknown) => {
      this.settleLog.warn(`cache settle failed: ${(err as Error)?.message ?? err}`);
    });
  }

  protected override channels(): string[] {
    return [CACHE_ACKS_CHANNEL];
  }

  protected override notified(channel: string, payload: string): void {
    if (channel === CACHE_ACKS_CHANNEL) this.settler.ack(payload);
  }
}
