import * as oidc from 'openid-client';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenInfo, tokenRequest, type TestClient } from './support/fixtures.js';

/** Bad input and token-server policy, against the real token server. */
let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  client = await fx.client({ grantTypes: ['client_credentials', 'password', 'refresh_token'] });
});
afterAll(async () => {
  await h?.close();
});

const basicOf = (c: TestClient) => ({ id: c.id, secret: c.secret! });
const authz = (c: TestClient) =>
  `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret!)}`).toString('base64')}`;

const post = async (path: string, body: string, headers: Record<string, string>) => {
  const res = await fetch(`${h.url}${path}`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
};

/** A user's password login through `client` for a new API, with a refresh token. */
const userLogin = async () => {
  const api = await fx.resource();
  await fx.grant(client, api);
  const user = await fx.user();
  const t = await tokenRequest(
    h.url,
    {
      grant_type: 'password',
      username: user.email,
      password: user.password,
      audience: api.identifier,
      scope: 'offline_access',
    },
    { basic: basicOf(client) },
  );
  return { api, t };
};

const ccToken = async (identifier: string, c: TestClient = client) => {
  const r = await tokenRequest(
    h.url,
    { grant_type: 'client_credentials', audience: identifier },
    { basic: basicOf(c) },
  );
  expect(r.status).toBe(200);
  return String(r.body.access_token);
};

describe('crashes and leaks on bad input', () => {
  it('a NUL byte in audience/resource at /token is 400 with the error object (form and JSON)', async () => {
    const form = await tokenRequest(
      h.url,
      { grant_type: 'client_credentials', audience: 'urn:x\u0000y' },
      { basic: basicOf(client) },
    );
    expect(form.status).toBe(400);
    expect(form.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
    const json = await tokenRequest(
      h.url,
      { grant_type: 'client_credentials', resource: 'urn:x\u0000y' },
      { basic: basicOf(client), json: true },
    );
    expect(json.status).toBe(400);
    expect(json.body).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('NUL') });
  });

  it('a NUL byte in the bodies of /token/introspection and /revoke is 400', async () => {
    for (const path of ['/token/introspection', '/revoke']) {
      const form = await post(path, `token=ab%00cd`, {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: authz(client),
      });
      expect({ path, status: form.status }).toEqual({ path, status: 400 });
      expect(form.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
      const json = await post(path, JSON.stringify({ token: 'ab\u0000cd' }), {
        'content-type': 'application/json',
        authorization: authz(client),
      });
      expect({ path, status: json.status }).toEqual({ path, status: 400 });
      const clientId = await post(path, `token=abc&client_id=${client.id}%00`, {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect({ path, status: clientId.status }).toEqual({ path, status: 400 });
    }
  });

  it('deeply nested and prototype-polluting JSON bodies are 400, never 500', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const nested = await post('/token', `{"grant_type":${deep}}`, {
      'content-type': 'application/json',
      authorization: authz(client),
    });
    expect(nested.status).toBe(400);
    const proto = await post(
      '/token',
      JSON.stringify({ grant_type: 'client_credentials' }).replace('{', '{"__proto__":{"audience":"x"},'),
      { 'content-type': 'application/json', authorization: authz(client) },
    );
    expect(proto.status).toBeLessThan(500);
    expect(proto.body).toHaveProperty('error');
  });

  it('/tokeninfo never reads the token from the query string', async () => {
    const api = await fx.resource();
    await fx.grant(client, api);
    const token = await ccToken(api.identifier);
    const res = await fetch(`${h.url}/tokeninfo?token=${encodeURIComponent(token)}`, {
      method: 'POST',
      headers: { authorization: authz(client), 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('body'),
    });
  });

  it('a refresh token is no caller credential at /tokeninfo', async () => {
    const { api, t } = await userLogin();
    const refresh = String(t.body.refresh_token);
    expect(refresh).not.toBe('undefined');
    const other = await ccToken(api.identifier);
    const asCaller = await tokenInfo(h.url, other, { bearer: refresh });
    expect(asCaller.status).toBe(401);
    expect(asCaller.body).toMatchObject({ error: 'invalid_token' });
    const itself = await tokenInfo(h.url, refresh, { bearer: refresh });
    expect(itself.body).toEqual({ active: false });
    // Its own client may still look at it.
    expect((await tokenInfo(h.url, refresh, { basic: basicOf(client) })).body).toMatchObject({
      active: true,
      token_type: 'refresh_token',
    });
  });

  it("a client sees another client's token only when it is a resource server of the token's audience", async () => {
    const api = await fx.resource({ alg: 'opaque' });
    await fx.grant(client, api);
    const token = await ccToken(api.identifier);
    const stranger = await fx.client();
    const config = (c: TestClient) =>
      oidc.discovery(new URL(h.url), c.id, undefined, oidc.ClientSecretBasic(c.secret!), {
        execute: [oidc.allowInsecureRequests],
      });
    expect((await oidc.tokenIntrospection(await config(stranger), token)).active).toBe(false);
    expect((await tokenInfo(h.url, token, { basic: basicOf(stranger) })).body).toEqual({ active: false });
    expect((await oidc.tokenIntrospection(await config(client), token)).active).toBe(true);
    await fx.grant(stranger, api, []);
    expect((await oidc.tokenIntrospection(await config(stranger), token)).active).toBe(true);
  });

  it('/token/introspection answers RFC 7662 for JWT access tokens, never 400', async () => {
    for (const alg of ['RS256', 'ES256']) {
      const api = await fx.resource({ alg });
      await fx.grant(client, api);
      const token = await ccToken(api.identifier);
      const res = await post('/token/introspection', new URLSearchParams({ token }).toString(), {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: authz(client),
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        active: true,
        client_id: client.id,
        aud: api.identifier,
        token_type: 'Bearer',
        iss: h.url,
        exp: expect.any(Number),
        iat: expect.any(Number),
      });
    }
  });

  it('concurrent reuse of one refresh token: at most one wins, and the grant is revoked', async () => {
    const { t } = await userLogin();
    const refresh = String(t.body.refresh_token);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        tokenRequest(
          h.url,
          { grant_type: 'refresh_token', refresh_token: refresh },
          { basic: basicOf(client) },
        ),
      ),
    );
    const won = results.filter((r) => r.status === 200);
    expect(won.length).toBeLessThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_grant');
    }
    // Reuse revoked the grant: whatever the winner got is dead too.
    for (const w of won) {
      expect((await tokenInfo(h.url, String(w.body.access_token), { basic: basicOf(client) })).body).toEqual({
        active: false,
      });
      const again = await tokenRequest(
        h.url,
        { grant_type: 'refresh_token', refresh_token: String(w.body.refresh_token) },
        { basic: basicOf(client) },
      );
      expect(again.body.error).toBe('invalid_grant');
    }
    expect((await tokenInfo(h.url, String(t.body.access_token), { basic: basicOf(client) })).body).toEqual({
      active: false,
    });
  });
});

describe('rate limits keyed by unauthenticated strings', () => {
  let rl: AuthHarness;
  let rfx: Fixtures;
  beforeAll(async () => {
    rl = await startAuth({
      RATE_LIMIT_POINTS: '10',
      RATE_LIMIT_AUTH_FAILURES: '5',
      RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '5',
      AUTH_TRUST_PROXY: 'true',
    });
    rfx = new Fixtures(rl);
  });
  afterAll(async () => {
    await rl?.close();
  });

  const from = (ip: string, c: TestClient, secret = c.secret!) =>
    fetch(`${rl.url}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': ip,
        authorization: `Basic ${Buffer.from(`${c.id}:${secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', audience: 'urn:gatehouse:management' }),
    });

  it("wrong secrets naming a client spend the sender's address, never the client's budget", async () => {
    const victim = await rfx.client();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await from('203.0.113.9', victim, 'wrong-secret')).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);
    // The real client, elsewhere, still has its whole budget (an unauthorized audience is 400, not 401 or 429).
    const real: number[] = [];
    for (let i = 0; i < 10; i++) real.push((await from('198.51.100.7', victim)).status);
    expect(real.every((s) => s !== 429 && s !== 401)).toBe(true);
    expect((await from('198.51.100.7', victim)).status).toBe(429); // its own eleventh request
  });

  it('random bearer values cost their sender: after the failures allowed, 429 without asking for the token', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${rl.url}/tokeninfo`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': '203.0.113.77',
          authorization: `Bearer random-${i}-${Math.random().toString(36).slice(2)}`,
        },
        body: new URLSearchParams({ token: `random-${i}` }),
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);
  });
});

describe('lockout as a weapon, and an account oracle', () => {
  let lh: AuthHarness;
  let lfx: Fixtures;
  let c: TestClient;
  beforeAll(async () => {
    lh = await startAuth({
      AUTH_TRUST_PROXY: 'true',
      AUTH_LOCKOUT_THRESHOLD: '3',
      AUTH_LOCKOUT_SECONDS: '600',
    });
    lfx = new Fixtures(lh);
    c = await lfx.client({ grantTypes: ['password'] });
  });
  afterAll(async () => {
    await lh?.close();
  });

  const login = (ip: string, username: string, password: string) =>
    fetch(`${lh.url}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': ip,
        authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'password', username, password }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

  it('failures from one address lock only that address: the account still signs in from another', async () => {
    const user = await lfx.user();
    for (let i = 0; i < 5; i++) expect((await login('203.0.113.50', user.email, 'wrong')).status).toBe(400);
    expect((await login('203.0.113.50', user.email, user.password)).status).toBe(400);
    const elsewhere = await login('198.51.100.20', user.email, user.password);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.access_token).toEqual(expect.any(String));
  });

  it('unknown, wrong-password and locked accounts get the same answer', async () => {
    const user = await lfx.user();
    for (let i = 0; i < 3; i++) await login('203.0.113.60', user.email, 'wrong');
    const locked = await login('203.0.113.60', user.email, user.password);
    const wrong = await login('203.0.113.61', user.email, 'wrong');
    const unknown = await login('203.0.113.62', `nobody-${Date.now()}@example.test`, 'whatever');
    for (const r of [locked, wrong, unknown]) expect(r.status).toBe(400);
    expect(locked.body).toEqual(unknown.body);
    expect(wrong.body).toEqual(unknown.body);
    expect(JSON.stringify(locked.body)).not.toMatch(/lock/i);
  });
});

describe('hole 6: one noisy address blocks everyone behind it', () => {
  let nh: AuthHarness;
  let nfx: Fixtures;
  let c: TestClient;
  let audience: string;
  beforeAll(async () => {
    // RATE_LIMIT_AUTH_FAILURES and _PER_ADDRESS at their defaults (100, 1000); the test connects from loopback.
    nh = await startAuth({ TRUST_PROXY: 'loopback', RATE_LIMIT_OVERRIDES: 'POST /token=5' });
    nfx = new Fixtures(nh);
    c = await nfx.client({ grantTypes: ['client_credentials'] });
    const api = await nfx.resource({ alg: 'RS256' });
    await nfx.grant(c, api);
    audience = api.identifier;
  });
  afterAll(async () => {
    await nh?.close();
  });

  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  const token = (ip: string, authorization: string, params: Record<string, string> = {}) =>
    fetch(`${nh.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip, authorization },
      body: new URLSearchParams({ grant_type: 'client_credentials', audience, ...params }),
    });
  const introspect = (ip: string, authorization: string, about: string) =>
    fetch(`${nh.url}/tokeninfo`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip, authorization },
      body: new URLSearchParams({ token: about }),
    });

  it('a valid client secret and a valid bearer token are served after 100+ bad ones from the same address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 110; i++)
      statuses.push((await token('203.0.113.10', basic(c.id, `wrong-${i}`))).status);
    expect(statuses.every((st) => st === 401)).toBe(true);
    const good = await token('203.0.113.10', basic(c.id, c.secret!));
    expect(good.status).toBe(200);
    const access = ((await good.json()) as { access_token: string }).access_token;

    const bearers: number[] = [];
    for (let i = 0; i < 110; i++)
      bearers.push((await introspect('203.0.113.10', `Bearer random-${i}`, 'another')).status);
    expect(bearers.filter((st) => st !== 401)).toEqual([]);
    const info = await introspect('203.0.113.10', `Bearer ${access}`, access);
    expect(info.status).toBe(200);
    expect(((await info.json()) as { active: boolean }).active).toBe(true);
  });

  it('300 concurrent bad credentials: at most the budget are checked, the rest 429 unchecked', async () => {
    const answers = await Promise.all(
      Array.from({ length: 300 }, () => token('203.0.113.20', basic(c.id, 'always-the-same-wrong-secret'))),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((st) => st === 401).length).toBeLessThanOrEqual(100);
    expect(statuses.filter((st) => st === 429).length).toBeGreaterThanOrEqual(200);
    const bearers = await Promise.all(
      Array.from({ length: 300 }, () => introspect('203.0.113.21', 'Bearer the-same-bad-token', 'x')),
    );
    expect(bearers.filter((r) => r.status === 401).length).toBeLessThanOrEqual(100);
    // the good secret from the same address is still served
    expect((await token('203.0.113.20', basic(c.id, c.secret!))).status).toBe(200);
  });

  it('a client is one client however its id is written: an upper-case id is no client, and shares the quota', async () => {
    const d = await nfx.client({ grantTypes: ['client_credentials'] });
    const api = await nfx.resource({ alg: 'RS256' });
    await nfx.grant(d, api);
    const upper = d.id.toUpperCase();
    const asked = { audience: api.identifier };
    const viaBasic = await token('198.51.100.30', basic(upper, d.secret!), asked);
    expect(viaBasic.status).toBe(401);
    expect(((await viaBasic.json()) as { error: string }).error).toBe('invalid_client');
    const viaForm = await fetch(`${nh.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        audience: api.identifier,
        client_id: upper,
        client_secret: d.secret!,
      }),
    });
    expect(viaForm.status).toBe(401);
    const lower = await token('198.51.100.30', basic(d.id, d.secret!), asked);
    expect(lower.status).toBe(200);
    const access = ((await lower.json()) as { access_token: string }).access_token;
    expect((await introspect('198.51.100.30', basic(upper, d.secret!), access)).status).toBe(401);
    // its quota (5 tokens a window) is one, however the id is written
    for (let i = 0; i < 4; i++)
      expect((await token('198.51.100.30', basic(d.id, d.secret!), asked)).status).toBe(200);
    expect((await token('198.51.100.30', basic(d.id, d.secret!), asked)).status).toBe(429);
    expect((await token('198.51.100.31', basic(upper, d.secret!), asked)).status).toBe(429);
  });
});
