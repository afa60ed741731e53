import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { SignJWT } from 'jose';
import { MANAGEMENT_AUDIENCE, seedInstance, TREE_AUDIENCE } from '@gatehouse/identity-data';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenInfo, tokenRequest, type TestClient, type TestResource } from './support/fixtures.js';

let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;
let basic: { id: string; secret: string };

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  client = await fx.client({ grantTypes: ['client_credentials', 'password', 'refresh_token'] });
  basic = { id: client.id, secret: client.secret! };
});
afterAll(async () => {
  await h?.close();
});

const ccToken = async (resource: TestResource | string, c: TestClient = client) => {
  const r = await tokenRequest(
    h.url,
    {
      grant_type: 'client_credentials',
      audience: typeof resource === 'string' ? resource : resource.identifier,
    },
    { basic: { id: c.id, secret: c.secret! } },
  );
  expect(r.status).toBe(200);
  return String(r.body.access_token);
};

const isoDate = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);

describe('/tokeninfo: active tokens', () => {
  it.each(['RS256', 'ES256', 'HS256', 'opaque'])('describes a %s client_credentials token', async (alg) => {
    const api = await fx.resource({
      alg,
      secret: alg === 'HS256' ? 'a-resource-secret-of-enough-length-123' : undefined,
      scopes: ['r', 'w'],
    });
    await fx.grant(client, api, ['r']);
    const token = await ccToken(api);
    const { status, body } = await tokenInfo(h.url, token, { basic });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      active: true,
      token_type: 'Bearer',
      client_id: client.id,
      scope: 'r',
      subject: client.id,
      sub: client.id,
      aud: api.identifier,
      iss: h.url,
      exp: isoDate,
      iat: isoDate,
      nbf: isoDate,
      instance_id: await fx.instanceId(),
      default_instance: true,
    });
    expect(typeof body.jti).toBe('string');
    expect(body.username).toBeUndefined();
    expect(new Date(String(body.exp)).getTime() - new Date(String(body.iat)).getTime()).toBe(600_000);
  });

  it("describes a user's token with username and subject = user id", async () => {
    const api = await fx.resource();
    await fx.grant(client, api);
    const user = await fx.user();
    const t = await tokenRequest(
      h.url,
      { grant_type: 'password', username: user.userName, password: user.password, audience: api.identifier },
      { basic },
    );
    const { body } = await tokenInfo(h.url, String(t.body.access_token), { basic });
    expect(body).toMatchObject({
      active: true,
      subject: user.id,
      username: user.email,
      client_id: client.id,
    });
  });

  it('accepts the token itself as the Bearer, or another active token; JSON body too', async () => {
    const token = await ccToken(MANAGEMENT_AUDIENCE, { id: h.boot.clientId, secret: h.boot.clientSecret });
    const self = await tokenInfo(h.url, token, { bearer: token });
    expect(self.body).toMatchObject({ active: true, client_id: h.boot.clientId, aud: MANAGEMENT_AUDIENCE });

    const api = await fx.resource();
    await fx.grant(client, api);
    const other = await ccToken(api);
    // Another client's token is visible only to a caller authorized on its audience.
    expect((await tokenInfo(h.url, other, { bearer: token })).body).toEqual({ active: false });
    await fx.grant({ id: h.boot.clientId }, api, []);
    const viaOther = await tokenInfo(h.url, other, { bearer: token });
    expect(viaOther.body).toMatchObject({ active: true, client_id: client.id });

    const json = await fetch(`${h.url}/tokeninfo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ token: other }),
    });
    expect(await json.json()).toEqual(viaOther.body);
  });

  it('fields picks attributes; an unknown field is 400', async () => {
    const token = await ccToken(MANAGEMENT_AUDIENCE, { id: h.boot.clientId, secret: h.boot.clientSecret });
    const picked = await tokenInfo(h.url, token, { bearer: token }, { fields: 'active,client_id,aud' });
    expect(picked.body).toEqual({ active: true, client_id: h.boot.clientId, aud: MANAGEMENT_AUDIENCE });
    const bad = await tokenInfo(h.url, token, { bearer: token }, { fields: 'active,password' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
  });

  it('describes a refresh token (token_type_hint) and stops once it is used', async () => {
    const api = await fx.resource();
    await fx.grant(client, api);
    const user = await fx.user();
    const t = await tokenRequest(
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
    const rt = String(t.body.refresh_token);
    const info = await tokenInfo(h.url, rt, { basic }, { token_type_hint: 'refresh_token' });
    expect(info.body).toMatchObject({ active: true, token_type: 'refresh_token', subject: user.id });
    await tokenRequest(h.url, { grant_type: 'refresh_token', refresh_token: rt }, { basic });
    expect((await tokenInfo(h.url, rt, { basic }, { token_type_hint: 'refresh_token' })).body).toEqual({
      active: false,
    });
  });
});

describe('/tokeninfo: the instance of the token', () => {
  it("names the instance of the token's client and whether it is the default one", async () => {
    const b = await fx.ds.transaction((tx) => seedInstance(tx, { name: `b-${randomUUID()}` }, fx.box));
    const own: TestClient = { id: b.clientId, secret: b.clientSecret };
    for (const aud of [TREE_AUDIENCE, MANAGEMENT_AUDIENCE]) {
      const token = await ccToken(aud, own);
      const { status, body } = await tokenInfo(h.url, token, { bearer: token });
      expect(status).toBe(200);
      expect(body).toMatchObject({ active: true, client_id: b.clientId, instance_id: b.instanceId });
      expect(body.default_instance).toBe(false);
      const picked = await tokenInfo(
        h.url,
        token,
        { bearer: token },
        { fields: 'instance_id,default_instance' },
      );
      expect(picked.body).toEqual({ instance_id: b.instanceId, default_instance: false });
    }
  });
});

describe('/tokeninfo: inactive tokens', () => {
  it('expired (JWT and opaque)', async () => {
    // 3 s tokens, each checked right after it is issued: a loaded machine must not expire one before its check
    const jwtApi = await fx.resource({ lifetime: 3 });
    const opaqueApi = await fx.resource({ lifetime: 3, alg: 'opaque' });
    await fx.grant(client, jwtApi);
    await fx.grant(client, opaqueApi);
    const jwt = await ccToken(jwtApi);
    const jwtInfo = (await tokenInfo(h.url, jwt, { basic })).body;
    expect(jwtInfo.active).toBe(true);
    const opaque = await ccToken(opaqueApi);
    const opaqueStored = Date.now(); // its row lives 3 s from its issue, at the latest from now
    expect((await tokenInfo(h.url, opaque, { basic })).body.active).toBe(true);
    // Expiry is the rule under test (by the wall clock): wait until the JWT's exp (whole seconds, as described)
    // and the opaque token's row have both passed.
    const lastExp = Math.max(Date.parse(String(jwtInfo.exp)), opaqueStored + 3_000);
    await new Promise((r) => setTimeout(r, Math.max(0, lastExp - Date.now()) + 50));
    expect((await tokenInfo(h.url, jwt, { basic })).body).toEqual({ active: false });
    expect((await tokenInfo(h.url, opaque, { basic })).body).toEqual({ active: false });
  });

  it('revoked (the grant of a JWT and of an opaque user token)', async () => {
    for (const alg of ['RS256', 'opaque']) {
      const api = await fx.resource({ alg });
      await fx.grant(client, api);
      const user = await fx.user();
      const t = await tokenRequest(
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
      const at = String(t.body.access_token);
      expect((await tokenInfo(h.url, at, { basic })).body.active).toBe(true);
      const revoke = await fetch(`${h.url}/revoke`, {
        method: 'POST',
        body: new URLSearchParams({
          client_id: client.id,
          client_secret: client.secret!,
          token: String(t.body.refresh_token),
        }),
      });
      expect(revoke.status).toBe(200);
      expect((await tokenInfo(h.url, at, { basic })).body).toEqual({ active: false });
    }
  });

  it('garbage, forged, foreign and empty-ish tokens', async () => {
    const forged = await new SignJWT({ client_id: client.id, scope: 'r' })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(h.url)
      .setAudience(MANAGEMENT_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(Buffer.from('not-the-resource-secret-at-all-000000'));
    const real = await ccToken(MANAGEMENT_AUDIENCE, { id: h.boot.clientId, secret: h.boot.clientSecret });
    const [hd, pl, sig] = real.split('.');
    const tampered = `${hd}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(pl, 'base64url').toString()), scope: 'all' })).toString('base64url')}.${sig}`;
    // the real token first, so its verified signature is in memory: a tampered copy must not ride on it
    const boot = { id: h.boot.clientId, secret: h.boot.clientSecret };
    expect((await tokenInfo(h.url, real, { basic: boot })).body.active).toBe(true);
    expect((await tokenInfo(h.url, tampered, { basic: boot })).body).toEqual({ active: false });
    for (const token of ['garbage', 'a.b.c', forged, tampered, 'x'.repeat(9000), '%00%00']) {
      const r = await tokenInfo(h.url, token, { basic });
      expect({ token: token.slice(0, 20), status: r.status, body: r.body }).toEqual({
        token: token.slice(0, 20),
        status: 200,
        body: { active: false },
      });
    }
  });

  it("a deleted client's and a blocked user's tokens", async () => {
    const c = await fx.client({ grantTypes: ['client_credentials', 'password'] });
    const api = await fx.resource();
    await fx.grant(c, api);
    await fx.grant(client, api, []); // `basic` is a resource server of this API: it may introspect c's tokens
    const user = await fx.user();
    const cc = await ccToken(api, c);
    const userToken = String(
      (
        await tokenRequest(
          h.url,
          { grant_type: 'password', username: user.email, password: user.password, audience: api.identifier },
          { basic: { id: c.id, secret: c.secret! } },
        )
      ).body.access_token,
    );
    await fx.setBlocked(user.id, true);
    expect((await tokenInfo(h.url, userToken, { basic })).body).toEqual({ active: false });
    expect((await tokenInfo(h.url, cc, { basic })).body.active).toBe(true);
    await fx.ds.rows('DELETE FROM clients WHERE id = $1', [c.id]);
    expect((await tokenInfo(h.url, cc, { basic })).body).toEqual({ active: false });
  });
});

describe('/tokeninfo: caller authentication', () => {
  it('401 without credentials, with wrong Basic, or with an inactive Bearer; 400 without token', async () => {
    const token = await ccToken(MANAGEMENT_AUDIENCE, { id: h.boot.clientId, secret: h.boot.clientSecret });
    const none = await tokenInfo(h.url, token, {});
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: 'invalid_client', code: 'invalid_client' });
    const wrong = await tokenInfo(h.url, token, { basic: { id: client.id, secret: 'nope' } });
    expect(wrong.status).toBe(401);
    const unknown = await tokenInfo(h.url, token, { basic: { id: 'not-a-uuid', secret: 'nope' } });
    expect(unknown.status).toBe(401);
    const badBearer = await tokenInfo(h.url, token, { bearer: 'garbage' });
    expect(badBearer.status).toBe(401);
    expect(badBearer.body.code).toBe('invalid_token');
    const res = await fetch(`${h.url}/tokeninfo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(400);
    const get = await fetch(`${h.url}/tokeninfo?token=${token}`);
    expect(get.status).toBe(405);
  });
});

describe('RFC 7662 introspection at /token/introspection (openid-client)', () => {
  it('describes an opaque token to an authenticated client', async () => {
    const api = await fx.resource({ alg: 'opaque' });
    await fx.grant(client, api);
    const token = await ccToken(api);
    const config = await oidc.discovery(
      new URL(h.url),
      client.id,
      undefined,
      oidc.ClientSecretBasic(client.secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const info = await oidc.tokenIntrospection(config, token);
    expect(info).toMatchObject({
      active: true,
      client_id: client.id,
      aud: api.identifier,
      instance_id: await fx.instanceId(),
      default_instance: true,
    });
    expect((await oidc.tokenIntrospection(config, 'garbage')).active).toBe(false);
    // A JSON body is read like a form body.
    const json = await fetch(`${h.url}/token/introspection`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, client_id: client.id, client_secret: client.secret }),
    });
    expect(await json.json()).toMatchObject({ active: true, client_id: client.id, aud: api.identifier });
  });
});
