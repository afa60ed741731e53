import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { MANAGEMENT_AUDIENCE, sealedIn, SYSTEM_RESOURCES, TREE_AUDIENCE } from '@gatehouse/identity-data';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenInfo, tokenRequest, type TestClient } from './support/fixtures.js';

let h: AuthHarness;
let fx: Fixtures;

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
});
afterAll(async () => {
  await h?.close();
});

async function discover(clientId: string, secret: string | undefined, auth?: oidc.ClientAuth) {
  return oidc.discovery(new URL(h.url), clientId, undefined, auth ?? oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests],
  });
}

const systemScopes = (identifier: string) =>
  SYSTEM_RESOURCES.find((r) => r.identifierUrl === identifier)!
    .scopes.map((s) => s.name)
    .sort();

describe('client_credentials with the bootstrap client (openid-client, jose)', () => {
  it.each([MANAGEMENT_AUDIENCE, TREE_AUDIENCE])(
    'issues a JWT for %s with every granted scope, verifiable against /jwks',
    async (audience) => {
      const config = await discover(h.boot.clientId, h.boot.clientSecret);
      const tokens = await oidc.clientCredentialsGrant(config, { resource: audience });
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBeGreaterThan(0);

      const jwks = createRemoteJWKSet(new URL(`${h.url}/jwks`));
      const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
        issuer: h.url,
        audience,
        typ: 'at+jwt',
      });
      expect(protectedHeader.alg).toBe('RS256');
      expect(payload.client_id).toBe(h.boot.clientId);
      expect(payload.sub).toBe(h.boot.clientId);
      expect(String(payload.scope).split(' ').sort()).toEqual(systemScopes(audience));
      expect(tokens.scope?.split(' ').sort()).toEqual(systemScopes(audience));
    },
  );

  it('gives the intersection of the requested and the granted scopes', async () => {
    const config = await discover(h.boot.clientId, h.boot.clientSecret);
    const tokens = await oidc.clientCredentialsGrant(config, {
      resource: TREE_AUDIENCE,
      scope: 'trees:read not:granted settings:write',
    });
    expect(decodeJwt(tokens.access_token).scope).toBe('trees:read settings:write');
  });
});

describe('client_credentials rules', () => {
  let client: TestClient;
  beforeAll(async () => {
    client = await fx.client();
  });

  it('an authorized resource with no permissions gives an empty scope', async () => {
    const api = await fx.resource({ scopes: ['a', 'b'] });
    await fx.grant(client, api, []);
    const r = await tokenRequest(h.url, {
      grant_type: 'client_credentials',
      client_id: client.id,
      client_secret: client.secret!,
      audience: api.identifier,
    });
    expect(r.status).toBe(200);
    expect(decodeJwt(String(r.body.access_token)).scope).toBeUndefined();
    expect(r.body.scope ?? '').toBe('');
  });

  it('a resource the client is not authorized for is refused with an OAuth error in both shapes', async () => {
    const api = await fx.resource();
    const r = await tokenRequest(h.url, {
      grant_type: 'client_credentials',
      client_id: client.id,
      client_secret: client.secret!,
      audience: api.identifier,
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'access_denied', code: 'access_denied' });
    expect(r.body.error_description).toBe(r.body.message);
    expect(String(r.body.message)).toContain(api.identifier);
  });

  it('an unknown audience is invalid_target; a missing one is invalid_request', async () => {
    const base = { grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret! };
    const unknown = await tokenRequest(h.url, { ...base, audience: 'https://nowhere.test/' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: 'invalid_target', code: 'invalid_target' });
    const missing = await tokenRequest(h.url, base);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
    expect(String(missing.body.message)).toMatch(/audience/);
  });

  it('accepts `resource` as well as `audience`; two resources in one request are refused', async () => {
    const a = await fx.resource();
    const b = await fx.resource();
    await fx.grant(client, a);
    await fx.grant(client, b);
    const base = { grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret! };
    const one = await tokenRequest(h.url, { ...base, resource: a.identifier });
    expect(one.status).toBe(200);
    expect(decodeJwt(String(one.body.access_token)).aud).toBe(a.identifier);
    const body = new URLSearchParams({ ...base });
    body.append('resource', a.identifier);
    body.append('resource', b.identifier);
    const two = await fetch(`${h.url}/token`, { method: 'POST', body });
    expect(two.status).toBe(400);
    expect(((await two.json()) as { error: string }).error).toBe('invalid_target');
  });

  it('JSON and form bodies give the same result', async () => {
    const api = await fx.resource({ scopes: ['x', 'y', 'z'] });
    await fx.grant(client, api, ['x', 'z']);
    const params = {
      grant_type: 'client_credentials',
      client_id: client.id,
      client_secret: client.secret!,
      audience: api.identifier,
      scope: 'x y z',
    };
    const form = await tokenRequest(h.url, params);
    const json = await tokenRequest(h.url, params, { json: true });
    expect(json.status).toBe(200);
    expect(form.status).toBe(200);
    const strip = (t: unknown) => {
      const { jti, iat, exp, ...rest } = decodeJwt(String(t));
      return { ...rest, ttl: Number(exp) - Number(iat), jti: typeof jti };
    };
    expect(strip(json.body.access_token)).toEqual(strip(form.body.access_token));
    expect({ ...json.body, access_token: 'x' }).toEqual({ ...form.body, access_token: 'x' });

    // Errors too: same status and body.
    const badForm = await tokenRequest(h.url, { ...params, client_secret: 'wrong' });
    const badJson = await tokenRequest(h.url, { ...params, client_secret: 'wrong' }, { json: true });
    expect(badForm.status).toBe(401);
    expect(badJson.status).toBe(401);
    expect(badJson.body).toEqual(badForm.body);
    expect(badJson.body).toMatchObject({ error: 'invalid_client', code: 'invalid_client' });
  });

  it('authenticates with Basic and with body credentials alike (openid-client both ways)', async () => {
    const api = await fx.resource();
    await fx.grant(client, api);
    for (const auth of [oidc.ClientSecretBasic(client.secret), oidc.ClientSecretPost(client.secret)]) {
      const config = await discover(client.id, undefined, auth);
      const tokens = await oidc.clientCredentialsGrant(config, { resource: api.identifier });
      expect(decodeJwt(tokens.access_token).client_id).toBe(client.id);
    }
    const wrong = await discover(client.id, 'not-the-secret');
    // 401 with a Basic challenge naming the error (openid-client surfaces the WWW-Authenticate challenge).
    const err = await oidc
      .clientCredentialsGrant(wrong, { resource: api.identifier })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401 });
    expect((err as { cause: { parameters: Record<string, string> }[] }).cause[0].parameters.error).toBe(
      'invalid_client',
    );
  });

  it('a rotated secret takes effect at once; a deleted client gets nothing', async () => {
    const c = await fx.client();
    const api = await fx.resource();
    await fx.grant(c, api);
    const params = { grant_type: 'client_credentials', audience: api.identifier };
    expect((await tokenRequest(h.url, params, { basic: { id: c.id, secret: c.secret! } })).status).toBe(200);
    await fx.ds.rows('UPDATE clients SET client_secret_enc = $2, updated_at = now() WHERE id = $1', [
      c.id,
      fx.box.encrypt('the-new-secret-0123456789', sealedIn.clientSecret(c.id)),
    ]);
    expect((await tokenRequest(h.url, params, { basic: { id: c.id, secret: c.secret! } })).status).toBe(401);
    expect(
      (await tokenRequest(h.url, params, { basic: { id: c.id, secret: 'the-new-secret-0123456789' } }))
        .status,
    ).toBe(200);
    await fx.ds.rows('DELETE FROM clients WHERE id = $1', [c.id]);
    const gone = await tokenRequest(h.url, params, {
      basic: { id: c.id, secret: 'the-new-secret-0123456789' },
    });
    expect(gone.status).toBe(401);
    expect(gone.body.error).toBe('invalid_client');
  });

  it('a client whose grant_types lack client_credentials is refused', async () => {
    const c = await fx.client({ grantTypes: ['password'] });
    const api = await fx.resource();
    await fx.grant(c, api);
    const r = await tokenRequest(
      h.url,
      { grant_type: 'client_credentials', audience: api.identifier },
      {
        basic: { id: c.id, secret: c.secret! },
      },
    );
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
  });

  it('implicit and not yet served grant types are unsupported_grant_type', async () => {
    for (const grant_type of ['implicit', 'made_up']) {
      const r = await tokenRequest(h.url, {
        grant_type,
        client_id: client.id,
        client_secret: client.secret!,
      });
      expect({ grant_type, status: r.status, code: r.body.code }).toEqual({
        grant_type,
        status: 400,
        code: 'unsupported_grant_type',
      });
    }
    // the device grant is served: without a device_code it is a bad request (device.spec.ts has the flow)
    const device = await tokenRequest(h.url, {
      grant_type: 'device_code',
      client_id: client.id,
      client_secret: client.secret!,
    });
    expect([device.status, device.body.code]).toEqual([400, 'invalid_request']);
    // token exchange is served too (token-exchange.spec.ts): this client may not use it
    const exchange = await tokenRequest(h.url, {
      grant_type: 'token_exchange',
      client_id: client.id,
      client_secret: client.secret!,
    });
    expect([exchange.status, exchange.body.code]).toEqual([400, 'invalid_request']);
  });

  it('bad bodies are clear 4xx answers, never 500', async () => {
    const post = (body: string, type: string) =>
      fetch(`${h.url}/token`, { method: 'POST', headers: { 'content-type': type }, body });
    const malformed = await post('{"grant_type":', 'application/json');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
    const nested = await post(JSON.stringify({ grant_type: { a: 1 } }), 'application/json');
    expect(nested.status).toBe(400);
    const xml = await post('<a/>', 'application/xml');
    expect(xml.status).toBe(415);
    const huge = await post(
      `grant_type=client_credentials&x=${'a'.repeat(70_000)}`,
      'application/x-www-form-urlencoded',
    );
    expect(huge.status).toBe(413);
    const get = await fetch(`${h.url}/token`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const noGrant = await post('client_id=x', 'application/x-www-form-urlencoded');
    expect(noGrant.status).toBeGreaterThanOrEqual(400);
    expect(noGrant.status).toBeLessThan(500);
  });
});

describe('token formats follow the resource', () => {
  it('HS256 with the resource secret, ES256 with a server key, opaque otherwise', async () => {
    const client = await fx.client();
    const hs = await fx.resource({ alg: 'HS256', secret: 'hs256-resource-secret-0123456789abcdef' });
    const es = await fx.resource({ alg: 'ES256', lifetime: 120 });
    const opaque = await fx.resource({ alg: 'opaque' });
    for (const r of [hs, es, opaque]) await fx.grant(client, r);
    const get = async (audience: string) =>
      (
        await tokenRequest(
          h.url,
          { grant_type: 'client_credentials', audience },
          { basic: { id: client.id, secret: client.secret! } },
        )
      ).body;

    const hsToken = String((await get(hs.identifier)).access_token);
    expect(decodeProtectedHeader(hsToken).alg).toBe('HS256');
    await jwtVerify(hsToken, Buffer.from('hs256-resource-secret-0123456789abcdef'), { issuer: h.url });

    const esBody = await get(es.identifier);
    expect(esBody.expires_in).toBe(120);
    const esToken = String(esBody.access_token);
    expect(decodeProtectedHeader(esToken).alg).toBe('ES256');
    await jwtVerify(esToken, createRemoteJWKSet(new URL(`${h.url}/jwks`)), {
      issuer: h.url,
      audience: es.identifier,
    });

    const opaqueToken = String((await get(opaque.identifier)).access_token);
    expect(opaqueToken.split('.')).toHaveLength(1);
    const info = await tokenInfo(h.url, opaqueToken, { basic: { id: client.id, secret: client.secret! } });
    expect(info.body).toMatchObject({ active: true, client_id: client.id, aud: opaque.identifier });
  });
});

describe('discovery', () => {
  it('lists every endpoint, the grant types, scopes and /tokeninfo', async () => {
    const config = await discover(h.boot.clientId, h.boot.clientSecret);
    const m = config.serverMetadata();
    expect(m.issuer).toBe(h.url);
    expect(m.token_endpoint).toBe(`${h.url}/token`);
    expect(m.jwks_uri).toBe(`${h.url}/jwks`);
    expect(m.userinfo_endpoint).toBe(`${h.url}/userinfo`);
    expect(m.revocation_endpoint).toBe(`${h.url}/revoke`);
    expect(m.introspection_endpoint).toBe(`${h.url}/token/introspection`);
    expect((m as Record<string, unknown>).tokeninfo_endpoint).toBe(`${h.url}/tokeninfo`);
    expect(m.grant_types_supported).toEqual(
      expect.arrayContaining(['client_credentials', 'password', 'refresh_token']),
    );
    expect(m.scopes_supported).toEqual(
      expect.arrayContaining(['openid', 'offline_access', 'profile', 'email', 'address', 'phone']),
    );
    const jwks = (await (await fetch(`${h.url}/jwks`)).json()) as { keys: { alg: string; d?: string }[] };
    expect(jwks.keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256']);
    for (const k of jwks.keys) expect(k.d).toBeUndefined();
  });
});

describe('the plain client_credentials path answers as oidc-provider does', () => {
  // An extra parameter oidc-provider ignores sends the same request through oidc-provider's own pipeline.
  const throughProvider = { x_through_provider: '1' };

  it.each(['RS256', 'ES256'])('%s: the same JWT header, claims, body and headers', async (alg) => {
    const client = await fx.client();
    const api = await fx.resource({ alg, scopes: ['a', 'b', 'c'], lifetime: 120 });
    await fx.grant(client, api, ['a', 'c']);
    const cases: [Record<string, string>, { basic?: { id: string; secret: string } }][] = [
      [{ audience: api.identifier }, { basic: { id: client.id, secret: client.secret! } }],
      [
        { audience: api.identifier, scope: 'c x c a', client_id: client.id, client_secret: client.secret! },
        {},
      ],
      [{ resource: api.identifier, scope: 'x' }, { basic: { id: client.id, secret: client.secret! } }],
    ];
    for (const [params, auth] of cases) {
      const body = { grant_type: 'client_credentials', ...params };
      // the first request of a grant and scope is oidc-provider's, which teaches the fast path its scope
      expect((await tokenRequest(h.url, body, auth)).status).toBe(200);
      const before = h.tokenServer.fastClientCredentials.issued;
      const fast = await tokenRequest(h.url, body, auth);
      expect(h.tokenServer.fastClientCredentials.issued).toBe(before + 1);
      const slow = await tokenRequest(h.url, { ...body, ...throughProvider }, auth);
      expect(h.tokenServer.fastClientCredentials.issued).toBe(before + 1);
      expect(fast.status).toBe(200);
      expect(slow.status).toBe(200);
      const shape = (r: Awaited<ReturnType<typeof tokenRequest>>) => {
        const token = String(r.body.access_token);
        const { jti, iat, exp, ...claims } = decodeJwt(token);
        return {
          header: JSON.stringify(decodeProtectedHeader(token)),
          claims: JSON.stringify(claims),
          claimOrder: Object.keys(decodeJwt(token)).join(','),
          jti: typeof jti === 'string' && /^[\w-]{43}$/.test(jti),
          ttl: Number(exp) - Number(iat),
          body: JSON.stringify({ ...r.body, access_token: 'x' }),
          headers: ['content-type', 'cache-control', 'pragma', 'content-length']
            .map((n) => (n === 'content-length' ? typeof r.headers.get(n) : r.headers.get(n)))
            .join(' | '),
        };
      };
      expect(shape(fast)).toEqual(shape(slow));
      expect(shape(fast).ttl).toBe(120);
      // and it verifies against /jwks
      const jwks = createRemoteJWKSet(new URL(`${h.url}/jwks`));
      await jwtVerify(String(fast.body.access_token), jwks, {
        issuer: h.url,
        audience: api.identifier,
        typ: 'at+jwt',
      });
    }
  });

  it("a client whose metadata oidc-provider refuses is oidc-provider's to answer", async () => {
    const client = await fx.client({
      grantTypes: ['client_credentials', 'authorization_code'],
      metadata: { urls: { callbacks: ['javascript:alert(1)'] } },
    });
    const api = await fx.resource({ alg: 'ES256', scopes: ['a'] });
    await fx.grant(client, api, ['a']);
    const body = { grant_type: 'client_credentials', audience: api.identifier };
    const auth = { basic: { id: client.id, secret: client.secret! } };
    const before = h.tokenServer.fastClientCredentials.issued;
    const fast = await tokenRequest(h.url, body, auth);
    const slow = await tokenRequest(h.url, { ...body, x_through_provider: '1' }, auth);
    expect(h.tokenServer.fastClientCredentials.issued).toBe(before);
    expect({ status: fast.status, body: fast.body }).toEqual({ status: slow.status, body: slow.body });
  });

  it('what it does not serve plainly is oidc-provider answer (errors included)', async () => {
    const client = await fx.client();
    const api = await fx.resource({ alg: 'ES256', scopes: ['a'] });
    await fx.grant(client, api, ['a']);
    const basic = { id: client.id, secret: client.secret! };
    const requests: [Record<string, string>, { basic?: { id: string; secret: string } }][] = [
      [{ audience: api.identifier }, { basic: { id: client.id, secret: 'wrong' } }],
      [{ audience: 'https://unknown.example/' }, { basic }],
      [{ audience: api.identifier, scope: 'a  a' }, { basic }],
      [{ audience: api.identifier, client_id: client.id, client_secret: client.secret! }, { basic }],
      [{ audience: api.identifier, client_id: 'someone-else' }, { basic }],
    ];
    for (const [params, auth] of requests) {
      const body = { grant_type: 'client_credentials', ...params };
      const before = h.tokenServer.fastClientCredentials.issued;
      const fast = await tokenRequest(h.url, body, auth);
      const slow = await tokenRequest(h.url, { ...body, ...throughProvider }, auth);
      expect(h.tokenServer.fastClientCredentials.issued).toBe(before);
      expect({ params, status: fast.status, body: fast.body }).toEqual({
        params,
        status: slow.status,
        body: slow.body,
      });
      expect(fast.status).toBeGreaterThanOrEqual(400);
    }
  });
});

describe('GET /jwks', () => {
  it("replays oidc-provider's own answer: the same headers and bytes, after a key change too", async () => {
    const get = async (query = '') => {
      const r = await fetch(`${h.url}/jwks${query}`);
      const skip = new Set(['date', 'x-request-id', 'keep-alive', 'connection']);
      const headers = [...r.headers].filter(([n]) => !skip.has(n) && !n.startsWith('x-ratelimit-'));
      return { status: r.status, headers, body: await r.text() };
    };
    const first = await get();
    const again = await get();
    const throughProvider = await get('?x=1');
    expect(again).toEqual(first);
    expect(throughProvider).toEqual(first);
    expect(first.status).toBe(200);
    expect(first.headers.map(([n]) => n)).toContain('content-type');
    // a new key: the next answer is oidc-provider's again, with it
    await h.tokenServer.reloadKeys(true);
    const afterReload = await get();
    expect(afterReload).toEqual(await get('?x=1'));
  });
});
