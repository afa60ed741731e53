import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { testRedisUrl } from '@gatehouse/testing';
import { DevicePollThrottle } from './device-throttle.js';

/** The warnings a throttle logged. */
function warnings() {
  const lines: string[] = [];
  return { lines, log: { warn: (_obj: unknown, msg: string) => void lines.push(msg) } as any };
}

describe('DevicePollThrottle', () => {
  let redis: Redis;
  const prefix = `test:devthrottle:${randomUUID()}:`;
  const hashed = (code: string) => createHash('sha256').update(code).digest('base64url');

  beforeAll(async () => {
    redis = new Redis(testRedisUrl());
    await redis.ping();
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('without Redis: too soon within the interval of the last poll, on its clock', async () => {
    const t = new DevicePollThrottle();
    let now = 1_000_000;
    t.clock = () => now;
    expect(await t.tooSoon('a')).toBe(false);
    now += 3_000;
    expect(await t.tooSoon('a')).toBe(true);
    expect(await t.tooSoon('b')).toBe(false);
    now += 4_000; // 4 s after the poll that was too soon: that one counts too
    expect(await t.tooSoon('a')).toBe(true);
    now += 5_000;
    expect(await t.tooSoon('a')).toBe(false);
  });

  it('with Redis: shared by two throttles (two replicas), the code hashed in the key, expiring with the interval', async () => {
    const { lines, log } = warnings();
    const a = new DevicePollThrottle({ redis, prefix, log });
    const b = new DevicePollThrottle({ redis, prefix, log });
    const code = `device-${randomUUID()}`;
    expect(await a.tooSoon(code)).toBe(false);
    expect(await b.tooSoon(code)).toBe(true);
    const key = `${prefix}device-poll:${hashed(code)}`;
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5_000);
    expect(await redis.keys(`*${code}*`)).toEqual([]);
    // another code is not throttled by it
    expect(await b.tooSoon(`device-${randomUUID()}`)).toBe(false);
    expect(lines).toEqual([]);
  });

  it('a Redis command that fails answers from process memory (logged once), never throws', async () => {
    const { lines, log } = warnings();
    const t = new DevicePollThrottle({ redis, prefix, log });
    const code = `device-${randomUUID()}`;
    // a key of another type: SET answers WRONGTYPE
    await redis.hset(`${prefix}device-poll:${hashed(code)}`, 'x', '1');
    expect(await t.tooSoon(code)).toBe(false);
    expect(await t.tooSoon(code)).toBe(true);
    expect(lines).toEqual(['Redis for device polls unavailable; slow_down counted in this process']);
  });

  it('a Redis that is not connected answers from process memory at once', async () => {
    const { lines, log } = warnings();
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true });
    try {
      const t = new DevicePollThrottle({ redis: down, prefix, log });
      expect(await t.tooSoon('c')).toBe(false);
      expect(await t.tooSoon('c')).toBe(true);
      expect(lines).toHaveLength(1);
    } finally {
      down.disconnect();
    }
  });
});
