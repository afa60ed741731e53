import { isIPv4, isIPv6 } from 'node:net';
import type { Sql } from '@gatehouse/db';

/**
 * The key an address is budgeted under: an IPv4 address (also IPv4-mapped IPv6) as is, an IPv6 address by its /64
 * (one host usually holds a whole /64, so counting each address would multiply its budget).
 */
export function addressKey(source: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(source);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (!isIPv6(source)) return source;
  const [head, tail] = source.toLowerCase().split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export interface SignupLimitsConfig {
  /** Sign-ups per source address and instance in one clock hour (0: no limit). */
  perAddressPerHour: number;
  /** Sign-ups per instance in one clock minute, whatever their source (0: no limit). */
  perInstancePerMinute: number;
}

/**
 * Sign-up budgets counted in PostgreSQL (`signup_counters`), so every replica of the token server shares them: one
 * atomic `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` per attempt counts it in both windows (fixed windows: a
 * clock hour per address, a clock minute per instance) and tells whether it is within both. Attempts over a limit
 * still count (a client that keeps trying stays refused until the window ends).
 */
export class SignupLimits {
  constructor(
    private readonly sql: Sql,
    private readonly config: SignupLimitsConfig,
  ) {}

  /** Counts one sign-up attempt; undefined when allowed, else the seconds until a window over its limit ends. */
  async admit(instanceId: string, source: string): Promise<number | undefined> {
    const { perAddressPerHour, perInstancePerMinute } = this.config;
    const buckets: { bucket: string; unit: 'hour' | 'minute'; limit: number }[] = [];
    if (perAddressPerHour > 0)
      buckets.push({
        bucket: `a:${instanceId}:${addressKey(source)}`,
        unit: 'hour',
        limit: perAddressPerHour,
      });
    if (perInstancePerMinute > 0)
      buckets.push({ bucket: `i:${instanceId}`, unit: 'minute', limit: perInstancePerMinute });
    if (!buckets.length) return undefined;
    const rows = await this.sql.rows<{ bucket: string; count: number; retry_after: number }>(
      `INSERT INTO signup_counters AS c (bucket, window_start, window_end, count)
       SELECT b.bucket, date_trunc(b.unit, now()), date_trunc(b.unit, now()) + ('1 ' || b.unit)::interval, 1
         FROM unnest($1::text[], $2::text[]) AS b(bucket, unit)
       ON CONFLICT (bucket, window_start) DO UPDATE SET count = c.count + 1
       RETURNING c.bucket, c.count, ceil(extract(epoch FROM c.window_end - now()))::int AS retry_after`,
      [buckets.map((b) => b.bucket), buckets.map((b) => b.unit)],
    );
    let retry: number | undefined;
    for (const r of rows) {
      const limit = buckets.find((b) => b.bucket === r.bucket)!.limit;
      if (r.count > limit) retry = Math.max(retry ?? 1, r.retry_after);
    }
    return retry;
  }

  /** Deletes the windows that have ended; the number deleted. */
  purge(): Promise<number> {
    return this.sql.exec(`DELETE FROM signup_counters WHERE window_end < now()`);
  }
}
