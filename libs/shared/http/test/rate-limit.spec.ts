import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { LogSink, REDIS_URL, makeApp } from './support.js';

const UUID = '3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10';
const OTHER = 'b0a1c6a4-1d2e-4f7a-8b9c-0d1e2f3a4b5c';

describe('rate limiting', () => {
  const apps: NestExpressApplication[] = [];
  const make = async (...args: Parameters<typeof makeApp>) => {
    const app = await makeApp(...args);
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });

  const expectHeaders = (res: request.Response, limit: number) => {
    expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
    expect(Number(res.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
    const reset = Number(res.headers['x-ratelimit-reset']);
    const now = Date.now() / 1000;
    expect(reset).toBeGreaterThanOrEqual(Math.floor(now));
    expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 60);
  };

  it('puts X-RateLimit-* headers on 200, 201, 400, 404 and 405 answers, none on probes', async () => {
    const app = await make({ rateLimit: { points: 50, durationSec: 60 } });
    const s = app.getHttpServer();
    expectHeaders(await request(s).get(`/things/${UUID}`).expect(200), 50);
    expectHeaders(await request(s).post('/things').send({ name: 'a' }).expect(201), 50);
    expectHeaders(await request(s).post('/things').send({}).expect(400), 50);
    expectHeaders(await request(s).get('/does/not/exist').expect(404), 50);
    expectHeaders(await request(s).patch('/things').expect(405), 50);
    for (const probe of ['/livez', '/readyz', '/metrics']) {
      const res = await request(s).get(probe).expect(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('answers 429 too_many_requests with Retry-After once the limit is used up', async () => {
    const app = await make({ rateLimit: { points: 3, durationSec: 60 } });
    const s = app.getHttpServer();
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++)
      remaining.push((await request(s).get(`/things/${UUID}`).expect(200)).headers['x-ratelimit-remaining']);
    expect(remaining).toEqual(['2', '1', '0']);
    const res = await request(s).get(`/things/${UUID}`).expect(429);
    expect(res.body.code).toBe('too_many_requests');
    expect(res.body.message).toMatch(/X-RateLimit-Limit.*X-RateLimit-Remaining.*X-RateLimit-Reset/);
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    const retry = Number(res.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // probes stay reachable for a throttled caller
    await request(s).get('/livez').expect(200);
  });

  it('counts per endpoint pattern: another id on the same route shares the count, another route does not', async () => {
    const app = await make({ rateLimit: { points: 2, durationSec: 60 } });
    const s = app.getHttpServer();
    await request(s).get(`/things/${UUID}`).expect(200);
    await request(s).get(`/things/${OTHER}`).expect(200);
    await request(s).get(`/things/${randomUUID()}`).expect(429);
    await request(s).post('/things').send({ name: 'a' }).expect(201);
  });

  it('groups unknown routes under one key', async () => {
    const app = await make({ rateLimit: { points: 2, durationSec: 60 } });
    const s = app.getHttpServer();
    await request(s).get('/unknown-a').expect(404);
    await request(s).get('/unknown-b').expect(404);
    await request(s).get('/unknown-c').expect(429);
  });

  it('counts per caller: bearer tokens and Basic client ids have their own budgets, apart from the IP', async () => {
    const app = await make({ rateLimit: { points: 1, durationSec: 60 } });
    const s = app.getHttpServer();
    const path = `/things/${UUID}`;
    await request(s).get(path).set('Authorization', 'Bearer token-a').expect(200);
    await request(s).get(path).set('Authorization', 'Bearer token-a').expect(429);
    await request(s).get(path).set('Authorization', 'Bearer token-b').expect(200);
    const basic = (id: string) => `Basic ${Buffer.from(`${id}:secret`).toString('base64')}`;
    await request(s).get(path).set('Authorization', basic('client-1')).expect(200);
    await request(s).get(path).set('Authorization', basic('client-1')).expect(429);
    await request(s).get(path).set('Authorization', basic('client-2')).expect(200);
    await request(s).get(path).expect(200); // the IP itself
  });

  it('applies per-endpoint overrides', async () => {
    const app = await make({
      rateLimit: { points: 100, durationSec: 60, overrides: { 'GET /things/:thing_id': 1 } },
    });
    const s = app.getHttpServer();
    expectHeaders(await request(s).get(`/things/${UUID}`).expect(200), 1);
    await request(s).get(`/things/${UUID}`).expect(429);
    expectHeaders(await request(s).post('/things').send({ name: 'a' }).expect(201), 100);
  });

  it('shares counts between two app instances through Redis', async () => {
    const keyPrefix = `gatehouse:rl:spec:${randomUUID()}`;
    const rateLimit = { points: 4, durationSec: 60, redisUrl: REDIS_URL, keyPrefix };
    const a = (await make({ rateLimit })).getHttpServer();
    const b = (await make({ rateLimit })).getHttpServer();
    const path = `/things/${UUID}`;
    expect((await request(a).get(path).expect(200)).headers['x-ratelimit-remaining']).toBe('3');
    expect((await request(b).get(path).expect(200)).headers['x-ratelimit-remaining']).toBe('2');
    expect((await request(a).get(path).expect(200)).headers['x-ratelimit-remaining']).toBe('1');
    expect((await request(b).get(path).expect(200)).headers['x-ratelimit-remaining']).toBe('0');
    await request(a).get(path).expect(429);
    await request(b).get(path).expect(429);
    // another prefix (another deployment) has its own counts
    const c = (await make({ rateLimit: { ...rateLimit, keyPrefix: `${keyPrefix}:other` } })).getHttpServer();
    await request(c).get(path).expect(200);
    // /metrics says the counts are shared and that no decision was taken in memory
    const metrics = (await request(a).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/^gatehouse_rate_limit_redis_up\{[^}]*\} 1$/m);
    expect(metrics).toMatch(/^gatehouse_rate_limit_local_total\{[^}]*\} 0$/m);
  });

  it('has no Redis gauges on /metrics without Redis', async () => {
    const s = (await make({ rateLimit: { points: 50, durationSec: 60 } })).getHttpServer();
    expect((await request(s).get('/metrics').expect(200)).text).not.toMatch(/gatehouse_rate_limit_/);
  });

  it('keeps serving (limits in memory) with a warning when Redis is unreachable', async () => {
    const sink = new LogSink();
    const app = await make({
      sink,
      rateLimit: {
        points: 2,
        durationSec: 60,
        redisUrl: 'redis://127.0.0.1:1',
        keyPrefix: `spec:${randomUUID()}`,
      },
    });
    const s = app.getHttpServer();
    expectHeaders(await request(s).get(`/things/${UUID}`).expect(200), 2);
    await request(s).get(`/things/${UUID}`).expect(200);
    await request(s).get(`/things/${UUID}`).expect(429);
    expect(sink.lines.some((l) => l['level'] === 'warn' && String(l['msg']).includes('Redis'))).toBe(true);
    // /metrics tells an operator the replica counts on its own: Redis down, three decisions taken in memory
    const metrics = (await request(s).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/^gatehouse_rate_limit_redis_up\{[^}]*\} 0$/m);
    expect(metrics).toMatch(/^gatehouse_rate_limit_local_total\{[^}]*\} 3$/m);
  });
});
