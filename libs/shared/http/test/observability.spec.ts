import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { LogSink, makeApp } from './support.js';

const UUID = '3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10';

describe('request ids and logs', () => {
  let app: NestExpressApplication;
  const sink = new LogSink();
  beforeAll(async () => {
    app = await makeApp({ sink });
  });
  afterAll(() => app.close());

  it('echoes a sane X-Request-Id and logs it', async () => {
    const res = await request(app.getHttpServer())
      .get(`/things/${UUID}`)
      .set('X-Request-Id', 'abc.DEF-123_x')
      .expect(200);
    expect(res.headers['x-request-id']).toBe('abc.DEF-123_x');
    const line = sink.lines.find((l) => (l['req'] as { id?: string } | undefined)?.id === 'abc.DEF-123_x');
    expect(line).toMatchObject({ level: 'info', service: 'http-spec', res: { statusCode: 200 } });
  });

  it('replaces an insane X-Request-Id with a uuid', async () => {
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const res = await request(app.getHttpServer()).get('/livez').set('X-Request-Id', bad).expect(200);
      expect(res.headers['x-request-id']).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
    }
  });

  it('gives every response a request id, errors included', async () => {
    const res = await request(app.getHttpServer()).get('/nowhere').expect(404);
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('never logs the Authorization header or cookies', async () => {
    await request(app.getHttpServer())
      .get(`/things/${UUID}`)
      .set('Authorization', 'Bearer super-secret-token')
      .set('Cookie', 'sid=secret-cookie')
      .expect(200);
    const all = JSON.stringify(sink.lines);
    expect(all).not.toContain('super-secret-token');
    expect(all).not.toContain('secret-cookie');
  });

  it("writes Nest's own logs as JSON through pino", () => {
    expect(
      sink.lines.some((l) => l['context'] === 'RouterExplorer' || l['context'] === 'RoutesResolver'),
    ).toBe(true);
  });
});

describe('metrics', () => {
  let app: NestExpressApplication;
  beforeAll(async () => {
    app = await makeApp();
  });
  afterAll(() => app.close());

  it('serves Prometheus text with request counters labelled by route pattern', async () => {
    const s = app.getHttpServer();
    await request(s).get(`/things/${UUID}`).expect(200);
    await request(s).get('/things/b0a1c6a4-1d2e-4f7a-8b9c-0d1e2f3a4b5c').expect(200);
    await request(s).post('/things').send({}).expect(400);
    await request(s).get('/unknown/path/1').expect(404);
    const res = await request(s).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain(
      'http_requests_total{method="GET",route="/things/:thing_id",status="200",service="http-spec"} 2',
    );
    expect(res.text).toContain(
      'http_requests_total{method="POST",route="/things",status="400",service="http-spec"} 1',
    );
    expect(res.text).toContain(
      'http_requests_total{method="GET",route="<unmatched>",status="404",service="http-spec"} 1',
    );
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{[^}]*method="GET",route="\/things\/:thing_id",status="200"\} 2/,
    );
    expect(res.text).toContain('process_cpu_user_seconds_total');
    expect(res.text).not.toContain(UUID);
  });
});

describe('health', () => {
  it('/livez and /readyz answer 200 {status: ok} when ready', async () => {
    const app = await makeApp();
    try {
      await request(app.getHttpServer()).get('/livez').expect(200, { status: 'ok' });
      await request(app.getHttpServer()).get('/readyz').expect(200, { status: 'ok' });
    } finally {
      await app.close();
    }
  });

  it('/readyz answers 503 service_unavailable when readiness throws, /livez stays 200', async () => {
    let up = false;
    const app = await makeApp({
      readiness: async () => {
        if (!up) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      },
    });
    try {
      const res = await request(app.getHttpServer()).get('/readyz').expect(503);
      expect(res.body).toEqual({
        code: 'service_unavailable',
        message: 'Not ready: the database does not answer',
      });
      await request(app.getHttpServer()).get('/livez').expect(200);
      up = true;
      await request(app.getHttpServer()).get('/readyz').expect(200);
    } finally {
      await app.close();
    }
  });

  it('/readyz answers 503 when readiness hangs past the timeout', async () => {
    const app = await makeApp({ readiness: () => new Promise(() => undefined), readinessTimeoutMs: 100 });
    try {
      await request(app.getHttpServer()).get('/readyz').expect(503);
    } finally {
      await app.close();
    }
  });
});

describe('OpenAPI', () => {
  let app: NestExpressApplication;
  beforeAll(async () => {
    app = await makeApp();
  });
  afterAll(() => app.close());

  it('serves an OpenAPI 3.1 document with the routes, the error schema and the bearer scheme', async () => {
    const res = await request(app.getHttpServer()).get('/docs/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    const doc = JSON.parse(res.text);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'Spec API', version: '1.0.0' });
    expect(doc.info.description).toContain('Test service');
    expect(doc.info.description).toContain('X-RateLimit-Reset');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/things', '/things/{thing_id}', '/livez', '/readyz']),
    );
    expect(doc.paths['/metrics']).toBeUndefined();
    expect(doc.paths['/things'].post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/CreateThingDto',
    );
    expect(doc.paths['/things'].post.responses['409'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorResponseDto',
    );
    expect(doc.paths['/things'].post.responses['429']).toBeDefined();
    expect(doc.components.schemas.ErrorResponseDto.required).toEqual(
      expect.arrayContaining(['code', 'message']),
    );
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await request(app.getHttpServer()).get('/docs').expect(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('swagger');
  });
});

describe('hole 10: /docs (Swagger UI) has no security headers', () => {
  let app: NestExpressApplication;
  beforeAll(async () => {
    app = await makeApp();
  });
  afterAll(() => app.close());

  it('the page, its scripts and the document: CSP Swagger UI works under, no framing, nosniff', async () => {
    for (const path of [
      '/docs',
      '/docs/swagger-ui-init.js',
      '/docs/swagger-ui-bundle.js',
      '/docs/openapi.json',
    ]) {
      const res = await request(app.getHttpServer()).get(path);
      expect([path, res.status]).toEqual([path, 200]);
      expect([path, res.headers['x-frame-options']]).toEqual([path, 'DENY']);
      expect([path, res.headers['x-content-type-options']]).toEqual([path, 'nosniff']);
      expect([path, res.headers['referrer-policy']]).toEqual([path, 'no-referrer']);
      const csp = String(res.headers['content-security-policy'] ?? '');
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      // Swagger UI loads its own scripts; no inline script, no eval
      expect(csp).toContain("script-src 'self';");
      expect(csp).not.toMatch(/script-src[^;]*unsafe/);
      expect(csp).toContain("connect-src 'self'");
    }
    // the page has no inline script for the CSP to block (its init code is a file)
    const page = await request(app.getHttpServer()).get('/docs').expect(200);
    expect(page.text).not.toMatch(/<script>/);
  });
});
