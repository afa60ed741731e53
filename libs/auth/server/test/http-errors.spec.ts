// The HTTP error shapes of the foundation, seen on the real token server: 404, 405 with Allow, 413, malformed
// bodies, rate-limit headers on every response and 429 after a low limit set by env.
import request from 'supertest';
import { startAuth, type AuthHarness } from './support/auth-app.js';

describe('auth: HTTP error shapes', () => {
  let h: AuthHarness;

  beforeAll(async () => {
    h = await startAuth({ RATE_LIMIT_OVERRIDES: 'POST /token=3,GET /jwks=2', RATE_LIMIT_WINDOW_SEC: '60' });
  });
  afterAll(async () => {
    await h?.close();
  });

  const rateLimitHeaders = (res: request.Response) => {
    expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
  };

  it('404 not_found for an unknown route, with rate-limit headers', async () => {
    const res = await request(h.url).get('/no/such/route').expect(404);
    expect(res.body).toMatchObject({ code: 'not_found' });
    expect(typeof res.body.message).toBe('string');
    rateLimitHeaders(res);
  });

  it('405 method_not_allowed with Allow on a known path', async () => {
    const res = await request(h.url).delete('/token').expect(405);
    expect(res.body).toMatchObject({ code: 'method_not_allowed' });
    expect(res.headers.allow).toContain('POST');
    const live = await request(h.url).post('/livez').expect(405);
    expect(live.headers.allow).toContain('GET');
  });

  // Found by tools/reliability/fuzz.mjs: a POSTed /authorize was routed nowhere and answered 204 with no body, and a
  // device form posted without its session was Koa's plain-text 500.
  it('POST /authorize is 405 with Allow: GET (oidc-provider serves GET only; see the OpenAPI description)', async () => {
    const res = await request(h.url).post('/authorize').type('form').send({ client_id: 'x' }).expect(405);
    expect(res.body).toMatchObject({ code: 'method_not_allowed', error: 'method_not_allowed' });
    expect(res.headers.allow).toBe('GET');
  });

  it('RP-initiated logout: another method is 405 with Allow (was 404; found by tools/reliability/fuzz.mjs)', async () => {
    for (const [method, path, allow] of [
      ['put', '/session/end', 'GET'],
      ['post', '/session/end', 'GET'],
      ['get', '/session/end/confirm', 'POST'],
      ['delete', '/session/end/success', 'GET'],
    ] as const) {
      const res = await request(h.url)[method](path);
      expect([path, method, res.status, res.headers.allow]).toEqual([path, method, 405, allow]);
      expect(res.body).toMatchObject({ code: 'method_not_allowed' });
    }
  });

  it('a device form posted without the session its page started is a 400, as a page or an error object', async () => {
    const json = await request(h.url)
      .post('/device')
      .type('form')
      .send({ user_code: 'ABCD-EFGH', xsrf: 'x' });
    expect(json.status).toBe(400);
    expect(json.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
    expect(json.body.message).toMatch(/form has expired/);
    const page = await request(h.url)
      .post('/device')
      .set('Accept', 'text/html')
      .type('form')
      .send({ user_code: 'ABCD-EFGH' });
    expect(page.status).toBe(400);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toMatch(/form has expired/);
  });

  it('413 payload_too_large for a body over 1 MiB, in the same error shape', async () => {
    const big = JSON.stringify({ token: 'x'.repeat(1024 * 1024 + 10) });
    const res = await request(h.url).post('/tokeninfo').set('Content-Type', 'application/json').send(big);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large' });
  });

  it('400 for a malformed JSON body at the token endpoint, in both error shapes', async () => {
    const res = await request(h.url)
      .post('/token')
      .set('Content-Type', 'application/json')
      .send('{"grant_type": ');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', error: 'invalid_request' });
  });

  it('429 too_many_requests after the per-endpoint limit, telling the client to check the headers', async () => {
    const statuses: number[] = [];
    let last: request.Response | undefined;
    for (let i = 0; i < 3; i++) {
      last = await request(h.url).get('/jwks');
      statuses.push(last.status);
      rateLimitHeaders(last);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(last!.body).toMatchObject({ code: 'too_many_requests' });
    expect(last!.body.message).toMatch(/X-RateLimit-Limit/);
    expect(last!.headers['x-ratelimit-limit']).toBe('2');
    expect(last!.headers['x-ratelimit-remaining']).toBe('0');
    expect(last!.headers['retry-after']).toMatch(/^\d+$/);
  });
});
