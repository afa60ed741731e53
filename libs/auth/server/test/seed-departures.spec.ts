import { createRemoteJWKSet, decodeJwt, importJWK, jwtVerify, SignJWT } from 'jose';
import type { AddressInfo } from 'node:net';
import { eventually, smtpSink, type SunkMail } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { actionOf, BrowserAgent, fieldOf } from './support/browser-agent.js';
import {
  Fixtures,
  tokenInfo,
  tokenRequest,
  type TestClient,
  type TestResource,
  type TestUser,
} from './support/fixtures.js';

/**
 * Departures from the documents closed in the token server: the passwordless request of document 2 as the document
 * shapes it, userinfo with an API's access token, `fields` at the device authorization endpoint, and /tokeninfo
 * describing ID tokens.
 */
const mails: SunkMail[] = [];
const smtp = smtpSink(mails);

let h: AuthHarness;
let fx: Fixtures;
let api: TestResource;

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  h = await startAuth({
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    AUTH_OTP_SEND_INTERVAL_SEC: '0',
    AUTH_OTP_SENDS_PER_HOUR: '1000',
  });
  fx = new Fixtures(h);
  api = await fx.resource({ scopes: ['shop:buy', 'shop:sell'] });
});
afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
});

const basic = (c: TestClient) => ({ id: c.id, secret: c.secret! });
const json = (r: Response) => r.json() as Promise<Record<string, unknown>>;
const lastMailTo = (to: string) =>
  mails
    .filter((m) => m.to === to)
    .at(-1)!
    .body.replace(/=\r?\n/g, '')
    .replace(/=3D/g, '=');

describe('1. passwordless start: the document\'s `options` object ("get code or link")', () => {
  const CB = 'https://rp.example.test/passwordless/cb';
  let client: TestClient;
  let user: TestUser;
  beforeAll(async () => {
    client = await fx.client({
      grantTypes: ['authorization_code', 'otp'],
      metadata: { urls: { callbacks: [CB] } },
    });
    await fx.grant(client, api);
    user = await fx.user();
  });

  /** The request exactly as document 2 shows it: JSON with client_id, client_secret, username and options. */
  const start = (body: Record<string, unknown>) =>
    fetch(`${h.url}/passwordless/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: client.id, client_secret: client.secret, ...body }),
    }).then(async (r) => ({ status: r.status, body: await json(r) }));

  it('send_type code with the document shape: a code by e-mail, then grant_type=otp', async () => {
    const before = mails.length;
    const started = await start({
      username: user.email,
      options: {
        send_type: 'code',
        redirect_url: CB,
        response_type: 'authorization_code',
        scope: 'openid email',
      },
    });
    expect(started).toEqual({ status: 200, body: { send_type: 'code', channel: 'email', expires_in: 300 } });
    await eventually(() => mails.length > before && mails.some((m) => m.to === user.email));
    const code = /\b(\d{6})\b/.exec(lastMailTo(user.email))![1];
    const t = await tokenRequest(
      h.url,
      { grant_type: 'otp', username: user.email, otp: code, scope: 'openid email' },
      { basic: basic(client) },
    );
    expect([t.status, decodeJwt(String(t.body.id_token)).sub]).toEqual([200, user.id]);
  });

  it('send_type link with response_type authorization_code: the link ends at redirect_url with a code the client redeems', async () => {
    // exactly document 2's request: client_id, client_secret, username, options
    const started = await start({
      username: user.email,
      options: {
        send_type: 'link',
        redirect_url: CB,
        response_type: 'authorization_code',
        scope: 'openid email',
      },
    });
    expect(started).toEqual({ status: 200, body: { send_type: 'link', channel: 'email', expires_in: 300 } });
    await eventually(() => mails.some((m) => m.to === user.email && m.body.includes('/passwordless/verify')));
    const link = /(http:\/\/127\.0\.0\.1:\d+\/passwordless\/verify\?token=[\w-]+)/.exec(
      lastMailTo(user.email),
    )![1];

    const browser = new BrowserAgent(h.url);
    const confirm = await browser.follow(link);
    const consent = await browser.follow(actionOf(confirm.html, h.url), {
      csrf: fieldOf(confirm.html, 'csrf'),
      token: fieldOf(confirm.html, 'token'),
    });
    expect(consent.html).toContain('name="decision"');
    const done = await browser.follow(actionOf(consent.html, h.url), {
      csrf: fieldOf(consent.html, 'csrf'),
      decision: 'allow',
    });
    const back = new URL(done.url);
    expect(`${back.origin}${back.pathname}`).toBe(CB);
    expect(back.searchParams.get('state')).toBeNull();
    expect(back.searchParams.get('iss')).toBe(h.url);
    // a confidential client redeems the code with its secret (no PKCE was asked of it: it sent no code_challenge)
    const tokens = await tokenRequest(
      h.url,
      { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: CB },
      { basic: basic(client) },
    );
    expect([tokens.status, tokens.body.error_description]).toEqual([200, undefined]);
    expect(decodeJwt(String(tokens.body.id_token)).sub).toBe(user.id);
    // options.scope was what the link asked for: openid email
    const info = await fetch(`${h.url}/userinfo`, {
      headers: { authorization: `Bearer ${String(tokens.body.access_token)}` },
    });
    expect(await json(info)).toEqual({ sub: user.id, email: user.email, email_verified: true });
  });

  it('the waiver of PKCE cannot be claimed at /authorize by anyone else: PKCE is still required there', async () => {
    const url = new URL(`${h.url}/authorize`);
    for (const [k, v] of Object.entries({
      client_id: client.id,
      response_type: 'code',
      redirect_uri: CB,
      scope: 'openid',
      link_pkce: 'forged.9999999999',
    }))
      url.searchParams.set(k, v);
    const res = await fetch(url, { redirect: 'manual' });
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('400s: redirect_url not a callback, a top-level field that contradicts options, an unknown response_type', async () => {
    const nowhere = await start({
      username: user.email,
      options: {
        send_type: 'link',
        redirect_url: 'https://evil.test/cb',
        response_type: 'authorization_code',
      },
    });
    expect([nowhere.status, nowhere.body.error]).toEqual([400, 'invalid_request']);
    expect(nowhere.body.error_description).toMatch(/redirect_url/);
    const codeNowhere = await start({
      username: user.email,
      options: { send_type: 'code', redirect_url: 'https://evil.test/cb' },
    });
    expect([codeNowhere.status, codeNowhere.body.error_description]).toEqual([
      400,
      expect.stringMatching(/redirect_url/),
    ]);

    for (const [field, top, inOptions] of [
      ['send_type', 'code', 'link'],
      ['redirect_url', 'https://rp.example.test/other', CB],
      ['response_type', 'code', 'token'],
      ['scope', 'openid', 'openid email'],
    ] as const) {
      const r = await start({ username: user.email, [field]: top, options: { [field]: inOptions } });
      expect([r.status, r.body.error]).toEqual([400, 'invalid_request']);
      expect(r.body.error_description).toContain(field);
    }
    // the same value at both places is no contradiction
    const same = await start({
      username: user.email,
      send_type: 'link',
      redirect_url: CB,
      options: { send_type: 'link', redirect_url: CB, response_type: 'code' },
    });
    expect(same.status).toBe(200);

    const token = await start({
      username: user.email,
      options: { send_type: 'link', redirect_url: CB, response_type: 'token' },
    });
    expect([token.status, token.body.error]).toEqual([400, 'unsupported_response_type']);
    const nested = await start({ username: user.email, options: { send_type: { x: 1 } } });
    expect([nested.status, nested.body.error_description]).toEqual([
      400,
      expect.stringContaining('options.send_type'),
    ]);
  });

  it('a public client still needs PKCE for a link (it has no secret to redeem the code with)', async () => {
    const pub = await fx.client({
      grantTypes: ['authorization_code', 'otp'],
      isPublic: true,
      metadata: { urls: { callbacks: [CB] }, token_endpoint_auth_method: 'none' },
    });
    const r = await fetch(`${h.url}/passwordless/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: pub.id,
        username: user.email,
        options: { send_type: 'link', redirect_url: CB, response_type: 'authorization_code' },
      }),
    });
    expect(r.status).toBe(400);
    expect((await json(r)).error_description).toMatch(/code_challenge/);
  });
});

describe('the OpenAPI description says so', () => {
  it("documents the passwordless options object, userinfo's 403 and the ID token hint", async () => {
    const doc = (await (await fetch(`${h.url}/docs/openapi.json`)).json()) as {
      paths: Record<string, Record<string, any>>;
    };
    const start = doc.paths['/passwordless/start'].post;
    const schema = start.requestBody.content['application/json'].schema;
    expect(Object.keys(schema.properties.options.properties).sort()).toEqual([
      'redirect_url',
      'response_type',
      'scope',
      'send_type',
    ]);
    expect(start.description).toContain('authorization_code');
    expect(Object.keys(doc.paths['/userinfo'].get.responses)).toContain('403');
    expect(doc.paths['/tokeninfo'].post.description).toContain('token_type_hint=id_token');
    expect(doc.paths['/device/code'].post.description).toContain('`fields`');
  });
});

describe('2. userinfo with an access token for an API', () => {
  let client: TestClient;
  let user: TestUser;
  beforeAll(async () => {
    client = await fx.client({ grantTypes: ['password', 'refresh_token'] });
    await fx.grant(client, api);
    user = await fx.user();
  });
  const login = (scope: string, resource = api.identifier, who = user) =>
    tokenRequest(
      h.url,
      { grant_type: 'password', username: who.email, password: who.password, scope, resource },
      { basic: basic(client) },
    );
  const userinfo = (token: string, method: 'GET' | 'POST' = 'GET', path = '/userinfo') =>
    fetch(`${h.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
    });

  it('an API token with openid: 200 with the claims of its scopes, by GET and POST', async () => {
    const t = await login('openid profile email shop:buy');
    expect(t.status).toBe(200);
    expect(decodeJwt(String(t.body.access_token)).aud).toBe(api.identifier);
    for (const method of ['GET', 'POST'] as const) {
      const r = await userinfo(String(t.body.access_token), method);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toMatch(/no-store/);
      const body = await json(r);
      expect(body).toMatchObject({
        sub: user.id,
        email: user.email,
        email_verified: true,
        given_name: 'Bat',
        family_name: 'Erdene',
      });
      expect(body.phone_number).toBeUndefined(); // phone was not asked for
      expect(body.address).toBeUndefined();
    }
    const fields = await userinfo(String(t.body.access_token), 'GET', '/userinfo?fields=sub,email');
    expect(await json(fields)).toEqual({ sub: user.id, email: user.email });
    const bad = await userinfo(String(t.body.access_token), 'GET', '/userinfo?fields=password_hash');
    expect(bad.status).toBe(400);
    // oidc-provider's `scope` parameter: only some of the granted scopes; one not granted is 403
    const narrowed = await userinfo(String(t.body.access_token), 'GET', '/userinfo?scope=openid%20email');
    expect(await json(narrowed)).toEqual({ sub: user.id, email: user.email, email_verified: true });
    const wider = await userinfo(String(t.body.access_token), 'GET', '/userinfo?scope=openid%20phone');
    expect([wider.status, (await json(wider)).error]).toEqual([403, 'insufficient_scope']);
  });

  it('a browser code flow with an API audience and openid: its access token reads userinfo', async () => {
    const CB = 'https://rp.example.test/code/cb';
    const rp = await fx.client({
      grantTypes: ['authorization_code'],
      metadata: { urls: { callbacks: [CB] } },
    });
    await fx.grant(rp, api);
    const verifier = 'dBjftJeZ4CVP-mJ92K1qUdEpZhZdqPCI_R-aNxlhxYk';
    const url = new URL(`${h.url}/authorize`);
    for (const [k, v] of Object.entries({
      client_id: rp.id,
      response_type: 'code',
      redirect_uri: CB,
      scope: 'openid email shop:buy',
      resource: api.identifier,
      code_challenge: 'YENcV5s6vQw_FNIKW1guPzkS0_Bep5uk0jGGlDWxg68',
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const browser = new BrowserAgent(h.url);
    const login = await browser.follow(url.toString());
    const consent = await browser.follow(actionOf(login.html, h.url), {
      csrf: fieldOf(login.html, 'csrf'),
      username: user.email,
      password: user.password,
    });
    const done = await browser.follow(actionOf(consent.html, h.url), {
      csrf: fieldOf(consent.html, 'csrf'),
      decision: 'allow',
    });
    const code = new URL(done.url).searchParams.get('code')!;
    const t = await tokenRequest(
      h.url,
      { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: verifier },
      { basic: basic(rp) },
    );
    expect(t.status).toBe(200);
    const at = decodeJwt(String(t.body.access_token));
    expect([at.aud, at.scope]).toEqual([api.identifier, 'shop:buy']);
    const r = await userinfo(String(t.body.access_token));
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ sub: user.id, email: user.email, email_verified: true });
  });

  it('an opaque API token with openid works the same', async () => {
    const opaque = await fx.resource({ alg: 'opaque', scopes: ['o:read'] });
    await fx.grant(client, opaque);
    const t = await login('openid phone o:read', opaque.identifier);
    expect(String(t.body.access_token)).not.toContain('.');
    const r = await userinfo(String(t.body.access_token));
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({
      sub: user.id,
      phone_number: user.phone,
      phone_number_verified: false,
      phone_verified: false,
    });
  });

  it('without openid: 403 insufficient_scope with WWW-Authenticate (RFC 6750)', async () => {
    const t = await login('profile shop:buy');
    const r = await userinfo(String(t.body.access_token));
    expect(r.status).toBe(403);
    expect(await json(r)).toMatchObject({ error: 'insufficient_scope', code: 'insufficient_scope' });
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+", error="insufficient_scope"/);
  });

  it('bad, tampered, revoked, a blocked user: 401 invalid_token with WWW-Authenticate; a client token 403', async () => {
    const t = String((await login('openid shop:buy')).body.access_token);
    const [a, b, c] = t.split('.');
    const tampered = `${a}.${b}.${c.slice(0, -3)}${c.slice(-3) === 'AAA' ? 'BBB' : 'AAA'}`;
    for (const token of ['nonsense', tampered]) {
      const r = await userinfo(token);
      expect(r.status).toBe(401);
      expect(await json(r)).toMatchObject({ error: 'invalid_token', code: 'invalid_token' });
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/);
    }
    // a revoked grant (the user's consent withdrawn)
    const revoked = String((await login('openid shop:buy')).body.access_token);
    const grant = await h.tokenServer.currentProvider.Grant.find(String(decodeJwt(revoked).grant_id));
    expect((await userinfo(revoked)).status).toBe(200);
    await grant!.destroy();
    expect((await userinfo(revoked)).status).toBe(401);

    const other = await fx.user();
    const blockedToken = String((await login('openid shop:buy', api.identifier, other)).body.access_token);
    expect((await userinfo(blockedToken)).status).toBe(200);
    await fx.setBlocked(other.id, true);
    await eventually(async () => (await userinfo(blockedToken)).status === 401, {
      what: 'blocked user refused',
    });

    const cc = await tokenRequest(
      h.url,
      { grant_type: 'client_credentials', resource: api.identifier },
      { basic: basic(await ccClient()) },
    );
    const r = await userinfo(String(cc.body.access_token));
    expect(r.status).toBe(403);
  });

  const ccClient = async () => {
    const c = await fx.client({ grantTypes: ['client_credentials'] });
    await fx.grant(c, api);
    return c;
  };

  it('a token without an audience keeps working as before', async () => {
    const t = await login('openid email', '');
    const r = await userinfo(String(t.body.access_token));
    expect([r.status, (await json(r)).email]).toEqual([200, user.email]);
  });
});

describe('5. fields at POST /device/code', () => {
  let client: TestClient;
  beforeAll(async () => {
    client = await fx.client({ grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] });
  });
  const device = (params: Record<string, string>, query = '') =>
    fetch(`${h.url}/device/code${query}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams(params).toString(),
    }).then(async (r) => ({ status: r.status, body: await json(r) }));

  it('an unknown field name is 400 invalid_request naming it, as at /token', async () => {
    const r = await device({ scope: 'openid', fields: 'device_code,password' });
    expect([r.status, r.body.error, r.body.code]).toEqual([400, 'invalid_request', 'invalid_request']);
    expect(r.body.error_description).toContain('password');
    const q = await device({ scope: 'openid' }, '?fields=nope');
    expect(q.status).toBe(400);
  });

  it('known field names pick the attributes of the answer', async () => {
    const r = await device({ scope: 'openid', fields: 'device_code,user_code,interval' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['device_code', 'interval', 'user_code']);
    const all = await device({ scope: 'openid' });
    expect(Object.keys(all.body).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
  });
});

describe('7. /tokeninfo with token_type_hint=id_token', () => {
  let client: TestClient;
  let other: TestClient;
  let user: TestUser;
  beforeAll(async () => {
    client = await fx.client({ grantTypes: ['password'] });
    other = await fx.client({ grantTypes: ['password'] });
    await fx.grant(client, api);
    await fx.grant(other, api);
    user = await fx.user();
  });
  /** With an audience, the ID token carries the claims of its scopes (not only `sub`). */
  const idTokenOf = async (c: TestClient) => {
    const t = await tokenRequest(
      h.url,
      {
        grant_type: 'password',
        username: user.email,
        password: user.password,
        scope: 'openid email',
        resource: api.identifier,
      },
      { basic: basic(c) },
    );
    return { id: String(t.body.id_token), access: String(t.body.access_token) };
  };
  const hint = { token_type_hint: 'id_token' };

  /** An ID token signed with the server's own active RS256 key, with these claims. */
  const signed = async (claims: Record<string, unknown>, exp: number) => {
    const key = h.tokenServer.keySet.keys.find((k) => k.privateJwk.alg === 'RS256' && k.active)!;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: key.privateJwk.kid })
      .setIssuer(h.url)
      .setAudience(client.id)
      .setSubject(user.id)
      .setIssuedAt(exp - 600)
      .setExpirationTime(exp)
      .sign(await importJWK(key.privateJwk, 'RS256'));
  };

  it("the calling client's own ID token: active, document 1's fields and its claims", async () => {
    const { id } = await idTokenOf(client);
    await jwtVerify(id, createRemoteJWKSet(new URL(`${h.url}/jwks`)), { issuer: h.url, audience: client.id });
    const r = await tokenInfo(h.url, id, { basic: basic(client) }, hint);
    expect(r.status).toBe(200);
    const claims = decodeJwt(id);
    expect(r.body).toMatchObject({
      active: true,
      token_type: 'id_token',
      client_id: client.id,
      aud: client.id,
      iss: h.url,
      sub: user.id,
      subject: user.id,
      username: user.email,
      email: user.email,
      email_verified: true,
      exp: new Date(claims.exp! * 1000).toISOString(),
      iat: new Date(claims.iat! * 1000).toISOString(),
    });
    const picked = await tokenInfo(
      h.url,
      id,
      { basic: basic(client) },
      { ...hint, fields: 'active,sub,email' },
    );
    expect(picked.body).toEqual({ active: true, sub: user.id, email: user.email });
    // a Bearer caller of the same client sees it too
    const { access } = await idTokenOf(client);
    expect((await tokenInfo(h.url, id, { bearer: access }, hint)).body.active).toBe(true);
  });

  it("another client's ID token, an expired or tampered one, an access token: inactive", async () => {
    const theirs = (await idTokenOf(other)).id;
    expect((await tokenInfo(h.url, theirs, { basic: basic(client) }, hint)).body).toEqual({ active: false });

    const now = Math.floor(Date.now() / 1000);
    const fresh = await signed({ email: user.email }, now + 300);
    expect((await tokenInfo(h.url, fresh, { basic: basic(client) }, hint)).body.active).toBe(true);
    const expired = await signed({ email: user.email }, now - 5);
    expect((await tokenInfo(h.url, expired, { basic: basic(client) }, hint)).body).toEqual({ active: false });

    const { id, access } = await idTokenOf(client);
    const [a, b, c] = id.split('.');
    const payload = JSON.parse(Buffer.from(b, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${a}.${Buffer.from(JSON.stringify({ ...payload, sub: 'someone-else' })).toString('base64url')}.${c}`;
    expect((await tokenInfo(h.url, forged, { basic: basic(client) }, hint)).body).toEqual({ active: false });
    expect((await tokenInfo(h.url, access, { basic: basic(client) }, hint)).body).toEqual({ active: false });
    // without the hint an ID token is no access token: inactive as before
    expect((await tokenInfo(h.url, id, { basic: basic(client) })).body).toEqual({ active: false });
  });

  it('the ID token of a user since blocked: inactive', async () => {
    const blocked = await fx.user();
    const t = await tokenRequest(
      h.url,
      { grant_type: 'password', username: blocked.email, password: blocked.password, scope: 'openid' },
      { basic: basic(client) },
    );
    await fx.setBlocked(blocked.id, true);
    await eventually(
      async () =>
        (await tokenInfo(h.url, String(t.body.id_token), { basic: basic(client) }, hint)).body.active ===
        false,
      { what: 'inactive once blocked' },
    );
  });
});
