import type { Db } from '@gatehouse/db';
import { ensureEventPartitions, purgeEventPartitions } from './writer.js';

/** How often a service makes the partitions ahead and (identity) purges the old ones. */
export const EVENT_HOUSEKEEPING_MS = 3_600_000;

/** The advisory lock one replica holds while it purges: the others skip that round. */
const PURGE_LOCK = 'gatehouse.events.purge';

export interface EventHousekeepingOptions {
  /** Days of events kept (EVENTS_RETENTION_DAYS); unset: no purge here (the token server leaves it to identity). */
  retentionDays?: number;
  /** Warnings (a failed round); the next round tries again. */
  warn: (msg: string, err: unknown) => void;
  /** Dropped partitions. */
  info?: (msg: string, fields: Record<string, unknown>) => void;
  /** Round interval (default EVENT_HOUSEKEEPING_MS). */
  intervalMs?: number;
}

/**
 * The events table's housekeeping: the partitions of the coming days made now (awaited: a service serves only once
 * today's partition exists) and every hour, and, with `retentionDays`, the partitions past retention dropped in the
 * background now and every hour by one replica at a time (a session advisory lock, tried, never waited for; the
 * DETACH ... CONCURRENTLY of the purge runs outside any transaction on that lock's connection). Returns the stop
 * function (clears the timer; never keeps the process alive).
 */
export async function startEventHousekeeping(db: Db, opts: EventHousekeepingOptions): Promise<() => void> {
  await ensureEventPartitions(db);
  const round = async (ensure: boolean) => {
    try {
      if (ensure) await ensureEventPartitions(db);
      if (opts.retentionDays !== undefined) await purgeOnce(db, opts.retentionDays, opts.info);
    } catch (err) {
      opts.warn('events housekeeping failed', err);
    }
  };
  void round(false);
  const timer = setInterval(() => void round(true), opts.intervalMs ?? EVENT_HOUSEKEEPING_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** One purge if no other replica is purging; returns the partitions dropped (undefined: another replica holds it). */
export async function purgeOnce(
  db: Db,
  retentionDays: number,
  info?: EventHousekeepingOptions['info'],
): Promise<string[] | undefined> {
  return db.connection(async (c) => {
    const [lock] = await c.rows<{ got: boolean }>(
      `SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got`,
      [PURGE_LOCK],
    );
    if (!lock?.got) return undefined;
    try {
      const dropped = await purgeEventPartitions(c, retentionDays);
      if (dropped.length) info?.('events partitions past retention dropped', { dropped, retentionDays });
      return dropped;
    } finally {
      await c.exec(`SELECT pg_advisory_unlock(hashtextextended($1, 0))`, [PURGE_LOCK]);
    }
  });
}
