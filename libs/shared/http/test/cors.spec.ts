import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { makeApp } from './support.js';

const CONSOLE = 'http://localhost:3003';

/** CORS of the JSON APIs (identity, tree): the allowed origins only, everything else as without CORS. */
describe('CORS', () => {
  let app: NestExpressApplication;
  let bare: NestExpressApplication;
  beforeAll(async () => {
    app = await makeApp({ corsOrigins: [CONSOLE, 'https://console.example.com'] });
    bare = await makeApp({});
  });
  afterAll(async () => {
    await app.close();
    await bare.close();
  });

  it('answers the preflight of an allowed origin, before rate limits and routing', async () => {
    const res = await request(app.getHttpServer())
      .options('/things')
      .set('Origin', CONSOLE)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'Authorization, Content-Type, X-Evil')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe(CONSOLE);
    expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    expect(res.headers['access-control-allow-headers']).toBe('authorization, content-type');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('lets an allowed origin read answers, errors included, and the rate-limit headers', async () => {
    const res = await request(app.getHttpServer())
      .post('/things')
      .set('Origin', 'https://console.example.com')
      .send({ name: 42 })
      .expect(400);
    expect(res.headers['access-control-allow-origin']).toBe('https://console.example.com');
    expect(res.headers['access-control-expose-headers']).toContain('X-RateLimit-Remaining');
    expect(res.headers['vary']).toContain('Origin');
  });

  it('gives a foreign origin no CORS header at all, preflight or not', async () => {
    for (const origin of ['https://evil.example', 'http://localhost:3004', 'null']) {
      const pre = await request(app.getHttpServer())
        .options('/things')
        .set('Origin', origin)
        .set('Access-Control-Request-Method', 'POST');
      // answered as without CORS (the foundation's own OPTIONS answer), only without any CORS header
      const plain = await request(bare.getHttpServer()).options('/things');
      expect(pre.status).toBe(plain.status);
      const res = await request(app.getHttpServer())
        .get('/things/00000000-0000-0000-0000-000000000001')
        .set('Origin', origin);
      for (const r of [pre, res]) {
        expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
      }
    }
  });

  it('sends no CORS header when no origin is configured', async () => {
    const res = await request(bare.getHttpServer())
      .options('/things')
      .set('Origin', CONSOLE)
      .set('Access-Control-Request-Method', 'GET');
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });
});
