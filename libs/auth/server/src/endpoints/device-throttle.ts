import { createHash } from 'node:crypto';

/** RFC 8628 polling interval of device codes, in seconds. */
export const DEVICE_POLL_INTERVAL_SEC = 5;

/** Device codes remembered before the oldest is forgotten. */
const MAX_DEVICE_CODES = 10_000;

/**
 * RFC 8628 slow_down: a device code polled again within the interval. Kept per process (a throttle, not a
 * record): behind several replicas a device may poll each once per interval.
 */
export class DevicePollThrottle {
  /** Last poll per device code (hashed). */
  private readonly lastPolls = new Map<string, number>();
  /** The clock device polls are timed by (tests move it instead of waiting). */
  clock: () => number = Date.now;

  /** Records a poll of `deviceCode`; true when the one before it was less than the interval ago. */
  tooSoon(deviceCode: string): boolean {
    const key = createHash('sha256').update(deviceCode).digest('base64url');
    const now = this.clock();
    const last = this.lastPolls.get(key);
    this.lastPolls.delete(key);
    this.lastPolls.set(key, now);
    if (this.lastPolls.size > MAX_DEVICE_CODES)
      this.lastPolls.delete(this.lastPolls.keys().next().value as string);
    return last !== undefined && now - last < DEVICE_POLL_INTERVAL_SEC * 1000;
  }
}
