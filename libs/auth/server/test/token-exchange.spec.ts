import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { eventually } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenRequest, type TestClient, type TestResource } from './support/fixtures.js';
import { LocalIssuer } from '@gatehouse/testing';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

let h: AuthHarness;
let fx: Fixtures;
let issuer: LocalIssuer;
let tenantId: string;
let idpId: string;
/** Our client id at the local issuer (the `aud` of its ID tokens). */
const upstreamClientId = `gatehouse-${randomBytes(4).toString('hex')}`;
let client: TestClient;
let api: TestResource;

const tag = () => randomBytes(4).toString('hex');

async function tenant(): Promise<string> {
  const [t] = await fx.ds.rows<{ id: string }>(
    `INSERT INTO tenants (instance_id, name) VALUES ($1, $2) RETURNING id`,
    [await fx.instanceId(), `tenant-${tag()}`],
  );
  return t.id;
}

async function identityProvider(
  tenant: string,
  o: { issuer?: string; jwksUri?: string | null; enabled?: boolean; kind?: string; clientId?: string } = {},
): Promise<string> {
  const [row] = await fx.ds.rows<{ id: string }>(
    `INSERT INTO tenant_identity_providers (instance_id, tenant_id, identity_provider, name, issuer, client_id,
                                            jwks_uri, enabled)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [
      await fx.instanceId(),
      tenant,
      o.kind ?? 'oidc',
      `idp-${tag()}`,
      o.issuer ?? issuer.url,
      o.clientId ?? upstreamClientId,
      o.jwksUri === undefined ? issuer.jwksUri : o.jwksUri,
      o.enabled ?? true,
    ],
  );
  return row.id;
}

async function tenantClient(tenant: string | null, grantTypes = ['token_exchange', 'refresh_token']) {
  const c = await fx.client({ grantTypes });
  await fx.ds.exec(`UPDATE clients SET tenant_id = $2, is_global = $3 WHERE id = $1`, [
    c.id,
    tenant,
    tenant === null,
  ]);
  return c;
}

const exchange = (
  subjectToken: string,
  extra: Record<string, string> = {},
  c: TestClient = client,
  json = false,
) =>
  tokenRequest(
    h.url,
    { grant_type: GRANT, subject_token: subjectToken, subject_token_type: ID_TOKEN, ...extra },
    { basic: { id: c.id, secret: c.secret! }, json },
  );

const identitiesOf = (sub: string) =>
  fx.ds.rows<{ user_id: string; last_sign_in_at: Date; provider: string; identity_provider_id: string }>(
    `SELECT user_id, last_sign_in_at, provider, identity_provider_id FROM user_identities WHERE provider_user_id = $1`,
    [sub],
  );

beforeAll(async () => {
  issuer = await LocalIssuer.start();
  h = await startAuth();
  fx = new Fixtures(h);
  tenantId = await tenant();
  idpId = await identityProvider(tenantId);
  client = await tenantClient(tenantId);
  api = await fx.resource({ scopes: ['orders:read', 'orders:write'] });
  await fx.grant(client, api);
});
afterAll(async () => {
  await h?.close();
  await issuer?.stop();
});

describe('token exchange (RFC 8693) with a local issuer', () => {
  it('creates a user and an identity on first exchange, and reuses them for the same sub', async () => {
    const sub = `upstream-${tag()}`;
    const email = `ex-${tag()}@upstream.test`;
    const idToken = await issuer.idToken(upstreamClientId, sub, {
      email,
      email_verified: true,
      name: 'Saraa Bold',
      given_name: 'Saraa',
      picture: 'https://img.test/saraa.png',
      preferred_username: 'saraa',
    });
    const first = await exchange(idToken, { audience: api.identifier, scope: 'openid email orders:read' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', issued_token_type: ACCESS_TOKEN });
    const at = await jwtVerify(
      first.body.access_token as string,
      createRemoteJWKSet(new URL(`${h.url}/jwks`)),
      {
        issuer: h.url,
        audience: api.identifier,
      },
    );
    expect(at.payload.scope).toBe('orders:read');
    const userId = at.payload.sub!;
    const id = decodeJwt(first.body.id_token as string);
    expect(id.sub).toBe(userId);
    expect(first.body.refresh_token).toBeUndefined(); // offline_access was not asked

    const [user] = await fx.ds.rows(
      `SELECT tenant_id, user_email, email_verified, name FROM users WHERE id = $1`,
      [userId],
    );
    expect(user).toEqual({
      tenant_id: tenantId,
      user_email: email,
      email_verified: true,
      name: 'Saraa Bold',
    });
    const [identity] = await identitiesOf(sub);
    expect(identity).toMatchObject({ user_id: userId, provider: 'oidc', identity_provider_id: idpId });

    // the same account again (the alias, a JSON body): the same user, no second user or identity
    const again = await tokenRequest(
      h.url,
      {
        grant_type: 'token_exchange',
        subject_token: await issuer.idToken(upstreamClientId, sub, { email, email_verified: true }),
        subject_token_type: ID_TOKEN,
        audience: api.identifier,
      },
      { basic: { id: client.id, secret: client.secret! }, json: true },
    );
    expect(again.status).toBe(200);
    expect(decodeJwt(again.body.access_token as string).sub).toBe(userId);
    expect(decodeJwt(again.body.access_token as string).scope).toBe('orders:read orders:write');
    const after = await identitiesOf(sub);
    expect(after).toHaveLength(1);
    expect(after[0].last_sign_in_at.getTime()).toBeGreaterThanOrEqual(identity.last_sign_in_at.getTime());
    const users = await fx.ds.rows(`SELECT id FROM users WHERE lower(user_email) = $1`, [email]);
    expect(users).toHaveLength(1);
  });

  it('two first sign-ins of one account at once make one user and one identity', async () => {
    const sub = `race-${tag()}`;
    const results = await Promise.all(
      [0, 1, 2, 3, 4].map(async () =>
        exchange(
          await issuer.idToken(upstreamClientId, sub, {
            email: `${sub}@upstream.test`,
            email_verified: true,
          }),
          {
            scope: 'openid',
          },
        ),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const subs = new Set(results.map((r) => decodeJwt(r.body.id_token as string).sub));
    expect(subs.size).toBe(1);
    expect(await identitiesOf(sub)).toHaveLength(1);
  });

  describe('first sign-in race: concurrent first exchanges deadlocked into a 500', () => {
    const firstExchanges = async (subs: string[], email: string) =>
      Promise.all(
        subs.map(async (sub) =>
          exchange(await issuer.idToken(upstreamClientId, sub, { email, email_verified: true }), {
            scope: 'openid',
          }),
        ),
      );
    const usersWith = (email: string) =>
      fx.ds.rows<{ id: string }>(`SELECT id FROM users WHERE lower(user_email) = lower($1)`, [email]);

    // Several rounds: one round of 30 hit the deadlock about one run in five on a quiet 2-core machine.
    it('30 first exchanges of one account at once: no 5xx, one user, one identity (3 rounds)', async () => {
      for (let round = 0; round < 3; round++) {
        const sub = `race30-${tag()}`;
        const email = `${sub}@upstream.test`;
        const results = await firstExchanges(Array<string>(30).fill(sub), email);
        expect(results.filter((r) => r.status !== 200).map((r) => [r.status, r.body])).toEqual([]);
        const userIds = new Set(results.map((r) => decodeJwt(r.body.id_token as string).sub));
        expect(userIds.size).toBe(1);
        expect(await usersWith(email)).toEqual([{ id: [...userIds][0] }]);
        expect(await identitiesOf(sub)).toHaveLength(1);
      }
    });

    it('6 accounts sharing one e-mail, 5 first exchanges each at once: one user, one identity each', async () => {
      for (let round = 0; round < 3; round++) {
        const accounts = Array.from({ length: 6 }, () => `shared-${tag()}`);
        const email = `shared-${tag()}@upstream.test`;
        const results = await firstExchanges(
          accounts.flatMap((sub) => Array<string>(5).fill(sub)),
          email,
        );
        expect(results.filter((r) => r.status !== 200).map((r) => [r.status, r.body])).toEqual([]);
        const userIds = new Set(results.map((r) => decodeJwt(r.body.id_token as string).sub));
        expect(userIds.size).toBe(1);
        expect(await usersWith(email)).toEqual([{ id: [...userIds][0] }]);
        for (const sub of accounts) {
          const identities = await identitiesOf(sub);
          expect(identities).toHaveLength(1);
          expect(identities[0].user_id).toBe([...userIds][0]);
        }
      }
    });
  });

  it('links a verified e-mail to the existing user; an unverified one is refused and writes nothing', async () => {
    const existing = await fx.user();
    await fx.ds.exec(`UPDATE users SET tenant_id = $2 WHERE id = $1`, [existing.id, tenantId]);

    const unverifiedSub = `unverified-${tag()}`;
    const refused = await exchange(
      await issuer.idToken(upstreamClientId, unverifiedSub, { email: existing.email, email_verified: false }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_grant', code: 'invalid_grant' });
    expect(await identitiesOf(unverifiedSub)).toHaveLength(0);

    const sub = `linked-${tag()}`;
    const linked = await exchange(
      await issuer.idToken(upstreamClientId, sub, {
        email: existing.email.toUpperCase(),
        email_verified: true,
      }),
      { scope: 'openid' },
    );
    expect(linked.status).toBe(200);
    expect(decodeJwt(linked.body.id_token as string).sub).toBe(existing.id);
    expect((await identitiesOf(sub))[0].user_id).toBe(existing.id);
  });

  it('answers a refresh token when offline_access is asked and the client allows refresh_token', async () => {
    const r = await exchange(await issuer.idToken(upstreamClientId, `rt-${tag()}`), {
      scope: 'openid offline_access',
    });
    expect(r.status).toBe(200);
    expect(typeof r.body.refresh_token).toBe('string');
    const refreshed = await tokenRequest(
      h.url,
      { grant_type: 'refresh_token', refresh_token: r.body.refresh_token as string },
      { basic: { id: client.id, secret: client.secret! } },
    );
    expect(refreshed.status).toBe(200);
  });

  it('refuses a wrong signature, a wrong aud, an expired token, an unknown issuer (invalid_grant)', async () => {
    const forged = await issuer.idToken(
      upstreamClientId,
      `f-${tag()}`,
      {},
      {
        key: await LocalIssuer.foreignKey(),
        kid: issuer.keys[0].kid,
      },
    );
    const wrongAud = await issuer.idToken('someone-else', `a-${tag()}`);
    const expired = await issuer.idToken(upstreamClientId, `e-${tag()}`, {}, { expiresInSec: -120 });
    const unknownIssuer = await issuer.idToken(
      upstreamClientId,
      `u-${tag()}`,
      {},
      { issuer: 'https://idp.unknown.test' },
    );
    const cases: [string, RegExp][] = [
      [forged, /not valid|signature/],
      [wrongAud, /aud/],
      [expired, /expired/],
      [unknownIssuer, /no enabled identity provider/],
      ['not-a-jwt', /not a JWT/],
    ];
    for (const [token, message] of cases) {
      const r = await exchange(token);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_grant', code: 'invalid_grant' });
      expect(r.body.error_description).toMatch(message);
      expect(r.body.message).toBe(r.body.error_description);
    }
  });

  it('refuses a disabled identity provider and a kind the instance turned off', async () => {
    const t = await tenant();
    const id = await identityProvider(t, { enabled: false, kind: 'acme' });
    const c = await tenantClient(t);
    const token = await issuer.idToken(upstreamClientId, `d-${tag()}`);
    expect((await exchange(token, {}, c)).body.error).toBe('invalid_grant');

    await fx.ds.exec(`UPDATE tenant_identity_providers SET enabled = true WHERE id = $1`, [id]);
    expect((await exchange(token, {}, c)).status).toBe(200);

    const instanceId = await fx.instanceId();
    await fx.ds.exec(
      `UPDATE instances SET settings = settings || '{"identity_providers": [{"identity_provider": "acme", "enabled": false}]}'::jsonb
        WHERE id = $1`,
      [instanceId],
    );
    try {
      const r = await exchange(await issuer.idToken(upstreamClientId, `d2-${tag()}`), {}, c);
      expect(r.body).toMatchObject({ error: 'invalid_grant' });
      expect(r.body.error_description).toMatch(/disabled in this instance/);
      // other kinds are not affected
      expect((await exchange(await issuer.idToken(upstreamClientId, `d3-${tag()}`))).status).toBe(200);
    } finally {
      await fx.ds.exec(`UPDATE instances SET settings = settings - 'identity_providers' WHERE id = $1`, [
        instanceId,
      ]);
    }
  });

  it('fetches the keys again for an unknown kid: a rotated key works, an unpublished one does not', async () => {
    expect((await exchange(await issuer.idToken(upstreamClientId, `k-${tag()}`))).status).toBe(200);
    const fetched = issuer.hits.get('/jwks') ?? 0;
    await issuer.rotate(true);
    const rotated = await issuer.idToken(upstreamClientId, `k2-${tag()}`);
    // a refetch is allowed once a second per key set: the first try may come too soon after the last fetch
    await eventually(async () => (await exchange(rotated)).status === 200, {
      timeoutMs: 5000,
      intervalMs: 250,
      what: 'the rotated key accepted',
    });
    expect(issuer.hits.get('/jwks')).toBeGreaterThan(fetched);

    const unknownKid = await issuer.idToken(
      upstreamClientId,
      `k3-${tag()}`,
      {},
      {
        key: await LocalIssuer.foreignKey(),
      },
    );
    const r = await exchange(unknownKid);
    expect(r.body).toMatchObject({ error: 'invalid_grant' });
    expect(r.body.error_description).toMatch(/kid/);
  });

  it('finds the JWKS through the discovery document when the provider names none', async () => {
    const t = await tenant();
    await identityProvider(t, { jwksUri: null });
    const c = await tenantClient(t);
    h.tokenServer.upstreamKeys.clear();
    const before = issuer.hits.get('/.well-known/openid-configuration') ?? 0;
    expect((await exchange(await issuer.idToken(upstreamClientId, `disc-${tag()}`), {}, c)).status).toBe(200);
    expect(issuer.hits.get('/.well-known/openid-configuration')).toBe(before + 1);
  });

  it('gives a blocked user nothing; a tenant client does not reach another tenant’s provider', async () => {
    const sub = `blocked-${tag()}`;
    const first = await exchange(await issuer.idToken(upstreamClientId, sub), { scope: 'openid' });
    expect(first.status).toBe(200);
    await fx.setBlocked(decodeJwt(first.body.id_token as string).sub!, true);
    const r = await exchange(await issuer.idToken(upstreamClientId, sub));
    expect(r.body).toMatchObject({ error: 'invalid_grant', error_description: 'the user is blocked' });

    // A client of another tenant without a provider of this issuer
    const other = await tenantClient(await tenant());
    const o = await exchange(await issuer.idToken(upstreamClientId, `x-${tag()}`), {}, other);
    expect(o.body.error_description).toMatch(/no enabled identity provider/);
  });

  it('a global client uses the provider of any tenant; the new user is of that tenant', async () => {
    const global = await tenantClient(null);
    const r = await exchange(
      await issuer.idToken(upstreamClientId, `g-${tag()}`),
      { scope: 'openid' },
      global,
    );
    expect(r.status).toBe(200);
    const [u] = await fx.ds.rows(`SELECT tenant_id FROM users WHERE id = $1`, [
      decodeJwt(r.body.id_token as string).sub,
    ]);
    expect(u.tenant_id).toBe(tenantId);
  });

  it('400 invalid_request for missing or unsupported parameters; a client without the grant type is refused', async () => {
    const token = await issuer.idToken(upstreamClientId, `p-${tag()}`);
    const bad: Record<string, string>[] = [
      { subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' },
      { subject_token_type: 'Not A Kind!' },
      { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' },
      { actor_token: token, actor_token_type: ID_TOKEN },
    ];
    for (const extra of bad) {
      const r = await exchange(token, extra);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
    }
    const missing = await tokenRequest(
      h.url,
      { grant_type: GRANT, subject_token_type: ID_TOKEN },
      { basic: { id: client.id, secret: client.secret! } },
    );
    expect(missing.body).toMatchObject({ error: 'invalid_request' });

    const noGrant = await tenantClient(tenantId, ['client_credentials']);
    const r = await exchange(token, {}, noGrant);
    expect(r.status).toBe(400);
    expect(r.body.error_description).toMatch(/grant type is not allowed for this client/);
  });

  it('accepts the provider kind as subject_token_type (document 1) and a JWT access token for our client', async () => {
    expect(
      (
        await exchange(await issuer.idToken(upstreamClientId, `kind-${tag()}`), {
          subject_token_type: 'oidc',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await exchange(await issuer.idToken(upstreamClientId, `kind2-${tag()}`), {
          subject_token_type: 'google',
        })
      ).body.error,
    ).toBe('invalid_grant');
    const accessToken = await issuer.idToken('https://api.upstream.test', `at-${tag()}`, {
      azp: upstreamClientId,
    });
    expect((await exchange(accessToken, { subject_token_type: ACCESS_TOKEN })).status).toBe(200);
    expect((await exchange(accessToken, { subject_token_type: ID_TOKEN })).body.error).toBe('invalid_grant');
  });
});
