import { decodeJwt } from 'jose';
// A real external OIDC issuer (JWKS and discovery on a free port, jose-signed ID tokens), shared with apps/auth's tests.
import { LocalIssuer } from '@gatehouse/testing';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

/**
 * User Identities over HTTP in both presentations, end to end: token exchange (RFC 8693) at the real token server
 * with a subject token of a local issuer creates the user and its identity, a second exchange reuses them, and the
 * identity shows (and is deleted) here.
 */
let m: Management;
let issuer: LocalIssuer;
let tenant: string;
let client: { id: string; secret: string };
const upstreamClientId = uniq('upstream');

const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

async function exchange(subjectToken: string, scope = 'openid') {
  const res = await fetch(`${m.auth.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'token_exchange',
      subject_token: subjectToken,
      subject_token_type: ID_TOKEN,
      scope,
    }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A first sign-in through token exchange: the user id and the account's sub. */
async function signIn(claims: Record<string, unknown> = {}): Promise<{ userId: string; sub: string }> {
  const sub = uniq('sub');
  const r = await exchange(await issuer.idToken(upstreamClientId, sub, claims));
  expect(r.status).toBe(200);
  return { userId: decodeJwt(r.body.id_token as string).sub!, sub };
}

beforeAll(async () => {
  issuer = await LocalIssuer.start();
  m = await Management.start();
  tenant = await m.tenant();
  await m
    .call('post', `/api/v1/tenants/${tenant}/identity-providers`)
    .send({ identity_provider: 'oidc', name: 'Local', issuer: issuer.url, client_id: upstreamClientId })
    .expect(201);
  const created = (
    await m
      .call('post', '/api/v1/clients')
      .send({
        client_name: uniq('app'),
        tenant_id: tenant,
        is_global: false,
        client_metadata: { grant_types: ['token_exchange'] },
      })
      .expect(201)
  ).body as { id: string; client_secret: string };
  client = { id: created.id, secret: created.client_secret };
});
afterAll(async () => {
  await m?.close();
  await issuer?.stop();
});

describe('token exchange end to end', () => {
  it('creates the user and its identity, reuses them for the same sub, and the identity is listed', async () => {
    const sub = uniq('sub');
    const claims = {
      email: `${uniq('e2e')}@upstream.test`,
      email_verified: true,
      name: 'Tuya Gan',
      picture: 'https://img.test/tuya.png',
      preferred_username: 'tuya',
    };
    const first = await exchange(await issuer.idToken(upstreamClientId, sub, claims));
    expect(first.status).toBe(200);
    const userId = decodeJwt(first.body.id_token as string).sub!;
    const second = await exchange(await issuer.idToken(upstreamClientId, sub, claims));
    expect(decodeJwt(second.body.id_token as string).sub).toBe(userId);

    const user = (await m.call('get', `/api/v1/users/${userId}`).expect(200)).body;
    expect(user).toMatchObject({
      user_email: claims.email,
      user_email_verified: true,
      user_fullName: 'Tuya Gan',
    });
    // created in the identity provider's tenant
    const [row] = await m.ds.rows<{ tenant_id: string }>(`SELECT tenant_id FROM users WHERE id = $1`, [
      userId,
    ]);
    expect(row.tenant_id).toBe(tenant);

    for (const v of VERSIONS) {
      const { total, hasMore } = ENVELOPE[v];
      const list = (await m.call('get', `/api/${v}/users/${userId}/identities?${total}=true`).expect(200))
        .body;
      expect(list).toMatchObject({ [total]: 1, count: 1, [hasMore]: false });
      expect(list.items[0]).toEqual({
        id: expect.any(String),
        instance_id: expect.any(String),
        user_id: userId,
        identity_provider: 'oidc',
        identity_provider_id: expect.any(String),
        issuer: issuer.url,
        user_identifier: sub,
        identity_data: {
          profile_picture: 'https://img.test/tuya.png',
          username: 'tuya',
          user_fullname: 'Tuya Gan',
          email: claims.email,
          email_verified: true,
          phone: null,
          phone_verified: null,
        },
        refresh_token: null,
        access_token: null,
        access_token_secret: null,
        last_sign_in_at: expect.any(String),
        created_by: null,
        created_at: expect.any(String),
        updated_by: null,
        updated_at: expect.any(String),
      });
    }
  });
});

describe.each(VERSIONS)('/users/:user_id/identities under /api/%s', (v: Version) => {
  const api = `/api/${v}`;

  it('lists with fields, q and sort; deletes (204) and the user stays', async () => {
    const { userId, sub } = await signIn();
    const path = `${api}/users/${userId}/identities`;
    const cut = (await m.call('get', `${path}?fields=id,user_identifier`).expect(200)).body;
    expect(cut.items).toEqual([{ id: expect.any(String), user_identifier: sub }]);
    const q = encodeURIComponent(`user_identifier = '${sub}' and identity_provider = 'oidc'`);
    expect((await m.call('get', `${path}?q=${q}&sort=last_sign_in_at:desc`).expect(200)).body.count).toBe(1);
    expect(
      (await m.call('get', `${path}?q=${encodeURIComponent("issuer = 'x'")}`).expect(200)).body.count,
    ).toBe(0);

    await m.call('delete', `${path}/${cut.items[0].id}`).expect(204);
    expect((await m.call('get', path).expect(200)).body.count).toBe(0);
    await m.call('get', `${api}/users/${userId}`).expect(200);
    await m.call('delete', `${path}/${cut.items[0].id}`).expect(404);
  });

  it('400 for malformed ids and bad queries, 404 for unknown users or identities of another user', async () => {
    const a = await signIn();
    const b = await signIn();
    const [ofB] = (await m.call('get', `${api}/users/${b.userId}/identities`).expect(200)).body.items;
    await m.call('get', `${api}/users/not-a-uuid/identities`).expect(400);
    await m.call('delete', `${api}/users/${a.userId}/identities/not-a-uuid`).expect(400);
    await m.call('get', `${api}/users/${a.userId}/identities?fields=nope`).expect(400);
    await m
      .call('get', `${api}/users/${a.userId}/identities?q=${encodeURIComponent('nope = 1')}`)
      .expect(400);
    await m.call('get', `${api}/users/${missingId()}/identities`).expect(404);
    await m.call('delete', `${api}/users/${missingId()}/identities/${ofB.id}`).expect(404);
    await m.call('delete', `${api}/users/${a.userId}/identities/${ofB.id}`).expect(404);
    expect((await m.call('get', `${api}/users/${b.userId}/identities`).expect(200)).body.count).toBe(1);
  });

  it('a tenant-bound caller reaches only users of its tenant; scopes users:read / users:write', async () => {
    const { userId } = await signIn();
    const [identity] = (await m.call('get', `${api}/users/${userId}/identities`).expect(200)).body.items;
    const own = await m.caller(['users:read', 'users:write'], { tenantId: tenant, isGlobal: false });
    await m.call('get', `${api}/users/${userId}/identities`, own.token).expect(200);
    const other = await m.caller(['users:read', 'users:write'], {
      tenantId: await m.tenant(),
      isGlobal: false,
    });
    await m.call('get', `${api}/users/${userId}/identities`, other.token).expect(404);
    await m.call('delete', `${api}/users/${userId}/identities/${identity.id}`, other.token).expect(404);
    const reader = await m.caller(['users:read']);
    await m.call('delete', `${api}/users/${userId}/identities/${identity.id}`, reader.token).expect(403);
    await m.call('get', `${api}/users/${userId}/identities`, '').expect(401);
    expect((await m.call('get', `${api}/users/${userId}/identities`).expect(200)).body.count).toBe(1);
  });
});

describe('deleting the identity provider', () => {
  it('keeps the users and identities it made; a provider of the same issuer added back uses them again', async () => {
    const { userId, sub } = await signIn();
    const providers = `/api/v2/tenants/${tenant}/identity-providers`;
    const [provider] = (await m.call('get', providers).expect(200)).body.items;
    await m.call('delete', `${providers}/${provider.id}`).expect(204);

    const [kept] = (await m.call('get', `/api/v2/users/${userId}/identities`).expect(200)).body.items;
    expect(kept).toMatchObject({ user_identifier: sub, identity_provider_id: null, issuer: issuer.url });
    const refused = await exchange(await issuer.idToken(upstreamClientId, sub));
    expect(refused.body).toMatchObject({ error: 'invalid_grant' });

    const again = (
      await m
        .call('post', providers)
        .send({
          identity_provider: 'oidc',
          name: 'Local again',
          issuer: issuer.url,
          client_id: upstreamClientId,
        })
        .expect(201)
    ).body;
    const back = await exchange(await issuer.idToken(upstreamClientId, sub));
    expect(decodeJwt(back.body.id_token as string).sub).toBe(userId);
    const [relinked] = (await m.call('get', `/api/v2/users/${userId}/identities`).expect(200)).body.items;
    expect(relinked).toMatchObject({ id: kept.id, identity_provider_id: again.id });
  });
});
