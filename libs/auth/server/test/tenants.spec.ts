import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { eventually } from '@gatehouse/testing';
import { userMaySignInThrough } from '../src/oidc/sign-in-policy.js';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { actionOf, BrowserAgent, fieldOf } from './support/browser-agent.js';
import {
  Fixtures,
  tokenRequest,
  type TestClient,
  type TestResource,
  type TestUser,
} from './support/fixtures.js';

// A user signs in only through global clients or clients of its own tenant: real tokens from the real
// token server, for password and refresh grants.

let h: AuthHarness;
let fx: Fixtures;
let api: TestResource;
let tenantA: string;
let tenantB: string;

const tenant = async () => {
  const [t] = await fx.ds.rows<{ id: string }>(
    `INSERT INTO tenants (instance_id, name) VALUES ($1, $2) RETURNING id`,
    [await fx.instanceId(), `t-${randomBytes(4).toString('hex')}`],
  );
  return t.id;
};

/** A confidential client allowed the password and refresh grants, of `tenantId` (or none), global or not. */
const CALLBACK = 'https://rp.example.test/callback';

const client = async (tenantId: string | null, isGlobal: boolean) => {
  const c = await fx.client({
    grantTypes: ['password', 'refresh_token', 'otp', 'authorization_code'],
    metadata: { urls: { callbacks: [CALLBACK] } },
  });
  await fx.ds.rows(`UPDATE clients SET tenant_id = $2, is_global = $3 WHERE id = $1`, [
    c.id,
    tenantId,
    isGlobal,
  ]);
  await fx.grant(c, api, ['orders:read']);
  return c;
};

const user = async (tenantId: string | null) => {
  const u = await fx.user();
  await fx.ds.rows(`UPDATE users SET tenant_id = $2 WHERE id = $1`, [u.id, tenantId]);
  return u;
};

const password = (c: TestClient, u: TestUser, extra: Record<string, string> = {}) =>
  tokenRequest(
    h.url,
    { grant_type: 'password', username: u.email, password: u.password, resource: api.identifier, ...extra },
    { basic: { id: c.id, secret: c.secret! } },
  );

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  api = await fx.resource({ scopes: ['orders:read'] });
  [tenantA, tenantB] = [await tenant(), await tenant()];
});
afterAll(async () => {
  await h?.close();
});

describe('sign-in across tenants', () => {
  it("a client that is not global signs in only its tenant's users (password grant: invalid_grant otherwise)", async () => {
    const c = await client(tenantA, false);
    const [own, other, global] = [await user(tenantA), await user(tenantB), await user(null)];
    const ok = await password(c, own);
    expect(ok.status).toBe(200);
    expect(decodeJwt(ok.body.access_token as string).sub).toBe(own.id);
    for (const u of [other, global]) {
      const r = await password(c, u);
      expect(r.status).toBe(400);
      // one answer, as for an unknown login: nothing tells the caller the account exists elsewhere
      expect(r.body).toMatchObject({
        error: 'invalid_grant',
        error_description: 'invalid username or password',
      });
    }
  });

  it('a global client signs in any user of its instance, also when it has a tenant', async () => {
    for (const c of [await client(tenantA, true), await client(null, true)]) {
      for (const u of [await user(tenantA), await user(tenantB), await user(null)]) {
        const r = await password(c, u);
        expect([u.id, r.status]).toEqual([u.id, 200]);
      }
    }
  });

  it("a refresh stops working once the user is no longer of the client's tenant", async () => {
    const c = await client(tenantA, false);
    const u = await user(tenantA);
    const first = await password(c, u, { scope: 'offline_access' });
    expect(first.status).toBe(200);
    const refresh = (token: string) =>
      tokenRequest(
        h.url,
        { grant_type: 'refresh_token', refresh_token: token },
        { basic: { id: c.id, secret: c.secret! } },
      );
    const second = await refresh(first.body.refresh_token as string);
    expect(second.status).toBe(200);
    await fx.ds.rows(`UPDATE users SET tenant_id = $2, updated_at = now() WHERE id = $1`, [u.id, tenantB]);
    const third = await refresh(second.body.refresh_token as string);
    expect(third.status).toBe(400);
    expect(third.body.error).toBe('invalid_grant');
  });

  it('otp: a code reaches only a user the client may sign in, and the otp grant follows the same rule', async () => {
    const bound = await client(tenantA, false);
    const global = await client(tenantA, true);
    const other = await user(tenantB);
    const start = (c: TestClient) =>
      fetch(`${h.url}/passwordless/start`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`,
        },
        body: JSON.stringify({ client_id: c.id, username: other.email, options: { send_type: 'code' } }),
      });
    const outbox = path.join(h.dataDir, 'outbox');
    const codesFor = (to: string): string[] => {
      let files: string[] = [];
      try {
        files = readdirSync(outbox);
      } catch {
        return [];
      }
      return files
        .map((f) => JSON.parse(readFileSync(path.join(outbox, f), 'utf8')) as { to: string; text: string })
        .filter((msg) => msg.to === to)
        .map((msg) => /\b(\d{6})\b/.exec(msg.text)?.[1] ?? '');
    };
    const otp = (c: TestClient, code: string) =>
      tokenRequest(
        h.url,
        { grant_type: 'otp', username: other.email, otp: code, resource: api.identifier },
        { basic: { id: c.id, secret: c.secret! } },
      );

    // The client of another tenant answers as for anyone (no oracle) but sends nothing.
    expect((await start(bound)).status).toBe(200);
    expect(codesFor(other.email)).toEqual([]);
    // The global client sends a code, and it signs in there, not through the other client.
    expect((await start(global)).status).toBe(200);
    // delivered by the outbox worker after the answer
    await eventually(() => codesFor(other.email).length > 0, { what: 'the code in DATA_DIR/outbox/' });
    const [code] = codesFor(other.email);
    expect(code).toMatch(/^\d{6}$/);
    const refused = await otp(bound, code);
    expect([refused.status, refused.body.error]).toEqual([400, 'invalid_grant']);
    const ok = await otp(global, code);
    expect(ok.status).toBe(200);
    expect(decodeJwt(ok.body.access_token as string).sub).toBe(other.id);
  });

  it("the login page of a client that is not global refuses another tenant's user", async () => {
    const bound = await client(tenantA, false);
    const config = await oidc.discovery(
      new URL(h.url),
      bound.id,
      undefined,
      oidc.ClientSecretBasic(bound.secret!),
      { execute: [oidc.allowInsecureRequests] },
    );
    const signIn = async (u: TestUser) => {
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: CALLBACK,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      const agent = new BrowserAgent(h.url);
      const login = await agent.follow(url.toString());
      expect(login.res.status).toBe(200);
      return agent.follow(actionOf(login.html, h.url), {
        csrf: fieldOf(login.html, 'csrf'),
        username: u.email,
        password: u.password,
      });
    };
    const refused = await signIn(await user(tenantB));
    expect(refused.res.status).toBe(401);
    expect(refused.html).toContain('name="password"');
    const signedIn = await signIn(await user(tenantA));
    // past the login: the consent page (or the callback), never the login form again
    expect(signedIn.res.status).not.toBe(401);
    expect(signedIn.html).not.toContain('name="password"');
  });

  it('the rule: global clients reach everyone, others their tenant only, a tenant-less non-global client nobody', () => {
    const of = (tenantId: string | null) => ({ tenantId });
    expect(userMaySignInThrough(of('a'), { isGlobal: true, tenantId: 'b' })).toBe(true);
    expect(userMaySignInThrough(of(null), { isGlobal: true, tenantId: null })).toBe(true);
    expect(userMaySignInThrough(of('a'), { isGlobal: false, tenantId: 'a' })).toBe(true);
    expect(userMaySignInThrough(of('b'), { isGlobal: false, tenantId: 'a' })).toBe(false);
    expect(userMaySignInThrough(of(null), { isGlobal: false, tenantId: 'a' })).toBe(false);
    expect(userMaySignInThrough(of(null), { isGlobal: false, tenantId: null })).toBe(false);
  });
});
