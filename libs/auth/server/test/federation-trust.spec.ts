import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { eventually, smtpSink, type SunkMail } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenRequest, type TestClient, type TestResource } from './support/fixtures.js';
import { LocalIssuer } from '@gatehouse/testing';

/**
 * Who a tenant's identity provider may sign in: only users of its own tenant, linked by a verified e-mail only to a
 * local account whose e-mail is verified too (or taken over from an account that never proved the address).
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

const mails: SunkMail[] = [];
const smtp = smtpSink(mails);

let h: AuthHarness;
let fx: Fixtures;
/** Tenant B's real identity provider, and the one a tenant A administrator runs. */
let realIdp: LocalIssuer;
let attackerIdp: LocalIssuer;
let tenantA: string;
let tenantB: string;
/** A global (tenant-less) client that allows token exchange. */
let global: TestClient;
let api: TestResource;
const realAud = `real-${randomBytes(4).toString('hex')}`;
const attackerAud = `evil-${randomBytes(4).toString('hex')}`;

const tag = () => randomBytes(4).toString('hex');

async function tenant(): Promise<string> {
  const [t] = await fx.ds.rows<{ id: string }>(
    `INSERT INTO tenants (instance_id, name) VALUES ($1, $2) RETURNING id`,
    [await fx.instanceId(), `tenant-${tag()}`],
  );
  return t.id;
}

async function identityProvider(tenantId: string, issuer: string, jwksUri: string, clientId: string) {
  const [row] = await fx.ds.rows<{ id: string }>(
    `INSERT INTO tenant_identity_providers (instance_id, tenant_id, identity_provider, name, issuer, client_id,
                                            jwks_uri, enabled)
     VALUES ($1, $2, 'oidc', $3, $4, $5, $6, true) RETURNING id`,
    [await fx.instanceId(), tenantId, `idp-${tag()}`, issuer, clientId, jwksUri],
  );
  return row.id;
}

async function client(
  tenantId: string | null,
  grantTypes: string[],
  metadata: Record<string, unknown> = {},
): Promise<TestClient> {
  const c = await fx.client({ grantTypes, metadata });
  await fx.ds.exec(`UPDATE clients SET tenant_id = $2, is_global = $3 WHERE id = $1`, [
    c.id,
    tenantId,
    tenantId === null,
  ]);
  return c;
}

const exchange = (subjectToken: string, c: TestClient = global, extra: Record<string, string> = {}) =>
  tokenRequest(
    h.url,
    {
      grant_type: GRANT,
      subject_token: subjectToken,
      subject_token_type: ID_TOKEN,
      scope: 'openid',
      ...extra,
    },
    { basic: { id: c.id, secret: c.secret! } },
  );

const password = (c: TestClient, username: string, pw: string, extra: Record<string, string> = {}) =>
  tokenRequest(
    h.url,
    { grant_type: 'password', username, password: pw, ...extra },
    { basic: { id: c.id, secret: c.secret! } },
  );

const identitiesOf = (userId: string) =>
  fx.ds.rows<{ issuer: string; provider_user_id: string }>(
    `SELECT issuer, provider_user_id FROM user_identities WHERE user_id = $1`,
    [userId],
  );

const userRow = async (id: string) =>
  (
    await fx.ds.rows<{ tenant_id: string | null; email_verified: boolean; password_hash: string | null }>(
      `SELECT tenant_id, email_verified, password_hash FROM users WHERE id = $1`,
      [id],
    )
  )[0];

/** A user of `tenantId` with a password and a verified (or not) e-mail. */
async function tenantUser(tenantId: string | null, emailVerified = true) {
  const u = await fx.user();
  await fx.ds.exec(`UPDATE users SET tenant_id = $2, email_verified = $3 WHERE id = $1`, [
    u.id,
    tenantId,
    emailVerified,
  ]);
  return u;
}

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  realIdp = await LocalIssuer.start();
  attackerIdp = await LocalIssuer.start();
  h = await startAuth({ SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}` });
  fx = new Fixtures(h);
  tenantA = await tenant();
  tenantB = await tenant();
  // Tenant B trusts its real provider; tenant A's administrator registers a provider it holds the keys of.
  await identityProvider(tenantB, realIdp.url, realIdp.jwksUri, realAud);
  await identityProvider(tenantA, attackerIdp.url, attackerIdp.jwksUri, attackerAud);
  global = await client(null, ['token_exchange', 'password', 'refresh_token']);
  api = await fx.resource({ scopes: ['orders:read'] });
  await fx.grant(global, api);
});
afterAll(async () => {
  await h?.close();
  await realIdp?.stop();
  await attackerIdp?.stop();
  await new Promise<void>((r) => smtp.close(() => r()));
});

describe("hole 1: account takeover through a tenant's identity provider", () => {
  it("a tenant's provider naming the bootstrap admin's verified e-mail gets nothing and links nothing", async () => {
    const admin = (
      await fx.ds.rows<{ id: string }>(`SELECT id FROM users WHERE lower(user_email) = lower($1)`, [
        h.boot.adminEmail,
      ])
    )[0];
    const token = await attackerIdp.idToken(attackerAud, `evil-${tag()}`, {
      email: h.boot.adminEmail.toUpperCase(),
      email_verified: true,
    });
    const r = await exchange(token, global, { audience: api.identifier });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'invalid_grant', code: 'invalid_grant' });
    // one generic answer: it does not say that the address is taken, nor by whom
    expect(String(r.body.error_description)).not.toMatch(/admin|exists|tenant/i);
    expect(await identitiesOf(admin.id)).toHaveLength(0);
    expect((await password(global, h.boot.adminEmail, h.boot.adminPassword)).status).toBe(200);
  });

  it("another tenant's user (verified e-mail) is out of reach; tenant A's provider makes no user either", async () => {
    const victim = await tenantUser(tenantB);
    const before = await fx.ds.rows(`SELECT id FROM users WHERE tenant_id = $1`, [tenantA]);
    const tenantAClient = await client(tenantA, ['token_exchange']);
    for (const c of [global, tenantAClient]) {
      const r = await exchange(
        await attackerIdp.idToken(attackerAud, `evil-${tag()}`, {
          email: victim.email,
          email_verified: true,
        }),
        c,
      );
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_grant' });
    }
    expect(await identitiesOf(victim.id)).toHaveLength(0);
    expect(await fx.ds.rows(`SELECT id FROM users WHERE tenant_id = $1`, [tenantA])).toHaveLength(
      before.length,
    );
  });

  it('an issuer + sub already linked to a user of another tenant is refused (a copied issuer, own keys)', async () => {
    const victim = await tenantUser(tenantB);
    const sub = `real-${tag()}`;
    // the victim signs in through its own tenant's provider: linked by its verified e-mail
    const own = await exchange(
      await realIdp.idToken(realAud, sub, { email: victim.email, email_verified: true }),
    );
    expect(own.status).toBe(200);
    expect(decodeJwt(own.body.id_token as string).sub).toBe(victim.id);

    // tenant A's administrator registers a provider naming B's issuer, with keys it holds, and signs that sub
    await identityProvider(tenantA, realIdp.url, attackerIdp.jwksUri, attackerAud);
    const forged = await attackerIdp.idToken(attackerAud, sub, {}, { issuer: realIdp.url });
    const tenantAClient = await client(tenantA, ['token_exchange']);
    for (const c of [global, tenantAClient]) {
      const r = await exchange(forged, c);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_grant' });
    }
    expect(await identitiesOf(victim.id)).toEqual([{ issuer: realIdp.url, provider_user_id: sub }]);

    // the real provider still signs its user in, through the global client, although two providers share the issuer
    const again = await exchange(await realIdp.idToken(realAud, sub), global, { audience: api.identifier });
    expect(again.status).toBe(200);
    expect(decodeJwt(again.body.access_token as string)).toMatchObject({
      sub: victim.id,
      tenant_id: tenantB,
    });

    // tenant C also trusts that provider (same issuer, keys and client id, as two tenants trusting one Google
    // client would), registered earlier than B's: the linked account is still B's user, signed in for B
    const shared = await identityProvider(await tenant(), realIdp.url, realIdp.jwksUri, realAud);
    await fx.ds.exec(
      `UPDATE tenant_identity_providers SET created_at = now() - interval '1 day' WHERE id = $1`,
      [shared],
    );
    const viaShared = await exchange(await realIdp.idToken(realAud, sub), global, {
      audience: api.identifier,
    });
    expect(viaShared.status).toBe(200);
    expect(decodeJwt(viaShared.body.access_token as string)).toMatchObject({
      sub: victim.id,
      tenant_id: tenantB,
    });
    await fx.ds.exec(`DELETE FROM tenant_identity_providers WHERE id = $1`, [shared]);
  });

  it('a verified upstream e-mail is never linked to a local account of another tenant whose e-mail is unverified', async () => {
    const other = await tenantUser(tenantB, false);
    const r = await exchange(
      await attackerIdp.idToken(attackerAud, `evil-${tag()}`, { email: other.email, email_verified: true }),
    );
    expect(r.body).toMatchObject({ error: 'invalid_grant' });
    expect(await identitiesOf(other.id)).toHaveLength(0);
    const row = await userRow(other.id);
    expect(row).toMatchObject({ tenant_id: tenantB, email_verified: false });
    expect(row.password_hash).not.toBeNull();
  });

  it("a new user through a global client is of the provider's tenant, and its token names that tenant", async () => {
    const email = `new-${tag()}@tenant-a.test`;
    const r = await exchange(
      await attackerIdp.idToken(attackerAud, `new-${tag()}`, { email, email_verified: true }),
      global,
      { audience: api.identifier, scope: 'openid offline_access' },
    );
    expect(r.status).toBe(200);
    const at = decodeJwt(r.body.access_token as string);
    expect(at.tenant_id).toBe(tenantA);
    expect(await userRow(at.sub!)).toMatchObject({ tenant_id: tenantA, email_verified: true });
    // and so do the tokens refreshed from it
    const refreshed = await tokenRequest(
      h.url,
      {
        grant_type: 'refresh_token',
        refresh_token: r.body.refresh_token as string,
        resource: api.identifier,
      },
      { basic: { id: global.id, secret: global.secret! } },
    );
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.access_token as string)).toMatchObject({
      sub: at.sub,
      tenant_id: tenantA,
    });
  });
});

describe('hole 7: sign-up squatting', () => {
  it("the owner's federated sign-in takes the address over: the squatter's password and refresh token die", async () => {
    // a client of tenant B that lets people sign up and sign in with a password
    const app = await client(tenantB, ['password', 'refresh_token'], { oauth: { allow_signup: true } });
    const victimEmail = `owner-${tag()}@mail.test`;
    const squatterPassword = `squat-${tag()}-long-enough`;
    const signup = await fetch(`${h.url}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: app.id, email: victimEmail, password: squatterPassword }),
    });
    expect(signup.status).toBe(201);
    const squatted = ((await signup.json()) as { id: string }).id;
    expect(await userRow(squatted)).toMatchObject({ tenant_id: tenantB, email_verified: false });

    const squatter = await password(app, victimEmail, squatterPassword, { scope: 'openid offline_access' });
    expect(squatter.status).toBe(200);
    const squatterRefresh = squatter.body.refresh_token as string;
    expect(typeof squatterRefresh).toBe('string');

    // the real owner signs in through tenant B's provider, which verified the address
    const sub = `owner-${tag()}`;
    const owner = await exchange(
      await realIdp.idToken(realAud, sub, { email: victimEmail, email_verified: true }),
      global,
    );
    expect(owner.status).toBe(200);
    expect(decodeJwt(owner.body.id_token as string).sub).toBe(squatted);
    const row = await userRow(squatted);
    expect(row).toMatchObject({ tenant_id: tenantB, email_verified: true, password_hash: null });
    expect(await identitiesOf(squatted)).toEqual([{ issuer: realIdp.url, provider_user_id: sub }]);

    // the squatter keeps nothing: its password no longer signs in, its refresh token is dead
    const pw = await password(app, victimEmail, squatterPassword);
    expect(pw.status).toBe(400);
    expect(pw.body).toMatchObject({ error: 'invalid_grant' });
    await eventually(
      async () =>
        (
          await tokenRequest(
            h.url,
            { grant_type: 'refresh_token', refresh_token: squatterRefresh },
            { basic: { id: app.id, secret: app.secret! } },
          )
        ).body.error === 'invalid_grant',
      { what: "the squatter's refresh token refused" },
    );
    // the owner signs in again: the same account
    const again = await exchange(await realIdp.idToken(realAud, sub));
    expect(decodeJwt(again.body.id_token as string).sub).toBe(squatted);
  });

  it('an upstream e-mail that is not verified never links to (nor takes over) an unverified account', async () => {
    const squatter = await tenantUser(tenantB, false);
    const sub = `unverified-${tag()}`;
    const r = await exchange(
      await realIdp.idToken(realAud, sub, { email: squatter.email, email_verified: false }),
    );
    expect(r.body).toMatchObject({ error: 'invalid_grant' });
    expect(await identitiesOf(squatter.id)).toHaveLength(0);
    expect((await password(global, squatter.email, squatter.password)).status).toBe(200);
  });
});
