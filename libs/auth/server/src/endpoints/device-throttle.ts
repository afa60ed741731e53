import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** RFC 8628 polling interval of device codes, in seconds. */
export const DEVICE_POLL_INTERVAL_SEC = 5;

const DEVICE_POLL_INTERVAL_MS = DEVICE_POLL_INTERVAL_SEC * 1000;

/** Device codes remembered before the oldest is forgotten. */
const MAX_DEVICE_CODES = 10_000;

/** A warning about Redis at most this often (a Redis outage must not flood the log, one line per poll). */
const WARN_EVERY_MS = 10_000;

/** Where the polls are shared between replicas: the token server's Redis and its key prefix. */
export interface SharedPolls {
  redis: Redis;
  /** The token server's Redis key prefix (its replicas share it). */
  prefix: string;
  log: Pick<Logger, 'warn'>;
}

/**
 * RFC 8628 slow_down: a device code polled again within the interval. With Redis the last poll of each code is
 * shared by every replica (a device may not poll each replica once per interval); without it, or for a request
 * Redis failed, it is kept per process (a throttle, not a record: a lost poll only lets one through early).
 */
export class DevicePollThrottle {
  /** Last poll per device code (hashed), when not shared. */
  private readonly lastPolls = new Map<string, number>();
  /** The clock device polls are timed by in process memory (tests move it instead of waiting); Redis keeps its own. */
  clock: () => number = Date.now;
  private lastWarn = 0;

  constructor(private readonly shared?: SharedPolls) {}

  /**
   * Records a poll of `deviceCode`; true when the one before it was less than the interval ago. Never rejects: a
   * Redis that is down or fails answers from process memory.
   */
  async tooSoon(deviceCode: string): Promise<boolean> {
    // hashed: neither store ever holds a device code
    const key = createHash('sha256').update(deviceCode).digest('base64url');
    const shared = this.shared;
    // not ready: answered at once from memory rather than queued until Redis is back
    if (shared !== undefined && shared.redis.status === 'ready') {
      try {
        // One atomic round trip that records this poll (its key lives one interval) and answers the previous one:
        // as in memory, a poll that is too soon starts the interval again.
        const previous = await shared.redis.set(
          `${shared.prefix}device-poll:${key}`,
          '1',
          'PX',
          DEVICE_POLL_INTERVAL_MS,
          'GET',
        );
        return previous !== null;
      } catch (err) {
        this.warn(shared, err);
      }
    } else if (shared !== undefined) {
      this.warn(shared, new Error(`Redis is ${shared.redis.status}`));
    }
    return this.tooSoonHere(key);
  }

  private tooSoonHere(key: string): boolean {
    const now = this.clock();
    const last = this.lastPolls.get(key);
    this.lastPolls.delete(key);
    this.lastPolls.set(key, now);
    if (this.lastPolls.size > MAX_DEVICE_CODES)
      this.lastPolls.delete(this.lastPolls.keys().next().value as string);
    return last !== undefined && now - last < DEVICE_POLL_INTERVAL_MS;
  }

  private warn(shared: SharedPolls, err: unknown): void {
    const now = Date.now();
    if (now - this.lastWarn < WARN_EVERY_MS) return;
    this.lastWarn = now;
    shared.log.warn(
      { err: (err as Error).message },
      'Redis for device polls unavailable; slow_down counted in this process',
    );
  }
}
