import { Redis } from 'ioredis';
import * as oidc from 'openid-client';
import { SignJWT, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { schemaDrift } from '@gatehouse/db';
import { authEntities } from '../src/entities.js';
import { authMigrations } from '../src/migrations/index.js';
import { MANAGEMENT_AUDIENCE } from '@gatehouse/identity-data';
import { testRedisUrl } from '@gatehouse/testing';
import { SigningKeys } from '../src/keys/signing-keys.js';
import { rotateSigningKeys, rotationGraceSeconds } from '../src/keys/rotate.js';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenInfo, tokenRequest } from './support/fixtures.js';

const jwksOf = async (url: string) =>
  ((await (await fetch(`${url}/jwks`)).json()) as { keys: { kid: string; alg: string }[] }).keys;

describe('start-up, restart and key rotation', () => {
  let h: AuthHarness;
  let fx: Fixtures;

  beforeAll(async () => {
    h = await startAuth();
    fx = new Fixtures(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('migrations match the entities (no drift) and first start created one RS256 and one ES256 key', async () => {
    expect(await schemaDrift({ url: h.db.url, entities: authEntities, migrations: authMigrations })).toEqual(
      [],
    );
    const rows = await fx.ds.rows('SELECT alg, private_jwk_enc, public_jwk FROM signing_keys ORDER BY alg');
    expect(rows.map((r) => r.alg)).toEqual(['ES256', 'RS256']);
    for (const r of rows) {
      // Sealed at rest: no private parameter in clear.
      expect(r.private_jwk_enc).toMatch(/^gh2\./);
      expect(r.private_jwk_enc).not.toContain('"d"');
      expect(r.public_jwk.d).toBeUndefined();
    }
  });

  it('a restart keeps refresh tokens, access tokens and signing keys valid', async () => {
    const client = await fx.client({ grantTypes: ['client_credentials', 'password', 'refresh_token'] });
    const basic = { id: client.id, secret: client.secret! };
    const api = await fx.resource();
    const opaqueApi = await fx.resource({ alg: 'opaque' });
    await fx.grant(client, api);
    await fx.grant(client, opaqueApi);
    const user = await fx.user();
    const login = await tokenRequest(
      h.url,
      {
        grant_type: 'password',
        username: user.email,
        password: user.password,
        scope: 'offline_access',
        audience: api.identifier,
      },
      { basic },
    );
    const opaque = await tokenRequest(
      h.url,
      { grant_type: 'client_credentials', audience: opaqueApi.identifier },
      { basic },
    );
    const keysBefore = await jwksOf(h.url);

    await h.restart();

    expect(await jwksOf(h.url)).toEqual(keysBefore);
    const jwks = createRemoteJWKSet(new URL(`${h.url}/jwks`));
    await jwtVerify(String(login.body.access_token), jwks, { issuer: h.url, audience: api.identifier });
    expect((await tokenInfo(h.url, String(login.body.access_token), { basic })).body.active).toBe(true);
    expect((await tokenInfo(h.url, String(opaque.body.access_token), { basic })).body.active).toBe(true);

    const config = await oidc.discovery(
      new URL(h.url),
      client.id,
      undefined,
      oidc.ClientSecretBasic(client.secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const refreshed = await oidc.refreshTokenGrant(config, String(login.body.refresh_token));
    expect(decodeJwt(refreshed.access_token).sub).toBe(user.id);
    // Restarting never re-seeds: the bootstrap client still works with its secret.
    const cc = await tokenRequest(
      h.url,
      { grant_type: 'client_credentials', audience: MANAGEMENT_AUDIENCE },
      {
        basic: { id: h.boot.clientId, secret: h.boot.clientSecret },
      },
    );
    expect(cc.status).toBe(200);
  });

  it('rotation: new tokens use the new key, old tokens stay valid while the old key is published', async () => {
    const basic = { id: h.boot.clientId, secret: h.boot.clientSecret };
    const cc = () =>
      tokenRequest(h.url, { grant_type: 'client_credentials', audience: MANAGEMENT_AUDIENCE }, { basic });
    const before = String((await cc()).body.access_token);
    const oldKid = decodeProtectedHeader(before).kid;

    const sql = fx.ds;
    const grace = await rotationGraceSeconds(sql, h.built.env);
    expect(grace).toBeGreaterThanOrEqual(3600 + h.built.env.AUTH_KEY_REFRESH_SEC);
    const r = await rotateSigningKeys(sql, fx.box, h.built.env);
    expect(r.added).toHaveLength(2);
    expect(r.retired).toEqual(expect.arrayContaining([oldKid]));
    expect(await h.tokenServer.reloadKeys(false)).toBe(true);

    const kids = (await jwksOf(h.url)).map((k) => k.kid);
    expect(kids).toHaveLength(4);
    expect(kids).toEqual(expect.arrayContaining([oldKid, ...r.added]));
    const after = String((await cc()).body.access_token);
    const newKid = decodeProtectedHeader(after).kid;
    expect(newKid).not.toBe(oldKid);
    expect(r.added).toContain(newKid);
    const jwks = createRemoteJWKSet(new URL(`${h.url}/jwks`));
    await jwtVerify(before, jwks, { issuer: h.url });
    await jwtVerify(after, jwks, { issuer: h.url });
    expect((await tokenInfo(h.url, before, { bearer: before })).body.active).toBe(true);

    // Once the old key's grace is over (time travel: its expiry moved to the past) it leaves /jwks, tokens it
    // signed are no longer accepted, and the next rotation deletes it.
    await fx.ds.rows("UPDATE signing_keys SET expires_at = now() - interval '1 second' WHERE kid = $1", [
      oldKid,
    ]);
    expect(await h.tokenServer.reloadKeys(false)).toBe(true);
    expect((await jwksOf(h.url)).map((k) => k.kid)).not.toContain(oldKid);
    expect((await tokenInfo(h.url, before, { basic })).body).toEqual({ active: false });
    const next = await rotateSigningKeys(sql, fx.box, h.built.env);
    expect(next.deleted).toBeGreaterThanOrEqual(1);
    expect(await fx.ds.rows('SELECT 1 FROM signing_keys WHERE kid = $1', [oldKid])).toEqual([]);
  });

  it('a token signed by a key another process just added is accepted (reload on unknown kid)', async () => {
    const sql = fx.ds;
    await rotateSigningKeys(sql, fx.box, h.built.env);
    // This process has not reloaded: sign a token as another token-server process would, with the new key.
    const keys = await new SigningKeys(sql, fx.box).load();
    // The management API's tokens are RS256 (a token must carry its resource's own algorithm).
    const kid = keys.active.RS256;
    const jwk = keys.keys.find((k) => k.kid === kid)!.privateJwk;
    const token = await new SignJWT({ client_id: h.boot.clientId, scope: 'clients:read' })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
      .setIssuer(h.url)
      .setSubject(h.boot.clientId)
      .setAudience(MANAGEMENT_AUDIENCE)
      .setJti('replica-token')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importJWK(jwk, 'RS256'));
    const info = await tokenInfo(h.url, token, {
      basic: { id: h.boot.clientId, secret: h.boot.clientSecret },
    });
    expect(info.body).toMatchObject({ active: true, jti: 'replica-token', scope: 'clients:read' });
  });
});

describe('with REDIS_URL: short-lived artifacts in Redis, grants and refresh tokens in PostgreSQL', () => {
  let h: AuthHarness;
  let fx: Fixtures;
  let redis: Redis;

  beforeAll(async () => {
    h = await startAuth({ REDIS_URL: testRedisUrl() });
    fx = new Fixtures(h);
    redis = new Redis(testRedisUrl());
  });
  afterAll(async () => {
    redis?.disconnect();
    await h?.close();
  });

  it('opaque access tokens live in Redis; refresh tokens and grants in PostgreSQL; revocation reaches both', async () => {
    const client = await fx.client({ grantTypes: ['client_credentials', 'password', 'refresh_token'] });
    const basic = { id: client.id, secret: client.secret! };
    const api = await fx.resource({ alg: 'opaque' });
    await fx.grant(client, api);
    const user = await fx.user();
    const login = await tokenRequest(
      h.url,
      {
        grant_type: 'password',
        username: user.email,
        password: user.password,
        scope: 'offline_access',
        audience: api.identifier,
      },
      { basic },
    );
    expect(login.status).toBe(200);
    const at = String(login.body.access_token);
    expect(await redis.exists(`gh:oidc:AccessToken:${at}`)).toBe(1);
    const pgRows = await fx.ds.rows(
      'SELECT model FROM oidc_payloads WHERE grant_id IS NOT NULL ORDER BY model',
    );
    expect(pgRows.map((r) => r.model)).toEqual(['RefreshToken']);
    expect(
      (await fx.ds.rows("SELECT count(*)::int AS n FROM oidc_payloads WHERE model = 'Grant'"))[0].n,
    ).toBe(1);
    expect((await tokenInfo(h.url, at, { basic })).body.active).toBe(true);

    const revoke = await fetch(`${h.url}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: client.id,
        client_secret: client.secret!,
        token: String(login.body.refresh_token),
      }),
    });
    expect(revoke.status).toBe(200);
    expect(await redis.exists(`gh:oidc:AccessToken:${at}`)).toBe(0);
    expect((await tokenInfo(h.url, at, { basic })).body).toEqual({ active: false });
  });
});

describe('the shared HTTP foundation in front of the token server', () => {
  let h: AuthHarness;

  beforeAll(async () => {
    h = await startAuth({ RATE_LIMIT_OVERRIDES: 'POST /token=3' });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('rate-limits POST /token on its own key, with the headers on every answer', async () => {
    const basic = { id: h.boot.clientId, secret: h.boot.clientSecret };
    const cc = () =>
      tokenRequest(h.url, { grant_type: 'client_credentials', audience: MANAGEMENT_AUDIENCE }, { basic });
    const first = await cc();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    await cc();
    await cc();
    const limited = await cc();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.body).toMatchObject({ error: 'too_many_requests', code: 'too_many_requests' });
    // Other endpoints have their own budget.
    const info = await tokenInfo(h.url, String(first.body.access_token), { basic });
    expect(info.status).toBe(200);
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(/http_requests_total\{[^}]*route="\/token"[^}]*status="200"[^}]*\} 3/);
  });
});
