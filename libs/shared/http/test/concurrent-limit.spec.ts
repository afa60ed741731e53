import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { FastLane, RateLimitOptions } from '../src/index.js';
import { REDIS_URL, makeApp } from './support.js';

const CLIENT = '3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const GOOD_BASIC = basic(CLIENT, 'right-secret');
const WRONG_BASIC = basic(CLIENT, 'wrong-secret');
const LIMIT = 7;
/** Requests fired at once: the limit and several more. */
const N = LIMIT + 9;

/**
 * A credential store on the lane, as the token server's client_credentials and /tokeninfo are: CLIENT's right
 * secret and `Bearer good` are good, anything else is 401. Each check takes a few milliseconds (a database round
 * trip), so that every request of a burst is in flight at once; a 401 takes `badDelayMs`.
 */
class Store implements FastLane {
  checks = 0;
  constructor(private readonly badDelayMs = 20) {}
  matches = (_method: string, path: string) => path.startsWith('/lane/');
  handle(req: IncomingMessage, res: ServerResponse) {
    this.checks++;
    const auth = req.headers.authorization;
    const good = auth === GOOD_BASIC || auth === 'Bearer good';
    setTimeout(
      () => {
        res.statusCode = good ? 200 : 401;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(good ? { ok: true } : { error: 'invalid_client' }));
      },
      good ? 20 : this.badDelayMs,
    );
  }
}

type Server = Parameters<typeof request>[0];

describe.each([
  ['3 app instances sharing one Redis', REDIS_URL, 3],
  ['one app instance counting in memory', undefined, 1],
])('a rate limit under concurrency: %s', (_where, redisUrl, instances) => {
  const apps: NestExpressApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });

  /** `instances` apps with one rate-limit configuration (one Redis key prefix): their servers. */
  const make = async (rateLimit: Partial<RateLimitOptions> = {}, badDelayMs?: number): Promise<Server[]> => {
    const keyPrefix = `gatehouse:rl:concurrent:${randomUUID()}`;
    const servers: Server[] = [];
    for (let i = 0; i < instances; i++) {
      const app = await makeApp({
        routes: ['GET /lane/auth'],
        oauthErrorPaths: ['/lane'],
        fastLane: () => new Store(badDelayMs),
        rateLimit: {
          points: 1000,
          durationSec: 60,
          authFailures: 1000,
          overrides: { 'GET /lane/auth': LIMIT, 'GET /things/:thing_id': LIMIT },
          ...(redisUrl ? { redisUrl, keyPrefix } : {}),
          ...rateLimit,
        },
      });
      apps.push(app);
      servers.push(app.getHttpServer() as Server);
    }
    return servers;
  };

  /** `n` requests fired at once, round robin over the servers; their answers. */
  const burst = (servers: Server[], n: number, path: string, authorization?: string) =>
    Promise.all(
      Array.from({ length: n }, (_, i) => {
        const r = request(servers[i % servers.length]).get(path);
        return authorization ? r.set('Authorization', authorization) : r;
      }),
    );

  /** Exactly `admitted` answered 200 (remaining: each of admitted - 1 down to 0 once), the rest 429 as the limiter answers it. */
  const expectExactly = (answers: request.Response[], admitted: number) => {
    const ok = answers.filter((r) => r.status === 200);
    const limited = answers.filter((r) => r.status === 429);
    expect({ ok: ok.length, limited: limited.length }).toEqual({
      ok: admitted,
      limited: answers.length - admitted,
    });
    expect(ok.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b)).toEqual(
      Array.from({ length: admitted }, (_, i) => i),
    );
    for (const r of limited) {
      expect(r.body.code).toBe('too_many_requests');
      expect(r.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(r.headers['x-ratelimit-remaining']).toBe('0');
      const retry = Number(r.headers['retry-after']);
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
  };

  it(`${N} concurrent requests of a client never seen before: exactly ${LIMIT} admitted`, async () => {
    const servers = await make();
    expectExactly(await burst(servers, N, '/lane/auth', GOOD_BASIC), LIMIT);
  });

  it(`${N} concurrent requests of a client already proven good: exactly the rest of ${LIMIT} admitted`, async () => {
    const servers = await make();
    for (const s of servers) await request(s).get('/lane/auth').set('Authorization', GOOD_BASIC).expect(200);
    expectExactly(await burst(servers, N, '/lane/auth', GOOD_BASIC), LIMIT - instances);
  });

  it(`${N} concurrent requests of a bearer token, and without credentials: exactly ${LIMIT} each`, async () => {
    const servers = await make();
    expectExactly(await burst(servers, N, '/lane/auth', 'Bearer good'), LIMIT);
    expectExactly(await burst(servers, N, `/things/${CLIENT}`), LIMIT);
  });

  it('a 401 gives its charge back: wrong secrets naming a client, in flight with it, do not spend its quota', async () => {
    const servers = await make();
    const mixed = await Promise.all([
      burst(servers, N, '/lane/auth', WRONG_BASIC),
      burst(servers, N, '/lane/auth', GOOD_BASIC),
    ]);
    expect(mixed[0].every((r) => r.status === 401 || r.status === 429)).toBe(true);
    const admitted = mixed[1].filter((r) => r.status === 200).length;
    // The wrong secrets held charges only while in flight: what the client was refused meanwhile is its now.
    const after = await burst(servers, N, '/lane/auth', GOOD_BASIC);
    expect(admitted + after.filter((r) => r.status === 200).length).toBe(LIMIT);
    expect(after.filter((r) => r.status === 429)).toHaveLength(N - (LIMIT - admitted));
  });

  it('a 401 answered after its window ended gives nothing back to the next window', async () => {
    // windows of 3 s: the wrong secret is charged at once (within 0.5 s even on a loaded machine), the good request
    // goes at 3.5 s (the second window), the 401 comes at 4.5 s and the last request before the second window ends
    const servers = await make({ durationSec: 3, overrides: { 'GET /lane/auth': 1 } }, 4500);
    // sent now, charged in the first window, answered 401 in the second
    const wrong = request(servers[0])
      .get('/lane/auth')
      .set('Authorization', WRONG_BASIC)
      .then((r) => r);
    await new Promise((r) => setTimeout(r, 3500));
    await request(servers[servers.length - 1])
      .get('/lane/auth')
      .set('Authorization', GOOD_BASIC)
      .expect(200);
    expect((await wrong).status).toBe(401);
    const over = await request(servers[0]).get('/lane/auth').set('Authorization', GOOD_BASIC);
    expect(over.status).toBe(429);
  });
});
