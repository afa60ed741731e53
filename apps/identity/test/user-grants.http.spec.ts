import * as oidc from 'openid-client';
import { Redis } from 'ioredis';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';
import { oauthError, passwordClient } from './ticket-pages.js';

/**
 * User Grants (GET /users/:user_id/grants, DELETE /users/:user_id/grants/:grant_id) on grants the real token server
 * made: a revoked grant's refresh token fails at once (invalid_grant) and /tokeninfo calls its tokens inactive.
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

const PASSWORD = 'grant-password-1';

async function signedInUser(tenantId?: string) {
  const mail = `${uniq('g')}@example.test`;
  const u = (
    await m
      .call('post', '/api/v1/users')
      .send({ user_email: mail, password: PASSWORD, ...(tenantId ? { tenant_id: tenantId } : {}) })
      .expect(201)
  ).body as { id: string };
  return { id: u.id, email: mail };
}

describe.each(VERSIONS)('User Grants under /api/%s', (v: Version) => {
  const base = `/api/${v}/users`;

  it('lists the grants of the user’s logins (client, scopes, resources, refresh tokens), with q, sort, paging and fields', async () => {
    const a = await passwordClient(m);
    const b = await passwordClient(m);
    const user = await signedInUser();
    const ta = await a.login(user.email, PASSWORD);
    await b.login(user.email, PASSWORD);
    const other = await signedInUser();
    await a.login(other.email, PASSWORD);

    const res = await m
      .call('get', `${base}/${user.id}/grants`)
      .query({ [ENVELOPE[v].total]: true })
      .expect(200);
    expect(res.body[ENVELOPE[v].total]).toBe(2);
    expect(res.body[ENVELOPE[v].hasMore]).toBe(false);
    expect(res.body.items).toHaveLength(2);
    const ga = res.body.items.find((g: { client_id: string }) => g.client_id === a.id);
    expect(ga).toEqual({
      id: expect.any(String),
      user_id: user.id,
      client_id: a.id,
      client_name: expect.any(String),
      scopes: expect.arrayContaining(['offline_access']),
      resources: [{ identifier_url: a.identifier, scopes: ['things:read'] }],
      refresh_tokens: 1,
      has_refresh_token: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    const byName = await m
      .call('get', `${base}/${user.id}/grants`)
      .query({ sort: 'client_name:desc', fields: 'client_name' })
      .expect(200);
    const names = res.body.items.map((g: { client_name: string }) => g.client_name);
    expect(byName.body.items.map((g: { client_name: string }) => g.client_name)).toEqual(
      [...names].sort((x, y) => (x < y ? 1 : -1)),
    );
    const [stored] = await m.ds.rows<{ grant_id: string }>(
      `SELECT grant_id FROM oidc_payloads WHERE model = 'RefreshToken' AND payload->>'accountId' = $1 AND grant_id = $2`,
      [user.id, ga.id],
    );
    expect(stored).toBeDefined();
    expect(ta.refresh_token).toEqual(expect.any(String));

    const q = await m
      .call('get', `${base}/${user.id}/grants`)
      .query({ q: `client_id = '${a.id}'`, fields: 'id,client_id', sort: 'client_name:asc', limit: 1 })
      .expect(200);
    expect(q.body.items).toEqual([{ id: ga.id, client_id: a.id }]);
    const paged = await m.call('get', `${base}/${user.id}/grants`).query({ limit: 1 }).expect(200);
    expect(paged.body.items).toHaveLength(1);
    expect(paged.body[ENVELOPE[v].hasMore]).toBe(true);
    await m.call('get', `${base}/${user.id}/grants`).query({ q: 'nope = 1' }).expect(400);
    await m.call('get', `${base}/${user.id}/grants`).query({ fields: 'secret' }).expect(400);
    await m.call('get', `${base}/${user.id}/grants`).query({ sort: 'payload:asc' }).expect(400);
    // a user without grants
    const none = await signedInUser();
    expect((await m.call('get', `${base}/${none.id}/grants`).expect(200)).body.items).toEqual([]);
  });

  it('DELETE revokes the grant at once: its refresh token fails with invalid_grant and /tokeninfo says inactive; other grants live', async () => {
    const a = await passwordClient(m);
    const b = await passwordClient(m);
    const user = await signedInUser();
    const t = await a.login(user.email, PASSWORD);
    const kept = await b.login(user.email, PASSWORD);
    expect(await m.tokenInfo(t.access_token)).toMatchObject({ active: true });
    const grants = (await m.call('get', `${base}/${user.id}/grants`).expect(200)).body.items as {
      id: string;
      client_id: string;
    }[];
    const grant = grants.find((g) => g.client_id === a.id)!;

    const res = await m.call('delete', `${base}/${user.id}/grants/${grant.id}`).expect(204);
    expect(res.text).toBe('');
    expect((await oauthError(oidc.refreshTokenGrant(a.config, t.refresh_token!))).error).toBe(
      'invalid_grant',
    );
    expect(await m.tokenInfo(t.access_token)).toEqual({ active: false });
    expect(
      await m.ds.rows(`SELECT 1 FROM oidc_payloads WHERE grant_id = $1 OR id = $1`, [grant.id]),
    ).toHaveLength(0);
    // the other client's grant is untouched
    expect(await m.tokenInfo(kept.access_token)).toMatchObject({ active: true });
    const refreshed = await oidc.refreshTokenGrant(b.config, kept.refresh_token!);
    expect(refreshed.access_token).toEqual(expect.any(String));
    const left = (await m.call('get', `${base}/${user.id}/grants`).expect(200)).body.items;
    expect(left.map((g: { client_id: string }) => g.client_id)).toEqual([b.id]);
    // the user may sign in again (a new grant)
    expect((await a.login(user.email, PASSWORD)).access_token).toEqual(expect.any(String));
    // gone: 404
    await m.call('delete', `${base}/${user.id}/grants/${grant.id}`).expect(404);
  });

  it('DELETE also ends the grant’s opaque access token (no audience): /tokeninfo inactive, /userinfo refused', async () => {
    const a = await passwordClient(m);
    const user = await signedInUser();
    const t = await oidc.genericGrantRequest(a.config, 'password', {
      username: user.email,
      password: PASSWORD,
      scope: 'openid email offline_access',
    });
    expect(t.access_token.split('.')).toHaveLength(1);
    const userinfo = () =>
      fetch(`${m.auth.url}/userinfo`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect((await userinfo()).status).toBe(200);
    expect(await m.tokenInfo(t.access_token, { id: a.id, secret: a.secret })).toMatchObject({ active: true });
    const grant = (await m.call('get', `${base}/${user.id}/grants`).expect(200)).body.items[0];
    expect(grant.scopes).toEqual(expect.arrayContaining(['openid', 'email', 'offline_access']));
    expect(grant.resources).toEqual([]);
    await m.call('delete', `${base}/${user.id}/grants/${grant.id}`).expect(204);
    expect(await m.tokenInfo(t.access_token, { id: a.id, secret: a.secret })).toEqual({ active: false });
    expect((await userinfo()).status).toBe(401);
    expect((await oauthError(oidc.refreshTokenGrant(a.config, t.refresh_token!))).error).toBe(
      'invalid_grant',
    );
  });

  it('404 for another user’s grant, unknown users and grants; 400 for malformed ids; nothing revoked', async () => {
    const a = await passwordClient(m);
    const owner = await signedInUser();
    const t = await a.login(owner.email, PASSWORD);
    const grant = (await m.call('get', `${base}/${owner.id}/grants`).expect(200)).body.items[0].id as string;
    const stranger = await signedInUser();
    await m.call('delete', `${base}/${stranger.id}/grants/${grant}`).expect(404);
    await m.call('delete', `${base}/${missingId()}/grants/${grant}`).expect(404);
    await m.call('get', `${base}/${missingId()}/grants`).expect(404);
    await m.call('delete', `${base}/${owner.id}/grants/${'x'.repeat(43)}`).expect(404);
    await m.call('get', `${base}/not-a-uuid/grants`).expect(400);
    await m.call('delete', `${base}/not-a-uuid/grants/${grant}`).expect(400);
    await m.call('delete', `${base}/${owner.id}/grants/${encodeURIComponent('bad id!')}`).expect(400);
    expect(await m.tokenInfo(t.access_token)).toMatchObject({ active: true });
  });

  it('405 for another method on the grant paths', async () => {
    const user = await signedInUser();
    expect((await m.call('post', `${base}/${user.id}/grants`)).status).toBe(405);
    expect((await m.call('patch', `${base}/${user.id}/grants/abc`)).status).toBe(405);
  });

  it('scopes users:read / users:write; a tenant-bound caller reaches its tenant’s users only', async () => {
    const a = await passwordClient(m);
    const tenant = await m.tenant();
    const other = await m.tenant();
    const mine = await signedInUser(tenant);
    const theirs = await signedInUser(other);
    // the password client is global: both users may sign in through it
    await a.login(mine.email, PASSWORD);
    await a.login(theirs.email, PASSWORD);
    const theirGrant = (await m.call('get', `${base}/${theirs.id}/grants`).expect(200)).body.items[0]
      .id as string;
    const myGrant = (await m.call('get', `${base}/${mine.id}/grants`).expect(200)).body.items[0].id as string;

    const reader = await m.caller(['users:read']);
    await m.call('get', `${base}/${mine.id}/grants`, reader.token).expect(200);
    await m.call('delete', `${base}/${mine.id}/grants/${myGrant}`, reader.token).expect(403);
    const writer = await m.caller(['users:write']);
    await m.call('get', `${base}/${mine.id}/grants`, writer.token).expect(403);
    await m.call('get', `${base}/${mine.id}/grants`, '').expect(401);

    const tenantCaller = await m.caller(['users:read', 'users:write'], { tenantId: tenant, isGlobal: false });
    await m.call('get', `${base}/${theirs.id}/grants`, tenantCaller.token).expect(404);
    await m.call('delete', `${base}/${theirs.id}/grants/${theirGrant}`, tenantCaller.token).expect(404);
    expect((await m.call('get', `${base}/${theirs.id}/grants`).expect(200)).body.items).toHaveLength(1);
    await m.call('get', `${base}/${mine.id}/grants`, tenantCaller.token).expect(200);
    await m.call('delete', `${base}/${mine.id}/grants/${myGrant}`, tenantCaller.token).expect(204);
  });
});

/**
 * With REDIS_URL the token server keeps short-lived artifacts (opaque access tokens, codes) in Redis, grants and
 * refresh tokens in PostgreSQL. Revoking a grant deletes what PostgreSQL holds; an opaque access token left in Redis
 * (until its own expiry) is refused all the same, because the token server checks that a token's grant exists.
 */
(process.env.TEST_REDIS_URL ? describe : describe.skip)('with REDIS_URL on the token server', () => {
  let r: Management;
  let redis: Redis;

  beforeAll(async () => {
    r = await Management.start({}, { REDIS_URL: process.env.TEST_REDIS_URL! });
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  afterAll(async () => {
    redis?.disconnect();
    await r?.close();
  });

  it('a revoked grant’s opaque access token in Redis is inactive at /tokeninfo and refused at /userinfo', async () => {
    const a = await passwordClient(r);
    const mail = `${uniq('redis')}@example.test`;
    const user = (
      await r.call('post', '/api/v1/users').send({ user_email: mail, password: PASSWORD }).expect(201)
    ).body as { id: string };
    const t = await oidc.genericGrantRequest(a.config, 'password', {
      username: mail,
      password: PASSWORD,
      scope: 'openid email offline_access',
    });
    expect(await redis.exists(`gh:oidc:AccessToken:${t.access_token}`)).toBe(1);
    const grant = (await r.call('get', `/api/v1/users/${user.id}/grants`).expect(200)).body.items[0];
    expect(grant.refresh_tokens).toBe(1);
    await r.call('delete', `/api/v2/users/${user.id}/grants/${grant.id}`).expect(204);
    // what remains: the Redis entry, dead
    expect(await redis.exists(`gh:oidc:AccessToken:${t.access_token}`)).toBe(1);
    expect(await r.tokenInfo(t.access_token, { id: a.id, secret: a.secret })).toEqual({ active: false });
    const info = await fetch(`${r.auth.url}/userinfo`, {
      headers: { authorization: `Bearer ${t.access_token}` },
    });
    expect(info.status).toBe(401);
    expect((await oauthError(oidc.refreshTokenGrant(a.config, t.refresh_token!))).error).toBe(
      'invalid_grant',
    );
  });
});
