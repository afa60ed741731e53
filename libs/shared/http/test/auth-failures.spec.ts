import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import request from 'supertest';
import { FastLanePipeline, type FastLane, type FastLaneDeps, type RateLimitOptions } from '../src/index.js';
import { REDIS_URL, makeApp } from './support.js';

const CLIENT = '3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const GOOD_BASIC = basic(CLIENT, 'right-secret');

/**
 * A credential store on the lane: `Bearer good` and CLIENT's right secret are good, anything else is 401. Each
 * check takes a few milliseconds (as a database or /tokeninfo round trip does) and is counted.
 */
class Store implements FastLane {
  checks = 0;
  /** Credentials that turned bad (a revoked token). */
  readonly revoked = new Set<string>();
  matches = (_method: string, path: string) => path.startsWith('/lane/');
  handle(req: IncomingMessage, res: ServerResponse) {
    this.checks++;
    const auth = req.headers.authorization;
    const good =
      (auth === 'Bearer good' || auth === 'Bearer also-good' || auth === GOOD_BASIC) &&
      !this.revoked.has(auth);
    setTimeout(() => {
      res.statusCode = good ? 200 : 401;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(good ? { ok: true } : { error: 'invalid_token' }));
    }, 5);
  }
}

describe.each([
  ['in memory', undefined],
  ['in Redis', REDIS_URL],
])('hole 6: one noisy address blocks everyone behind it (counts %s)', (_where, redisUrl) => {
  const apps: NestExpressApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  const make = async (rateLimit: Partial<RateLimitOptions>) => {
    const store = new Store();
    const app = await makeApp({
      routes: ['GET /lane/auth'],
      oauthErrorPaths: ['/lane'],
      fastLane: () => store,
      rateLimit: {
        points: 1000,
        durationSec: 60,
        ...(redisUrl ? { redisUrl, keyPrefix: `gatehouse:rl:hole6:${randomUUID()}` } : {}),
        ...rateLimit,
      },
    });
    apps.push(app);
    return { s: app.getHttpServer(), store };
  };
  const auth = (s: unknown, authorization: string) =>
    request(s as Parameters<typeof request>[0])
      .get('/lane/auth')
      .set('Authorization', authorization);

  it('a valid bearer token is served after 100+ bad ones from the same address', async () => {
    const { s } = await make({ authFailures: 100 });
    const bad: number[] = [];
    for (let i = 0; i < 120; i++) bad.push((await auth(s, `Bearer bad-${i}`)).status);
    expect(bad.every((st) => st === 401)).toBe(true);
    await auth(s, 'Bearer good').expect(200);
    // one credential failing again and again is stopped on its own
    for (let i = 0; i < 100; i++) await auth(s, 'Bearer same-bad').expect(401);
    await auth(s, 'Bearer same-bad').expect(429);
    await auth(s, 'Bearer good').expect(200);
    await auth(s, GOOD_BASIC).expect(200);
  });

  it('past the address-wide budget only credentials already proven good are checked', async () => {
    const { s, store } = await make({ authFailures: 5, authFailuresPerAddress: 10 });
    await auth(s, 'Bearer good').expect(200);
    for (let i = 0; i < 10; i++) await auth(s, `Bearer bad-${i}`).expect(401);
    const before = store.checks;
    const refused = await auth(s, 'Bearer bad-new').expect(429);
    expect(refused.body.code).toBe('too_many_requests');
    await auth(s, 'Bearer also-good').expect(429); // never seen: not checked either
    expect(store.checks).toBe(before);
    await auth(s, 'Bearer good').expect(200);
  });

  it('300 concurrent bad credentials: at most the budget reach the store', async () => {
    const { s, store } = await make({ authFailures: 10, authFailuresPerAddress: 50 });
    const same = await Promise.all(Array.from({ length: 300 }, () => auth(s, 'Bearer same-bad')));
    expect(store.checks).toBeLessThanOrEqual(10);
    expect(same.filter((r) => r.status === 401)).toHaveLength(store.checks);
    expect(same.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(290);
    const checked = store.checks;
    const distinct = await Promise.all(Array.from({ length: 300 }, (_, i) => auth(s, `Bearer bad-${i}`)));
    expect(store.checks - checked).toBeLessThanOrEqual(50 - checked);
    expect(distinct.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(250);
  });

  it('a proven good credential is never stopped by its own concurrency; revoked, it counts again', async () => {
    const { s, store } = await make({ authFailures: 10, authFailuresPerAddress: 20 });
    await auth(s, 'Bearer good').expect(200);
    // 300 requests in flight at once with a good credential: none waits on a failure budget
    const burst = await Promise.all(Array.from({ length: 300 }, () => auth(s, 'Bearer good')));
    expect(burst.map((r) => r.status).filter((st) => st !== 200)).toEqual([]);
    // revoked meanwhile: the first 401 forgets it was good, then it spends the budget like any bad credential
    store.revoked.add('Bearer good');
    const after: number[] = [];
    for (let i = 0; i < 13; i++) after.push((await auth(s, 'Bearer good')).status);
    expect(after.filter((st) => st === 401)).toHaveLength(11);
    expect(after.slice(11)).toEqual([429, 429]);
  });

  it('a client is one client however its id is written: an upper-case id shares the quota', async () => {
    const { s } = await make({ points: 2 });
    await auth(s, GOOD_BASIC).expect(200);
    await auth(s, GOOD_BASIC).expect(200);
    await auth(s, GOOD_BASIC).expect(429);
    await auth(s, basic(CLIENT.toUpperCase(), 'right-secret')).expect(429);
  });
});

describe('hole 6: one noisy address blocks everyone behind it (trusted proxies)', () => {
  it('a hop count or an address list: the lane computes the address as Express does', async () => {
    for (const setting of [1, 2, '127.0.0.1/8, ::1', 'loopback,10.0.0.0/8']) {
      const a = express();
      a.set('trust proxy', setting);
      const pipeline = new FastLanePipeline({
        trust: a.get('trust proxy fn') as FastLaneDeps['trust'],
      } as FastLaneDeps);
      a.get('/ip', (req, res) => {
        res.json({ express: req.ip, lane: pipeline.clientIp(req) });
      });
      for (const xff of ['198.51.100.7', '203.0.113.5, 10.1.2.3']) {
        const res = await request(a).get('/ip').set('X-Forwarded-For', xff).expect(200);
        expect(res.body.lane).toBe(res.body.express);
      }
    }
  });
});
