// Smaller hardening of the token server: undecodable credentials and cookies are the caller's error (never a 500),
// the pages oidc-provider renders itself carry a CSP and frame protection, and an https issuer sends HSTS.
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenRequest, type TestClient } from './support/fixtures.js';

let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  client = await fx.client({ grantTypes: ['client_credentials', 'refresh_token', 'otp'] });
});
afterAll(async () => {
  await h?.close();
});

const basicRaw = (raw: string) => `Basic ${Buffer.from(raw, 'utf8').toString('base64')}`;

async function post(path: string, headers: Record<string, string>, body: Record<string, string>) {
  const res = await fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body).toString(),
    redirect: 'manual',
  });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

describe('hole 10: bad percent-encoding in Basic credentials and cookies', () => {
  // RFC 6749 2.3.1: client id and secret are form-url-encoded inside Basic; '%zz' and a cut UTF-8 sequence are not.
  const broken = [`%zz:secret`, `${'x'}:%E0%A4%A`, `%:%`];

  it.each([
    ['/token', { grant_type: 'client_credentials', audience: 'https://api.example' }],
    ['/token/introspection', { token: 'abc' }],
    ['/revoke', { token: 'abc' }],
    ['/tokeninfo', { token: 'abc' }],
    ['/passwordless/start', { connection: 'email', username: 'someone@example.com', send_type: 'code' }],
  ])('%s answers 400/401 with the error object, never 500', async (path, body) => {
    for (const raw of broken) {
      const id = raw.startsWith('x:') ? `${client.id}:${raw.slice(2)}` : raw;
      const res = await post(path, { authorization: basicRaw(id) }, body);
      expect([path, raw, [400, 401].includes(res.status) ? '4xx' : res.status]).toEqual([path, raw, '4xx']);
      expect(res.json).toMatchObject({ error: expect.any(String), code: expect.any(String) });
      expect(typeof res.json?.message).toBe('string');
    }
  });

  it("the ticket form's CSRF cookie undecodable: the form's own 400 page, never 500", async () => {
    for (const path of ['/tickets/password-change', '/tickets/email-verification']) {
      const res = await post(
        path,
        { cookie: 'gh.ticket.csrf=%E0%A4%A', accept: 'text/html' },
        { ticket: 'x'.repeat(43), csrf: '%E0%A4%A', password: 'a-long-enough-password-1' },
      );
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const get = await fetch(`${h.url}${path}?ticket=${'x'.repeat(43)}`, {
        headers: { cookie: 'gh.ticket.csrf=%zz' },
      });
      expect([path, get.status]).toEqual([path, 400]);
    }
  });
});

describe("hole 10: oidc-provider's own pages (form_post, errors, logout) have CSP and frame protection", () => {
  const framing = (headers: Headers) => {
    expect(headers.get('x-frame-options')).toBe('DENY');
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('referrer-policy')).toBe('no-referrer');
    const csp = headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).toMatch(/default-src 'none'/);
    return csp;
  };

  it('the form_post auto-submit page: its inline script allowed by hash, and nothing else', async () => {
    // RP-initiated logout without a session answers with oidc-provider's form_post page
    const res = await fetch(`${h.url}/session/end`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('document.forms[0].submit()');
    const csp = framing(res.headers);
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1];
    const digest = createHash('sha256').update(script).digest('base64');
    const scriptSrc = /script-src([^;]*)/.exec(csp)![1].trim().split(/\s+/);
    expect(scriptSrc).toEqual([`'sha256-${digest}'`]);
    expect(csp).not.toMatch(/unsafe-inline/);
  });

  it('an error at /authorize, as a page or as JSON', async () => {
    const err = await fetch(`${h.url}/authorize?client_id=nobody&response_type=code&scope=openid`, {
      headers: { accept: 'text/html' },
    });
    expect(err.status).toBe(400);
    framing(err.headers);
    const json = await fetch(`${h.url}/authorize?client_id=nobody&response_type=code&scope=openid`);
    expect(json.status).toBe(400);
    expect(json.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe('hole 10: HSTS when the issuer is https', () => {
  it('no Strict-Transport-Security on an http issuer', async () => {
    const res = await fetch(`${h.url}/jwks`);
    expect(res.headers.get('strict-transport-security')).toBeNull();
  });

  it('an https issuer: every answer of the token server carries Strict-Transport-Security', async () => {
    const s = await startAuth({ ISSUER: 'https://auth.example.test' });
    try {
      const c = await new Fixtures(s).client();
      const auth = `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`;
      const answers = [
        await fetch(`${s.url}/jwks`),
        await fetch(`${s.url}/.well-known/openid-configuration`),
        await fetch(`${s.url}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
          body: 'grant_type=client_credentials&audience=https%3A%2F%2Fnone.example',
        }),
        await fetch(`${s.url}/tokeninfo`, { method: 'POST', headers: { authorization: auth }, body: '' }),
        await fetch(`${s.url}/session/end`),
        await fetch(`${s.url}/livez`),
        await fetch(`${s.url}/no/such/route`),
      ];
      for (const res of answers) {
        expect([res.url, res.headers.get('strict-transport-security')]).toEqual([
          res.url,
          'max-age=31536000; includeSubDomains',
        ]);
      }
    } finally {
      await s.close();
    }
  });
});

describe('hole 10: sealed client secrets are not bound to their row', () => {
  const cc = (c: { id: string; secret: string }, audience: string) =>
    tokenRequest(h.url, { grant_type: 'client_credentials', audience }, { basic: c });

  it("a sealed secret copied into another client's row no longer opens there", async () => {
    const api = await fx.resource();
    const a = await fx.client();
    const b = await fx.client();
    await fx.grant(a, api, ['read']);
    await fx.grant(b, api, ['read']);
    expect((await cc({ id: b.id, secret: b.secret! }, api.identifier)).status).toBe(200);
    // someone who can write the table (not read the key) gives b the sealed secret a is known by
    await fx.ds.rows(
      `UPDATE clients SET client_secret_enc = (SELECT client_secret_enc FROM clients WHERE id = $1), updated_at = now()
        WHERE id = $2`,
      [a.id, b.id],
    );
    const res = await cc({ id: b.id, secret: a.secret! }, api.identifier);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'invalid_client' });
    expect((await cc({ id: a.id, secret: a.secret! }, api.identifier)).status).toBe(200);
  });

  it('a secret sealed in the old, unbound format is re-sealed at start and still works', async () => {
    // the old format: gh1.<kid>.<iv>.<ciphertext>.<tag>, AES-256-GCM without additional data
    const key = Buffer.from(readFileSync(path.join(h.dataDir, 'secret.key'), 'utf8').trim(), 'base64');
    const kid = createHash('sha256').update(key).digest('hex').slice(0, 8);
    const oldSeal = (plain: string) => {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return [
        'gh1',
        kid,
        iv.toString('base64url'),
        body.toString('base64url'),
        c.getAuthTag().toString('base64url'),
      ].join('.');
    };
    const api = await fx.resource({ alg: 'HS256', secret: 'an-old-resource-secret-0123456789' });
    const c = await fx.client();
    await fx.grant(c, api, ['read']);
    await fx.ds.rows(`UPDATE clients SET client_secret_enc = $2 WHERE id = $1`, [c.id, oldSeal(c.secret!)]);
    await fx.ds.rows(`UPDATE resources SET signing_secret_enc = $2 WHERE id = $1`, [
      api.id,
      oldSeal('an-old-resource-secret-0123456789'),
    ]);
    await h.restart();
    const [row] = await fx.ds.rows<{ client_secret_enc: string }>(
      `SELECT client_secret_enc FROM clients WHERE id = $1`,
      [c.id],
    );
    expect(row.client_secret_enc).toMatch(/^gh2\./);
    const [res] = await fx.ds.rows<{ signing_secret_enc: string }>(
      `SELECT signing_secret_enc FROM resources WHERE id = $1`,
      [api.id],
    );
    expect(res.signing_secret_enc).toMatch(/^gh2\./);
    const keys = await fx.ds.rows<{ private_jwk_enc: string }>(`SELECT private_jwk_enc FROM signing_keys`);
    for (const k of keys) expect(k.private_jwk_enc).toMatch(/^gh2\./);
    const token = await cc({ id: c.id, secret: c.secret! }, api.identifier);
    expect(token.status).toBe(200);
    // the HS256 token is signed with the re-sealed resource secret
    const { jwtVerify } = await import('jose');
    await jwtVerify(
      String(token.body.access_token),
      new TextEncoder().encode('an-old-resource-secret-0123456789'),
    );
  });
});
