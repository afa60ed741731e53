import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import request from 'supertest';
import { DomainError, ErrorCode } from '@gatehouse/errors';
import { FastLanePipeline, type FastLane, type FastLaneDeps } from '../src/index.js';
import { LogSink, makeApp, type TestAppOptions } from './support.js';

const UUID = '3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10';

function json(res: ServerResponse, status: number, body: unknown) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

/** A raw handler on the lane (as the token server is): serves /lane/*, reads its own bodies. */
const lane: FastLane = {
  matches: (_method, path) => path.startsWith('/lane/'),
  handle(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/lane/ok' && req.method === 'GET') {
      // no Express decoration: not its request prototype, no originalUrl
      return json(res, 200, { ok: true, plain: !('app' in req) && !('originalUrl' in req) });
    }
    if (path === '/lane/echo' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => json(res, 200, { raw: Buffer.concat(chunks).toString('utf8') }));
      return;
    }
    if (path === '/lane/auth') {
      const good = req.headers.authorization === 'Bearer good';
      return json(res, good ? 200 : 401, good ? { ok: true } : { error: 'invalid_token' });
    }
    if (path === '/lane/boom') throw new Error('SELECT secret FROM somewhere');
    if (path === '/lane/forbidden') return next(new DomainError(ErrorCode.Forbidden, 'Not yours'));
    next();
  },
};

const laneApp = (opts: TestAppOptions = {}) =>
  makeApp({
    routes: ['GET /lane/ok', 'POST /lane/echo', 'GET /lane/auth', 'GET /lane/boom'],
    oauthErrorPaths: ['/lane'],
    fastLane: () => lane,
    ...opts,
  });

describe('fast lane', () => {
  const sink = new LogSink();
  let app: NestExpressApplication;
  beforeAll(async () => {
    app = await laneApp({
      sink,
      rateLimit: { points: 100, durationSec: 60, overrides: { 'POST /lane/echo': 2 } },
    });
  });
  afterAll(() => app.close());

  it('serves claimed requests without Express, on the same server object', async () => {
    const res = await request(app.getHttpServer()).get('/lane/ok').expect(200);
    expect(res.body).toEqual({ ok: true, plain: true });
    // everything else is Nest as before
    await request(app.getHttpServer()).get(`/things/${UUID}`).expect(200, { id: UUID });
    await request(app.getHttpServer()).get('/livez').expect(200);
  });

  it('echoes a sane X-Request-Id (else a uuid) and writes the one completion line', async () => {
    const res = await request(app.getHttpServer())
      .get('/lane/ok?code=secret-code')
      .set('X-Request-Id', 'lane.req-1')
      .expect(200);
    expect(res.headers['x-request-id']).toBe('lane.req-1');
    const lines = sink.lines.filter((l) => (l['req'] as { id?: string } | undefined)?.id === 'lane.req-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      service: 'http-spec',
      msg: 'request completed',
      req: { method: 'GET', url: '/lane/ok?code=%5Bredacted%5D' },
      res: { statusCode: 200 },
    });
    expect(typeof lines[0]['responseTime']).toBe('number');
    const other = await request(app.getHttpServer())
      .get('/lane/ok')
      .set('X-Request-Id', 'bad id')
      .expect(200);
    expect(other.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('counts metrics with the route pattern label', async () => {
    const s = app.getHttpServer();
    await request(s).get('/lane/ok').expect(200);
    await request(s).get('/lane/nowhere').expect(404);
    const text = (await request(s).get('/metrics').expect(200)).text;
    expect(text).toMatch(
      /http_requests_total\{method="GET",route="\/lane\/ok",status="200",service="http-spec"\} \d+/,
    );
    expect(text).toContain(
      'http_requests_total{method="GET",route="<unmatched>",status="404",service="http-spec"} 1',
    );
    expect(text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/lane\/ok",status="200"\} \d+/);
  });

  it('leaves bodies unread for the handler; rate limits with headers and a 429 in the OAuth shape', async () => {
    const s = app.getHttpServer();
    const first = await request(s).post('/lane/echo').type('form').send('a=1&b=2').expect(200);
    expect(first.body).toEqual({ raw: 'a=1&b=2' });
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    await request(s).post('/lane/echo').send('x').expect(200);
    const res = await request(s).post('/lane/echo').send('x').expect(429);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(res.body).toMatchObject({ code: 'too_many_requests', error: 'too_many_requests' });
    expect(res.body.error_description).toBe(res.body.message);
    // other lane endpoints keep their own budget
    await request(s).get('/lane/ok').expect(200);
  });

  it('answers a thrown error 500 with an error id, logged, nothing of the error in the body', async () => {
    const res = await request(app.getHttpServer()).get('/lane/boom').expect(500);
    expect(res.body.code).toBe('internal_error');
    expect(res.body.error).toBe('internal_error');
    expect(res.body.message).toMatch(/^Internal error \(error id: [0-9a-f-]{36}\)$/);
    expect(res.text).not.toContain('SELECT');
    const errorId = /error id: ([0-9a-f-]{36})/.exec(res.body.message)?.[1];
    const logged = sink.lines.find((l) => l['errorId'] === errorId);
    expect(logged).toMatchObject({ level: 'error', reqId: res.headers['x-request-id'] });
  });

  it('answers next(err) as the exception filter, next() as a route miss (404, 405 + Allow)', async () => {
    const s = app.getHttpServer();
    const forbidden = await request(s).get('/lane/forbidden').expect(403);
    expect(forbidden.body).toEqual({
      error: 'forbidden',
      error_description: 'Not yours',
      code: 'forbidden',
      message: 'Not yours',
    });
    const missing = await request(s).get('/lane/unknown').expect(404);
    expect(missing.body.code).toBe('not_found');
    const wrong = await request(s).delete('/lane/ok').expect(405);
    expect(wrong.headers['allow']).toBe('GET, HEAD, OPTIONS');
    expect(wrong.body.error).toBe('method_not_allowed');
  });
});

describe('fast lane rate limits by caller', () => {
  const apps: NestExpressApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  const make = async (opts: TestAppOptions) => {
    const a = await laneApp(opts);
    apps.push(a);
    return a.getHttpServer();
  };

  it('counts failed authentications per address and credential, and per address; a good credential still passes', async () => {
    const s = await make({
      rateLimit: { points: 100, durationSec: 60, authFailures: 2, authFailuresPerAddress: 3 },
    });
    await request(s).get('/lane/auth').set('Authorization', 'Bearer bad-1').expect(401);
    await request(s).get('/lane/auth').set('Authorization', 'Bearer bad-1').expect(401);
    const res = await request(s).get('/lane/auth').set('Authorization', 'Bearer bad-1').expect(429);
    expect(res.body.code).toBe('too_many_requests');
    await request(s).get('/lane/auth').set('Authorization', 'Bearer good').expect(200);
    await request(s).get('/lane/auth').set('Authorization', 'Bearer bad-2').expect(401);
    // the address's budget is spent: new credentials are refused unchecked, the one proven good still passes
    await request(s).get('/lane/auth').set('Authorization', 'Bearer bad-3').expect(429);
    await request(s).get('/lane/auth').set('Authorization', 'Bearer good').expect(200);
    // without credentials the address still has its own budget
    await request(s).get('/lane/ok').expect(200);
  });

  it('counts good credentials against the caller they name', async () => {
    const s = await make({ rateLimit: { points: 1, durationSec: 60 } });
    await request(s).get('/lane/auth').set('Authorization', 'Bearer good').expect(200);
    await request(s).get('/lane/auth').set('Authorization', 'Bearer good').expect(429);
  });

  it('opens a new window once the last one is over (in-memory counts)', async () => {
    const s = await make({ rateLimit: { points: 1, durationSec: 1 } });
    await request(s).get('/lane/ok').expect(200);
    const windowStarted = Date.now(); // at the latest
    const refused = await request(s).get('/lane/ok').expect(429);
    expect(refused.headers['retry-after']).toBe('1');
    // The 1 s window is the rule under test (counted by the wall clock on the hot path): wait until it is over.
    await new Promise((r) => setTimeout(r, Math.max(0, windowStarted + 1_050 - Date.now())));
    const again = await request(s).get('/lane/ok').expect(200);
    expect(again.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('keys the address on X-Forwarded-For only with trust proxy, as Express does', async () => {
    const trusted = await make({ rateLimit: { points: 1, durationSec: 60 }, trustProxy: true });
    await request(trusted).get('/lane/ok').set('X-Forwarded-For', '203.0.113.1').expect(200);
    await request(trusted).get('/lane/ok').set('X-Forwarded-For', '203.0.113.1').expect(429);
    await request(trusted).get('/lane/ok').set('X-Forwarded-For', '203.0.113.2').expect(200);
    const direct = await make({ rateLimit: { points: 1, durationSec: 60 } });
    await request(direct).get('/lane/ok').set('X-Forwarded-For', '203.0.113.1').expect(200);
    await request(direct).get('/lane/ok').set('X-Forwarded-For', '203.0.113.2').expect(429);
  });
});

describe('fast lane client address', () => {
  it.each<[string, boolean | number | string | undefined]>([
    ['off', undefined],
    ['false', false],
    ['true', true],
    ['one hop', 1],
    ['two hops', 2],
    ['loopback', 'loopback'],
    ['a list', '10.0.0.0/8, loopback'],
    ['an unrelated subnet', '192.168.0.0/16'],
  ])("is Express's req.ip with trust proxy %s", async (_name, setting) => {
    const a = express();
    if (setting !== undefined) a.set('trust proxy', setting);
    const pipeline = new FastLanePipeline({
      trust: a.get('trust proxy fn') as FastLaneDeps['trust'],
    } as FastLaneDeps);
    a.get('/ip', (req, res) => {
      res.json({ express: req.ip, lane: pipeline.clientIp(req) });
    });
    for (const xff of [undefined, '198.51.100.7', '198.51.100.7, 10.1.2.3', 'garbage, 10.0.0.1']) {
      const r = request(a).get('/ip');
      const res = await (xff ? r.set('X-Forwarded-For', xff) : r).expect(200);
      expect(res.body.lane).toBe(res.body.express);
      expect(res.body.lane).toBeDefined();
    }
  });
});
