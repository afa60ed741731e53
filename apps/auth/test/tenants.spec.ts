import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { userMaySignInThrough } from '../src/oidc/sign-in-policy.js';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import {
  Fixtures,
  tokenRequest,
  type TestClient,
  type TestResource,
  type TestUser,
} from './support/fixtures.js';

// A user signs in only through global clients or clients of its own tenant (issue 15): real tokens from the real
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
const client = async (tenantId: string | null, isGlobal: boolean) => {
  const c = await fx.client({ grantTypes: ['password', 'refresh_token'] });
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
