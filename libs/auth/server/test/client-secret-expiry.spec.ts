import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenRequest, type TestClient, type TestResource } from './support/fixtures.js';

/**
 * clients.client_secret_expires_at is honoured everywhere a secret is checked: /token (the client_credentials fast
 * lane and oidc-provider's grants), /token/introspection, /revoke, /tokeninfo, /device/code and
 * /passwordless/start. An expired secret is 401 invalid_client from the instant it expires (oidc-provider's own check
 * would allow 15 s more and answer 400), exactly as a wrong secret; a secret that expires later works.
 */
let h: AuthHarness;
let fx: Fixtures;
let api: TestResource;

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  api = await fx.resource({ alg: 'ES256', scopes: ['read'] });
});
afterAll(async () => {
  await h?.close();
});

const GRANTS = ['client_credentials', 'password', 'refresh_token', 'device_code', 'otp'];

async function clientExpiringAt(at: Date | null): Promise<TestClient> {
  const c = await fx.client({ grantTypes: GRANTS });
  await fx.grant(c, api, ['read']);
  await fx.ds.rows(`UPDATE clients SET client_secret_expires_at = $2 WHERE id = $1`, [c.id, at]);
  return c;
}

const basic = (c: TestClient, secret = c.secret!) =>
  `Basic ${Buffer.from(`${c.id}:${secret}`).toString('base64')}`;

/** A form POST with Basic credentials: status and OAuth error. */
async function post(path: string, c: TestClient, params: Record<string, string>, secret?: string) {
  const res = await fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { authorization: basic(c, secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  return { status: res.status, error: body.error, description: body.error_description };
}

const ENDPOINTS: [string, string, Record<string, string>][] = [
  ['client_credentials (fast lane)', '/token', { grant_type: 'client_credentials', audience: '' }],
  [
    'client_credentials (oidc-provider)',
    '/token',
    { grant_type: 'client_credentials', audience: '', scope: 'read', x_through_provider: '1' },
  ],
  ['password grant', '/token', { grant_type: 'password', username: 'nobody@auth.test', password: 'x' }],
  ['refresh_token grant', '/token', { grant_type: 'refresh_token', refresh_token: 'unknown' }],
  ['introspection', '/token/introspection', { token: 'unknown' }],
  ['revocation', '/revoke', { token: 'unknown' }],
  ['tokeninfo', '/tokeninfo', { token: 'unknown' }],
  ['device authorization', '/device/code', { scope: 'openid' }],
  ['passwordless start', '/passwordless/start', { username: 'nobody@auth.test' }],
];
const withAudience = (params: Record<string, string>) =>
  'audience' in params ? { ...params, audience: api.identifier } : params;

describe('an expired client secret', () => {
  it.each(ENDPOINTS)('%s: 401 invalid_client, as a wrong secret', async (_what, path, params) => {
    const expired = await clientExpiringAt(new Date(Date.now() - 1000));
    const wrong = await clientExpiringAt(null);
    const a = await post(path, expired, withAudience(params));
    const b = await post(path, wrong, withAudience(params), 'not-the-secret');
    expect({ status: a.status, error: a.error }).toEqual({ status: 401, error: 'invalid_client' });
    // one answer: an expired secret is not told apart from a wrong one
    expect(a).toEqual(b);
  });

  it.each(ENDPOINTS)('%s: a secret that expires later still authenticates', async (_what, path, params) => {
    const later = await clientExpiringAt(new Date(Date.now() + 3600_000));
    const res = await post(path, later, withAudience(params));
    expect(res.error).not.toBe('invalid_client');
    expect(res.status).not.toBe(401);
  });

  it('counts from the very instant it passes (no clock tolerance) on the fast lane and in oidc-provider', async () => {
    const expiresAt = Date.now() + 1500;
    const c = await clientExpiringAt(new Date(expiresAt));
    const cc = { grant_type: 'client_credentials', audience: api.identifier };
    const viaProvider = { ...cc, scope: 'read', x_through_provider: '1' };
    expect((await tokenRequest(h.url, cc, { basic: { id: c.id, secret: c.secret! } })).status).toBe(200);
    expect((await tokenRequest(h.url, viaProvider, { basic: { id: c.id, secret: c.secret! } })).status).toBe(
      200,
    );
    // The rule under test needs the secret's expiry instant to pass (the running server reads the wall clock).
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
    expect((await tokenRequest(h.url, cc, { basic: { id: c.id, secret: c.secret! } })).status).toBe(401);
    expect((await tokenRequest(h.url, viaProvider, { basic: { id: c.id, secret: c.secret! } })).status).toBe(
      401,
    );
  });
});
