import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  eventually,
  getFreePort,
  LocalIssuer,
  REPO_ROOT,
  scratchDir,
  smtpSink,
  swcBuild,
  type SunkMail,
} from '@gatehouse/testing';
import { authTestDatabase, startAuth, type AuthHarness } from './support/auth-app.js';
import { BrowserAgent } from './support/browser-agent.js';
import {
  Fixtures,
  tokenRequest,
  type TestClient,
  type TestResource,
  type TestUser,
} from './support/fixtures.js';

/**
 * The token server's audit events (docs/events.md): each written by the HTTP request that causes it, with the
 * reason of a refusal, the source address and user agent, and never a password, code, token or secret; a clean
 * shutdown writes what is queued, a crash loses at most the last flush interval.
 */
const LOCKOUT_THRESHOLD = 3;
const UA = `events-test/${randomBytes(3).toString('hex')}`;
const mails: SunkMail[] = [];
const smtp = smtpSink(mails);

let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;
let api: TestResource;
/** Every secret the tests send or receive: none may appear in any event row. */
const secrets = new Set<string>();

interface EventRow {
  id: string;
  type: string;
  outcome: string;
  reason: string | null;
  instance_id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string | null;
  via_client_id: string | null;
  user_id: string | null;
  client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  h = await startAuth({
    AUTH_LOCKOUT_THRESHOLD: String(LOCKOUT_THRESHOLD),
    AUTH_LOCKOUT_SECONDS: '900',
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    AUTH_OTP_SEND_INTERVAL_SEC: '0',
    AUTH_OTP_SENDS_PER_HOUR: '1000',
  });
  fx = new Fixtures(h);
  client = await fx.client({
    grantTypes: ['client_credentials', 'password', 'refresh_token', 'otp', 'device_code'],
    metadata: { oauth: { allow_signup: true } },
  });
  secrets.add(client.secret!);
  api = await fx.resource({ scopes: ['orders:read'] });
  await fx.grant(client, api);
});
afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
});

const basic = (c: TestClient = client) => ({ id: c.id, secret: c.secret! });

/** A request with this test's user agent (the events record it). */
async function post(path: string, params: Record<string, string>, c: TestClient | null = client) {
  const res = await fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': UA,
      ...(c ? { authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}` } : {}),
    },
    body: new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  const body = (text ? JSON.parse(text) : {}) as Record<string, string>;
  for (const k of ['access_token', 'refresh_token', 'id_token', 'device_code'])
    if (body[k]) secrets.add(body[k]);
  return { status: res.status, body };
}

/** The events written so far (what was queued flushed first) that match `where`. */
async function events(where: string, params: unknown[] = []): Promise<EventRow[]> {
  await h.tokenServer.events.flush();
  return fx.ds.rows<EventRow>(
    `SELECT id, type, outcome, reason, instance_id, tenant_id, actor_type, actor_id, via_client_id, user_id,
            client_id, ip, user_agent, details
       FROM events WHERE ${where} ORDER BY seq`,
    params,
  );
}

/** No event row holds any password, code, token or secret the tests used. */
async function expectNoSecrets(): Promise<void> {
  await h.tokenServer.events.flush();
  const rows = await fx.ds.rows<{ j: string }>(`SELECT row_to_json(e)::text AS j FROM events e`);
  expect(rows.length).toBeGreaterThan(0);
  const all = rows.map((r) => r.j).join('\n');
  for (const s of secrets) expect(all.includes(s) ? s : undefined).toBeUndefined();
}

const passwordGrant = (username: string, password: string, extra: Record<string, string> = {}) => {
  secrets.add(password);
  return post('/token', {
    grant_type: 'password',
    username,
    password,
    resource: api.identifier,
    ...extra,
  });
};

async function newUser(opts: { blocked?: boolean } = {}): Promise<TestUser> {
  const u = await fx.user(opts);
  secrets.add(u.password);
  return u;
}

describe('token issuance', () => {
  it('client_credentials on the fast path: token.issued by the client, its address, agent and audience', async () => {
    // the first request of a grant goes to oidc-provider, whose answer teaches the fast path its scopes
    await post('/token', { grant_type: 'client_credentials', resource: api.identifier });
    const before = h.tokenServer.fastClientCredentials.issued;
    const ok = await post('/token', { grant_type: 'client_credentials', resource: api.identifier });
    expect(ok.status).toBe(200);
    expect(h.tokenServer.fastClientCredentials.issued).toBe(before + 1);
    const rows = await events(`type = 'token.issued' AND client_id = $1`, [client.id]);
    expect(rows.at(-1)).toMatchObject({
      outcome: 'success',
      instance_id: await fx.instanceId(),
      actor_type: 'client',
      actor_id: client.id,
      user_id: null,
      ip: '127.0.0.1',
      user_agent: UA,
      details: { grant_type: 'client_credentials', audience: api.identifier },
    });
  });

  it('a refused client_credentials request (wrong secret): token.failure with the OAuth error', async () => {
    const wrong = { id: client.id, secret: `wrong-${randomBytes(6).toString('hex')}` };
    secrets.add(wrong.secret);
    const res = await post('/token', { grant_type: 'client_credentials', resource: api.identifier }, wrong);
    expect(res.status).toBe(401);
    const rows = await events(`type = 'token.failure' AND client_id = $1`, [client.id]);
    expect(rows.at(-1)).toMatchObject({
      outcome: 'failure',
      reason: 'invalid_client',
      details: { grant_type: 'client_credentials' },
    });
  });

  it('counts what it wrote on /metrics (gatehouse_events_total by type and outcome)', async () => {
    await post('/token', { grant_type: 'client_credentials', resource: api.identifier });
    await h.tokenServer.events.flush();
    const text = await (await fetch(`${h.url}/metrics`)).text();
    expect(text).toMatch(/gatehouse_events_total\{type="token\.issued",outcome="success"[^}]*\} [1-9]/);
    expect(text).toMatch(/gatehouse_events_total\{type="token\.failure",outcome="failure"[^}]*\} [1-9]/);
  });
});

describe('password grant', () => {
  it('signin.success and token.issued for the user via the client', async () => {
    const user = await newUser();
    const ok = await passwordGrant(user.email, user.password);
    expect(ok.status).toBe(200);
    const rows = await events(`user_id = $1`, [user.id]);
    expect(rows.map((r) => r.type)).toEqual(['signin.success', 'token.issued']);
    for (const r of rows) {
      expect(r).toMatchObject({
        actor_type: 'user',
        actor_id: user.id,
        via_client_id: client.id,
        client_id: client.id,
        ip: '127.0.0.1',
        user_agent: UA,
      });
    }
    expect(rows[0].details).toEqual({ method: 'password' });
    expect(rows[1].details).toMatchObject({ grant_type: 'password', audience: api.identifier });
  });

  it('each refusal has its reason: wrong_password, unknown_user, blocked, tenant_mismatch', async () => {
    const user = await newUser();
    expect((await passwordGrant(user.email, 'not-the-password')).status).toBe(400);
    const unknownLogin = `nobody-${randomBytes(3).toString('hex')}@auth.test`;
    expect((await passwordGrant(unknownLogin, 'whatever-pw')).status).toBe(400);
    const blocked = await newUser({ blocked: true });
    expect((await passwordGrant(blocked.email, blocked.password)).status).toBe(400);
    // a client of a tenant: a user of no tenant is not its to sign in
    const [t] = await fx.ds.rows<{ id: string }>(
      `INSERT INTO tenants (instance_id, name) VALUES ($1, $2) RETURNING id`,
      [await fx.instanceId(), `t-${randomBytes(3).toString('hex')}`],
    );
    const tenantClient = await fx.client({ grantTypes: ['password'] });
    secrets.add(tenantClient.secret!);
    await fx.ds.exec(`UPDATE clients SET tenant_id = $2, is_global = false WHERE id = $1`, [
      tenantClient.id,
      t.id,
    ]);
    const other = await post(
      '/token',
      { grant_type: 'password', username: user.email, password: user.password },
      tenantClient,
    );
    expect(other.status).toBe(400);

    const failures = await events(`type = 'signin.failure' AND client_id = ANY($1::uuid[])`, [
      [client.id, tenantClient.id],
    ]);
    const byReason = (reason: string) => failures.filter((f) => f.reason === reason);
    expect(byReason('wrong_password').some((f) => f.user_id === user.id)).toBe(true);
    expect(byReason('unknown_user').at(-1)).toMatchObject({ user_id: null, actor_type: 'anonymous' });
    expect(byReason('blocked').at(-1)).toMatchObject({ user_id: blocked.id });
    // another tenant's administrators learn nothing of the user: the event is the client's tenant's, unnamed
    expect(byReason('tenant_mismatch').at(-1)).toMatchObject({
      user_id: null,
      tenant_id: t.id,
      client_id: tenantClient.id,
    });
    // the refused token requests, as the token endpoint answered them
    const refused = await events(`type = 'token.failure' AND details->>'grant_type' = 'password'`);
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused.every((r) => r.reason === 'invalid_grant')).toBe(true);
  });

  it('a lockout (account.locked), a refused right password (locked), then its end (account.unlocked)', async () => {
    const user = await newUser();
    for (let i = 0; i < LOCKOUT_THRESHOLD; i++) await passwordGrant(user.email, `wrong-${i}`);
    expect((await passwordGrant(user.email, user.password)).status).toBe(400);
    let rows = await events(`user_id = $1`, [user.id]);
    expect(rows.filter((r) => r.type === 'account.locked')).toHaveLength(1);
    expect(rows.find((r) => r.type === 'account.locked')).toMatchObject({
      actor_type: 'system',
      ip: '127.0.0.1',
    });
    expect(rows.filter((r) => r.type === 'signin.failure').map((r) => r.reason)).toEqual([
      ...Array<string>(LOCKOUT_THRESHOLD).fill('wrong_password'),
      'locked',
    ]);
    // the lock runs out (the lockout clock moved past it): the next sign-in unlocks
    const clock = h.tokenServer.login.clock;
    h.tokenServer.login.clock = () => new Date(Date.now() + 901_000);
    try {
      expect((await passwordGrant(user.email, user.password)).status).toBe(200);
    } finally {
      h.tokenServer.login.clock = clock;
    }
    rows = await events(`user_id = $1`, [user.id]);
    expect(rows.map((r) => r.type).slice(-3)).toEqual(['account.unlocked', 'signin.success', 'token.issued']);
    expect(rows.at(-3)?.details).toMatchObject({ cause: 'lock_expired' });
  });
});

describe('refresh tokens and revocation', () => {
  it('refresh_token grant issues; a rotated token used again: refresh_token.reuse and its grant revoked', async () => {
    const user = await newUser();
    const first = await passwordGrant(user.email, user.password, { scope: 'offline_access' });
    expect(first.body.refresh_token).toEqual(expect.any(String));
    const second = await post('/token', {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
    });
    expect(second.status).toBe(200);
    const reused = await post('/token', {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
    });
    expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
    const rows = await events(`user_id = $1 AND type <> 'signin.success'`, [user.id]);
    expect(rows.map((r) => [r.type, r.details.grant_type ?? null, r.reason])).toEqual(
      expect.arrayContaining([
        ['token.issued', 'password', null],
        ['token.issued', 'refresh_token', null],
        ['token.failure', 'refresh_token', 'invalid_grant'],
        ['refresh_token.reuse', null, 'reused'],
        ['token.revoked', null, null],
      ]),
    );
    expect(rows.find((r) => r.type === 'refresh_token.reuse')).toMatchObject({ outcome: 'failure' });
    expect(rows.find((r) => r.type === 'token.failure')?.details).toMatchObject({
      detail: 'refresh token already used',
    });
  });

  it('the revocation endpoint: token.revoked naming the kind of token', async () => {
    const user = await newUser();
    const t = await passwordGrant(user.email, user.password, { scope: 'offline_access' });
    const res = await post('/revoke', { token: t.body.refresh_token, token_type_hint: 'refresh_token' });
    expect(res.status).toBe(200);
    const rows = await events(`user_id = $1 AND type = 'token.revoked'`, [user.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      client_id: client.id,
      details: { token_type: 'RefreshToken', route: 'revocation' },
    });
  });
});

describe('one-time codes', () => {
  const codeIn = (s: string) => /\b(\d{6})\b/.exec(s)?.[1] ?? '';

  it('otp.issued, a wrong code (otp.failure, signin.failure wrong_code), then the right one signs in', async () => {
    const user = await newUser();
    const start = await fetch(`${h.url}/passwordless/start`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': UA,
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      },
      body: JSON.stringify({ client_id: client.id, username: user.email, options: { send_type: 'code' } }),
    });
    expect(start.status).toBe(200);
    let code = '';
    await eventually(() => !!(code = codeIn(mails.find((m) => m.to.includes(user.email))?.body ?? '')), {
      timeoutMs: 10_000,
    });
    secrets.add(code);
    const wrong = code === '000000' ? '111111' : '000000';
    const otp = (value: string) =>
      post('/token', { grant_type: 'otp', username: user.email, otp: value, resource: api.identifier });
    expect((await otp(wrong)).status).toBe(400);
    expect((await otp(code)).status).toBe(200);
    const rows = await events(`user_id = $1`, [user.id]);
    expect(rows.map((r) => [r.type, r.reason])).toEqual([
      ['otp.issued', null],
      ['otp.failure', 'wrong_code'],
      ['signin.failure', 'wrong_code'],
      ['signin.success', null],
      ['token.issued', null],
    ]);
    expect(rows[0]).toMatchObject({ details: { channel: 'email' }, ip: '127.0.0.1', user_agent: UA });
    expect(rows[3].details).toEqual({ method: 'otp' });
    expect(rows[4].details).toMatchObject({ grant_type: 'otp' });
    // the refused grant itself, as the token endpoint answered it
    const refused = await events(`type = 'token.failure' AND details->>'grant_type' = 'otp'`);
    expect(refused.at(-1)).toMatchObject({ reason: 'invalid_grant', client_id: client.id });
  });
});

describe('sign-up', () => {
  it('signup.success, then a taken e-mail: signup.failure email_taken', async () => {
    const email = `new-${randomBytes(3).toString('hex')}@auth.test`;
    const password = `Pw-${randomBytes(8).toString('hex')}!`;
    secrets.add(password);
    const first = await post('/signup', { client_id: client.id, email, password }, null);
    expect(first.status).toBe(201);
    const again = await post('/signup', { client_id: client.id, email, password }, null);
    expect(again.status).toBe(409);
    const rows = await events(`type LIKE 'signup.%' AND client_id = $1`, [client.id]);
    expect(rows.slice(-2)).toMatchObject([
      { type: 'signup.success', user_id: first.body.id, actor_type: 'user', ip: '127.0.0.1', user_agent: UA },
      { type: 'signup.failure', reason: 'email_taken', user_id: null, actor_type: 'anonymous' },
    ]);
    expect(JSON.stringify(rows)).not.toContain(email);
  });
});

describe('device flow, the login page and logout', () => {
  const field = (html: string, name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  const action = (html: string) => /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';

  /** Starts a device code and walks a browser to its login page. */
  async function toLogin() {
    const started = await post('/device/code', {
      client_id: client.id,
      scope: 'openid orders:read',
      audience: api.identifier,
    });
    const browser = new BrowserAgent(h.url);
    const go = (url: string, form?: Record<string, string>) => browser.follow(url, form);
    const confirm = await go(started.body.verification_uri_complete);
    const login = await go(new URL(action(confirm.html), h.url).toString(), {
      xsrf: field(confirm.html, 'xsrf'),
      user_code: started.body.user_code,
      confirm: 'yes',
    });
    return { started, go, login };
  }

  it('a wrong password on the login page, then approval: signin.failure, signin.success, device.approved; logout', async () => {
    const user = await newUser();
    const { started, go, login } = await toLogin();
    const wrong = await go(new URL(action(login.html), h.url).toString(), {
      csrf: field(login.html, 'csrf'),
      username: user.email,
      password: 'not-it-at-all',
    });
    secrets.add('not-it-at-all');
    const consent = await go(new URL(action(wrong.html), h.url).toString(), {
      csrf: field(wrong.html, 'csrf'),
      username: user.email,
      password: user.password,
    });
    await go(new URL(action(consent.html), h.url).toString(), {
      csrf: field(consent.html, 'csrf'),
      decision: 'allow',
    });
    h.tokenServer.pollClock = () => Date.now() + 10_000;
    const tokens = await post('/token', { grant_type: 'device_code', device_code: started.body.device_code });
    expect(tokens.status).toBe(200);
    const end = await go(`${h.url}/session/end`);
    await go(new URL(/<form[^>]*action="([^"]+)"/.exec(end.html)![1], h.url).toString(), {
      xsrf: field(end.html, 'xsrf'),
      logout: 'yes',
    });
    // a logout that names no client: its instance is looked up from the user first
    await eventually(async () => (await events(`type = 'logout' AND user_id = $1`, [user.id])).length === 1);
    const rows = await events(`user_id = $1`, [user.id]);
    expect(rows.map((r) => [r.type, r.reason, r.details.method ?? r.details.grant_type ?? null])).toEqual([
      ['signin.failure', 'wrong_password', 'login_page'],
      ['signin.success', null, 'login_page'],
      ['device.approved', null, 'urn:ietf:params:oauth:grant-type:device_code'],
      ['token.issued', null, 'urn:ietf:params:oauth:grant-type:device_code'],
      ['logout', null, null],
    ]);
    expect(rows.at(-1)).toMatchObject({ actor_type: 'user', actor_id: user.id, ip: '127.0.0.1' });
  });

  it('a denied device code: device.denied', async () => {
    const user = await newUser();
    const { go, login } = await toLogin();
    const consent = await go(new URL(action(login.html), h.url).toString(), {
      csrf: field(login.html, 'csrf'),
      username: user.email,
      password: user.password,
    });
    await go(new URL(action(consent.html), h.url).toString(), {
      csrf: field(consent.html, 'csrf'),
      decision: 'deny',
    });
    const rows = await events(`type LIKE 'device.%' AND user_id = $1`, [user.id]);
    expect(rows.map((r) => r.type)).toEqual(['device.denied']);
  });
});

describe('token exchange', () => {
  it('token.exchanged with the upstream issuer; a token of an unknown issuer: signin.failure upstream_failed', async () => {
    const issuer = await LocalIssuer.start();
    try {
      const upstreamClientId = `gatehouse-${randomBytes(4).toString('hex')}`;
      const [t] = await fx.ds.rows<{ id: string }>(
        `INSERT INTO tenants (instance_id, name) VALUES ($1, $2) RETURNING id`,
        [await fx.instanceId(), `t-${randomBytes(3).toString('hex')}`],
      );
      await fx.ds.exec(
        `INSERT INTO tenant_identity_providers (instance_id, tenant_id, identity_provider, name, issuer, client_id,
                                                jwks_uri, enabled)
         VALUES ($1, $2, 'oidc', $3, $4, $5, $6, true)`,
        [
          await fx.instanceId(),
          t.id,
          `idp-${randomBytes(3).toString('hex')}`,
          issuer.url,
          upstreamClientId,
          issuer.jwksUri,
        ],
      );
      const ex = await fx.client({ grantTypes: ['token_exchange'] });
      secrets.add(ex.secret!);
      await fx.ds.exec(`UPDATE clients SET tenant_id = $2, is_global = false WHERE id = $1`, [ex.id, t.id]);
      await fx.grant(ex, api);
      const sub = `up-${randomBytes(3).toString('hex')}`;
      const idToken = await issuer.idToken(upstreamClientId, sub, {
        email: `${sub}@upstream.test`,
        email_verified: true,
      });
      secrets.add(idToken);
      const exchange = (subjectToken: string) =>
        tokenRequest(
          h.url,
          {
            grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
            subject_token: subjectToken,
            subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
            audience: api.identifier,
          },
          { basic: basic(ex) },
        );
      const ok = await exchange(idToken);
      expect(ok.status).toBe(200);
      secrets.add(String(ok.body.access_token));
      const other = await LocalIssuer.start();
      try {
        const foreign = await other.idToken(upstreamClientId, sub, {});
        secrets.add(foreign);
        expect((await exchange(foreign)).status).toBe(400);
      } finally {
        await other.stop();
      }
      const rows = await events(`client_id = $1`, [ex.id]);
      const upstream = issuer.url.replace(/\/+$/, '');
      expect(rows.map((r) => [r.type, r.reason])).toEqual([
        ['signin.success', null],
        ['token.exchanged', null],
        ['signin.failure', 'upstream_failed'],
        ['token.failure', 'invalid_grant'],
      ]);
      expect(rows[0]).toMatchObject({
        tenant_id: t.id,
        details: { method: 'token_exchange', upstream_issuer: upstream },
      });
      expect(rows[1]).toMatchObject({
        tenant_id: t.id,
        actor_type: 'user',
        user_id: rows[0].user_id,
        details: { upstream_issuer: upstream },
      });
    } finally {
      await issuer.stop();
    }
  });
});

describe('no secrets', () => {
  it('no event row holds a password, a code, a token or a client secret used above', async () => {
    await expectNoSecrets();
  });
});

describe('shutdown and crash', () => {
  it('a clean shutdown writes every queued event (flush interval far longer than the test)', async () => {
    const other = await startAuth({ AUTH_EVENTS_FLUSH_MS: '60000' });
    const ds = new pg.Client({ connectionString: other.db.url });
    try {
      const ofx = new Fixtures(other);
      const c = await ofx.client();
      const r = await ofx.resource();
      await ofx.grant(c, r);
      const cc = () =>
        tokenRequest(
          other.url,
          { grant_type: 'client_credentials', resource: r.identifier },
          { basic: basic(c) },
        );
      // the first goes through oidc-provider (its own event); the fast path answers the 40 after it
      expect((await cc()).status).toBe(200);
      const answers = await Promise.all(Array.from({ length: 40 }, cc));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      // nothing written yet: all of it waits in memory, the 40 identical issuances as one event with a count
      expect(other.tokenServer.events.writer.pending).toBe(2);
      await other.stop();
      await ds.connect();
      const { rows } = await ds.query<{ count: string | null }>(
        `SELECT details->>'count' AS count FROM events WHERE type = 'token.issued' AND client_id = $1 ORDER BY seq`,
        [c.id],
      );
      expect(rows).toEqual([{ count: null }, { count: '40' }]);
    } finally {
      await ds.end().catch(() => undefined);
      await other.close();
    }
  }, 60_000);

  it('AUTH_EVENTS=false records nothing', async () => {
    const other = await startAuth({ AUTH_EVENTS: 'false' });
    try {
      const ofx = new Fixtures(other);
      const c = await ofx.client();
      const r = await ofx.resource();
      await ofx.grant(c, r);
      for (let i = 0; i < 2; i++) {
        const res = await tokenRequest(
          other.url,
          { grant_type: 'client_credentials', resource: r.identifier },
          { basic: basic(c) },
        );
        expect(res.status).toBe(200);
      }
      expect(other.tokenServer.events.writer.pending).toBe(0);
      await other.tokenServer.events.flush();
      const ds = new pg.Client({ connectionString: other.db.url });
      await ds.connect();
      try {
        const { rows } = await ds.query(`SELECT 1 FROM events WHERE client_id = $1`, [c.id]);
        expect(rows).toEqual([]);
      } finally {
        await ds.end();
      }
    } finally {
      await other.close();
    }
  });

  it('a crash (SIGKILL) loses at most the events of the last flush interval', async () => {
    const FLUSH_MS = 200;
    const db = await authTestDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gh-events-crash-'));
    const out = scratchDir('auth-events-crash');
    swcBuild(['apps/auth/src', 'libs'], out);
    const port = await getFreePort();
    const url = `http://127.0.0.1:${port}`;
    const boot = { id: randomUUID(), secret: `crash-${randomBytes(12).toString('hex')}` };
    const child = spawn(process.execPath, [path.join(out, 'apps/auth/src/main.js')], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_POINTS: '100000',
        AUTH_PORT: String(port),
        ISSUER: url,
        DATABASE_URL: db.url,
        DATA_DIR: dataDir,
        SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        BOOTSTRAP_CLIENT_ID: boot.id,
        BOOTSTRAP_CLIENT_SECRET: boot.secret,
        BOOTSTRAP_ADMIN_PASSWORD: `pw-${randomBytes(8).toString('hex')}`,
        AUTH_EVENTS_FLUSH_MS: String(FLUSH_MS),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const ds = new pg.Client({ connectionString: db.url });
    try {
      await eventually(
        () =>
          fetch(`${url}/livez`)
            .then((r) => r.status === 200)
            .catch(() => false),
        { timeoutMs: 60_000, intervalMs: 200 },
      ).catch(() => {
        throw new Error(`the token server did not start:\n${log}`);
      });
      const answered: { ua: string; at: number }[] = [];
      const issue = async (ua: string) => {
        const res = await fetch(`${url}/token`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'user-agent': ua,
            authorization: `Basic ${Buffer.from(`${boot.id}:${boot.secret}`).toString('base64')}`,
          },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            resource: 'urn:gatehouse:management',
          }).toString(),
        });
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        answered.push({ ua, at: Date.now() });
      };
      // requests answered over a second and a half, then the kill right after the last answer
      const until = Date.now() + 1500;
      for (let i = 0; Date.now() < until; i++) await issue(`crash-${i}`);
      child.kill('SIGKILL');
      const killedAt = Date.now();
      await exited;
      await ds.connect();
      const { rows } = await ds.query<{ user_agent: string }>(
        `SELECT user_agent FROM events WHERE type = 'token.issued' AND client_id = $1`,
        [boot.id],
      );
      const written = new Set(rows.map((r) => r.user_agent));
      const lost = answered.filter((a) => !written.has(a.ua));
      // every event queued more than one flush interval (and one INSERT's time) before the kill was written
      const margin = FLUSH_MS + 150;
      expect(lost.filter((a) => a.at < killedAt - margin)).toEqual([]);
      expect(written.size).toBeGreaterThan(0);
      expect(written.size + lost.length).toBe(answered.length);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await ds.end().catch(() => undefined);
      rmSync(out, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
      await db.drop();
    }
  }, 120_000);
});
