import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { actionOf, BrowserAgent, fieldOf } from './support/browser-agent.js';
import {
  ALL_GRANT_TYPES,
  approveDevice,
  CALLBACK,
  confirmLogout,
  discoveryDocument,
  LOGGED_OUT,
  oneTimeCode,
  signInAndAllow,
  startInteropWorld,
  type InteropWorld,
} from './support/interop.js';
import type { TestClient } from './support/fixtures.js';

/**
 * Every flow of the token server through oauth4webapi, the strictest maintained OAuth 2 / OpenID Connect client: it
 * checks the discovery document's issuer, response `iss` (RFC 9207), `state`, `nonce`, the ID token's claims, the
 * token endpoint's JSON, and RFC 9068 for JWT access tokens (validateJwtAccessToken). Its strict defaults are kept;
 * the one option used is its documented test option `allowInsecureRequests`, because the issuer of this test server
 * is http://127.0.0.1 (oauth4webapi refuses non-https URLs otherwise). oauth4webapi does not do the implicit flow by
 * design (interop-openid-client.spec.ts covers it), and has no helper for RP-initiated logout (the URL is built
 * from `end_session_endpoint` as RPs using it do).
 */
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';

let w: InteropWorld;
let as: oauth.AuthorizationServer;

beforeAll(async () => {
  w = await startInteropWorld();
  const issuer = new URL(w.h.url);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
  );
});
afterAll(async () => {
  await w?.close();
});

const clientOf = (c: TestClient): oauth.Client => ({ client_id: c.id });
const basic = (c: TestClient) => oauth.ClientSecretBasic(c.secret!);

/** A request to a resource server carrying `token` as a bearer token (what validateJwtAccessToken reads). */
const bearer = (token: string) =>
  new Request('https://api.example.test/things', { headers: { authorization: `Bearer ${token}` } });

/** RFC 9068 through oauth4webapi (typ at+jwt; iss, exp, aud, sub, client_id, iat, jti; signature by the JWKS). */
const validateAccessToken = (token: string, audience: string) =>
  oauth.validateJwtAccessToken(as, bearer(token), audience, insecure);

/** An authorization code request (PKCE S256, state, nonce) of `c`, walked through the login and consent pages. */
async function codeFlow(
  c: TestClient,
  auth: oauth.ClientAuth,
  params: Record<string, string> = {},
): Promise<{ tokens: oauth.TokenEndpointResponse; response: Response; nonce: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({
    client_id: c.id,
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'openid profile email',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...params,
  }))
    url.searchParams.set(k, v);
  const done = await signInAndAllow(w, url.toString());
  const callback = oauth.validateAuthResponse(as, clientOf(c), new URL(done.url), state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    clientOf(c),
    auth,
    callback,
    CALLBACK,
    verifier,
    insecure,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, clientOf(c), response, {
    expectedNonce: nonce,
    requireIdToken: true,
  });
  return { tokens, response, nonce };
}

describe('discovery lists exactly what is served', () => {
  it('oauth4webapi accepts the document (issuer), RFC 9207 iss is announced, PKCE S256 only', () => {
    expect(as.issuer).toBe(w.h.url);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    for (const endpoint of [
      'authorization_endpoint',
      'token_endpoint',
      'userinfo_endpoint',
      'jwks_uri',
      'introspection_endpoint',
      'revocation_endpoint',
      'device_authorization_endpoint',
      'end_session_endpoint',
    ] as const) {
      expect(as[endpoint]).toEqual(expect.stringContaining(w.h.url));
    }
  });

  it('each advertised grant type is served at /token; unadvertised ones are unsupported_grant_type', async () => {
    const advertised = as.grant_types_supported!;
    expect([...advertised].sort()).toEqual(
      [
        'authorization_code',
        'client_credentials',
        'implicit',
        'otp',
        'password',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
        TOKEN_EXCHANGE,
        'http://auth0.com/oauth/grant-type/mfa-otp',
        'http://auth0.com/oauth/grant-type/mfa-recovery-code',
      ].sort(),
    );
    const client = await w.fx.client({ grantTypes: ALL_GRANT_TYPES });
    const tokenCall = async (grantType: string) => {
      const res = await oauth.genericTokenEndpointRequest(
        as,
        clientOf(client),
        basic(client),
        grantType,
        {},
        insecure,
      );
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    // implicit is a grant of the authorization endpoint (RFC 8414 lists it there); the response types test covers it
    for (const grantType of advertised.filter((g) => g !== 'implicit')) {
      const answer = await tokenCall(grantType);
      expect({ grantType, error: answer.body.error }).not.toEqual({
        grantType,
        error: 'unsupported_grant_type',
      });
    }
    for (const grantType of [
      'implicit',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:ietf:params:oauth:grant-type:saml2-bearer',
      'urn:openid:params:grant-type:ciba',
      'http://auth0.com/oauth/grant-type/passwordless/otp',
    ]) {
      expect({ grantType, ...(await tokenCall(grantType)) }).toMatchObject({
        grantType,
        status: 400,
        body: { error: 'unsupported_grant_type' },
      });
    }
  });

  it('each advertised response type and response mode reaches the callback; others are refused there', async () => {
    expect([...as.response_types_supported!].sort()).toEqual(['code', 'id_token', 'id_token token']);
    expect([...as.response_modes_supported!].sort()).toEqual(['form_post', 'fragment', 'query']);
    const agent = new BrowserAgent(w.h.url);
    await signInAndAllow(w, (await authorizeUrl(w.web, 'code')).toString(), agent); // a session, consent given
    const answerOf = async (c: TestClient, responseType: string, extra: Record<string, string> = {}) => {
      const url = await authorizeUrl(c, responseType, extra);
      const done = await signInAndAllow(w, url.toString(), agent);
      if (done.html) {
        // form_post: the token server's page posting the answer to the callback
        expect(done.html).toContain(`action="${CALLBACK}"`);
        const fields = [...done.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)];
        return {
          mode: 'form_post',
          params: new URLSearchParams(fields.map((m): [string, string] => [m[1], m[2]])),
        };
      }
      const back = new URL(done.url);
      expect(back.origin + back.pathname).toBe(CALLBACK);
      return back.hash
        ? { mode: 'fragment', params: new URLSearchParams(back.hash.slice(1)) }
        : { mode: 'query', params: back.searchParams };
    };
    await signInAndAllow(w, (await authorizeUrl(w.implicit, 'id_token')).toString(), agent);
    for (const responseType of as.response_types_supported!) {
      const c = responseType === 'code' ? w.web : w.implicit;
      const { mode, params } = await answerOf(c, responseType);
      expect({ responseType, error: params.get('error') }).toEqual({ responseType, error: null });
      expect(mode).toBe(responseType === 'code' ? 'query' : 'fragment');
      // RFC 9207: `iss` in every answer, but for those carrying an ID token (which names the issuer)
      expect(params.get('iss')).toBe(responseType.includes('id_token') ? null : w.h.url);
      for (const part of responseType.split(' ')) {
        expect(params.get(part === 'token' ? 'access_token' : part)).toEqual(expect.any(String));
      }
    }
    for (const responseMode of as.response_modes_supported!) {
      const { mode, params } = await answerOf(w.web, 'code', { response_mode: responseMode });
      expect([mode, params.get('code') !== null, params.get('iss')]).toEqual([responseMode, true, w.h.url]);
    }
    for (const responseType of ['token', 'code id_token', 'code token', 'code id_token token']) {
      const { params } = await answerOf(w.web, responseType);
      expect({ responseType, error: params.get('error'), iss: params.get('iss') }).toEqual({
        responseType,
        error: 'unsupported_response_type',
        iss: w.h.url,
      });
    }
    for (const responseMode of ['jwt', 'query.jwt', 'web_message']) {
      const { params } = await answerOf(w.web, 'code', { response_mode: responseMode });
      expect({ responseMode, error: params.get('error') }).toEqual({
        responseMode,
        error: 'unsupported_response_mode',
      });
    }
  });

  it('each advertised client authentication method authenticates; an unadvertised one is invalid_client', async () => {
    expect([...as.token_endpoint_auth_methods_supported!].sort()).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'none',
    ]);
    const methods: Record<string, [TestClient, oauth.ClientAuth]> = {
      client_secret_basic: [w.web, oauth.ClientSecretBasic(w.web.secret!)],
      client_secret_post: [w.web, oauth.ClientSecretPost(w.web.secret!)],
      none: [w.spa, oauth.None()],
    };
    for (const method of as.token_endpoint_auth_methods_supported!) {
      const [c, auth] = methods[method];
      const { tokens } = await codeFlow(c, auth);
      expect({ method, token_type: tokens.token_type }).toEqual({ method, token_type: 'bearer' });
    }
    const jwt = oauth.ClientSecretJwt(w.web.secret!);
    const refused = await oauth.clientCredentialsGrantRequest(
      as,
      clientOf(w.web),
      jwt,
      { resource: w.api.identifier },
      insecure,
    );
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('introspection and revocation name their client authentication methods, and each is accepted there', async () => {
    const doc = await discoveryDocument(w);
    const methods: Record<string, [TestClient, oauth.ClientAuth]> = {
      client_secret_basic: [w.web, oauth.ClientSecretBasic(w.web.secret!)],
      client_secret_post: [w.web, oauth.ClientSecretPost(w.web.secret!)],
      none: [w.spa, oauth.None()],
    };
    for (const endpoint of ['introspection', 'revocation'] as const) {
      const advertised = doc[`${endpoint}_endpoint_auth_methods_supported`] as string[];
      expect([...advertised].sort()).toEqual(Object.keys(methods));
      for (const method of advertised) {
        const [c, auth] = methods[method];
        const { tokens } = await codeFlow(c, auth, { scope: 'openid' });
        if (endpoint === 'introspection') {
          const info = await oauth.processIntrospectionResponse(
            as,
            clientOf(c),
            await oauth.introspectionRequest(as, clientOf(c), auth, tokens.access_token, insecure),
          );
          expect({ method, active: info.active }).toEqual({ method, active: true });
        } else {
          await oauth.processRevocationResponse(
            await oauth.revocationRequest(as, clientOf(c), auth, tokens.access_token, insecure),
          );
          const after = await oauth.userInfoRequest(as, clientOf(c), tokens.access_token, insecure);
          expect({ method, status: after.status }).toEqual({ method, status: 401 });
        }
      }
    }
  });

  it('scopes, claims and ID token algorithms: each advertised one is served, and only those', async () => {
    expect([...as.scopes_supported!].sort()).toEqual(
      ['address', 'email', 'offline_access', 'openid', 'phone', 'profile'].sort(),
    );
    const { tokens } = await codeFlow(w.web, basic(w.web), {
      scope: as.scopes_supported!.join(' '),
      prompt: 'consent',
      acr_values: 'urn:mace:incommon:iap:silver', // not served: ignored
    });
    expect(String(tokens.scope).split(' ').sort()).toEqual([...as.scopes_supported!].sort());
    const idToken = oauth.getValidatedIdTokenClaims(tokens)!;
    const info = await oauth.processUserInfoResponse(
      as,
      clientOf(w.web),
      idToken.sub,
      await oauth.userInfoRequest(as, clientOf(w.web), tokens.access_token, insecure),
    );
    // every claim the user has in each scope is served, and each is advertised
    const registered = new Set([
      ...as.claims_supported!,
      'iss',
      'aud',
      'exp',
      'iat',
      'nonce',
      'auth_time',
      'sid',
    ]);
    for (const claim of [...Object.keys(info), ...Object.keys(idToken)]) {
      expect({ claim, advertised: registered.has(claim) }).toEqual({ claim, advertised: true });
    }
    expect(info).toMatchObject({
      email: w.user.email,
      address: expect.any(Object),
      phone_number: w.user.phone,
    });
    // ID tokens: the algorithms advertised are those the server signs with
    expect(as.id_token_signing_alg_values_supported).toEqual([decodeProtectedHeader(tokens.id_token!).alg]);
    // the acr values served (one factor, a second factor): an unknown one asked for is ignored, and the ID token
    // names the one of the sign-in (this user has no second factor), with its amr
    expect(as.acr_values_supported).toEqual(['urn:gatehouse:acr:pwd', 'urn:gatehouse:acr:mfa']);
    expect(idToken.acr).toBe('urn:gatehouse:acr:pwd');
    expect(idToken.amr).toEqual(['pwd']);
    expect(as.claims_parameter_supported).toBe(false);
    expect(as.request_parameter_supported ?? false).toBe(false);
    expect(as.request_uri_parameter_supported).toBe(false);
  });
});

async function authorizeUrl(c: TestClient, responseType: string, extra: Record<string, string> = {}) {
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({
    client_id: c.id,
    response_type: responseType,
    redirect_uri: CALLBACK,
    scope: 'openid',
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    ...(responseType.includes('code')
      ? {
          code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
          code_challenge_method: 'S256',
        }
      : {}),
    ...extra,
  }))
    url.searchParams.set(k, v);
  return url;
}

describe('authorization code + PKCE', () => {
  it('confidential client: state, response iss, nonce and the ID token pass; userinfo with the token', async () => {
    const { tokens, response, nonce } = await codeFlow(w.web, basic(w.web));
    await oauth.validateApplicationLevelSignature(as, response, insecure);
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims).toMatchObject({ iss: w.h.url, aud: w.web.id, sub: w.user.id, nonce });
    expect(tokens.refresh_token).toBeUndefined(); // offline_access was not asked
    // without an API audience the access token is opaque and good at /userinfo
    const info = await oauth.processUserInfoResponse(
      as,
      clientOf(w.web),
      w.user.id,
      await oauth.userInfoRequest(as, clientOf(w.web), tokens.access_token, insecure),
    );
    expect(info).toMatchObject({ sub: w.user.id, email: w.user.email, given_name: 'Bat' });
  });

  it('public client (none + PKCE) with an API: an RFC 9068 JWT access token for that API', async () => {
    const { tokens } = await codeFlow(w.spa, oauth.None(), {
      scope: 'openid read',
      resource: w.api.identifier,
    });
    const at = await validateAccessToken(tokens.access_token, w.api.identifier);
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    expect(at).toMatchObject({
      iss: w.h.url,
      aud: w.api.identifier,
      sub: w.user.id,
      client_id: w.spa.id,
      scope: 'read',
      jti: expect.any(String),
      iat: expect.any(Number),
      exp: expect.any(Number),
    });
  });

  it('userinfo with an access token for an API that also carries openid', async () => {
    const { tokens } = await codeFlow(w.web, basic(w.web), {
      scope: 'openid email read',
      resource: w.api.identifier,
    });
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    const info = await oauth.processUserInfoResponse(
      as,
      clientOf(w.web),
      w.user.id,
      await oauth.userInfoRequest(as, clientOf(w.web), tokens.access_token, insecure),
    );
    expect(info).toMatchObject({ sub: w.user.id, email: w.user.email });
  });

  it('an ES256 API: the JWT access token validates too; HS256 has the same shape, checked with its secret', async () => {
    const es = await codeFlow(w.web, basic(w.web), { scope: 'openid write', resource: w.esApi.identifier });
    expect(await validateAccessToken(es.tokens.access_token, w.esApi.identifier)).toMatchObject({
      sub: w.user.id,
      client_id: w.web.id,
      scope: 'write',
    });
    // oauth4webapi validates with the issuer's JWKS only: an HS256 token's key is the API's secret (docs/contract.md)
    const hs = await codeFlow(w.web, basic(w.web), { scope: 'openid write', resource: w.hsApi.identifier });
    await expect(validateAccessToken(hs.tokens.access_token, w.hsApi.identifier)).rejects.toThrow();
    const { payload, protectedHeader } = await jwtVerify(hs.tokens.access_token, Buffer.from(w.hsSecret), {
      issuer: w.h.url,
      audience: w.hsApi.identifier,
      typ: 'at+jwt',
      requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
    });
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({ sub: w.user.id, client_id: w.web.id });
  });
});

describe('errors at /authorize', () => {
  it('reach a valid callback with error, state and iss (RFC 9207): oauth4webapi checks both, then raises the error', async () => {
    const cases: [string, Record<string, string>][] = [
      ['login_required', { prompt: 'none' }],
      ['invalid_request', { code_challenge: '', code_challenge_method: '' }],
      ['invalid_request', { max_age: 'soon' }],
      ['unsupported_response_type', { response_type: 'token' }],
      ['invalid_target', { resource: 'https://unknown-api.test/' }],
    ];
    for (const [error, extra] of cases) {
      const state = oauth.generateRandomState();
      const url = await authorizeUrl(w.web, 'code', { state, ...extra });
      for (const [k, v] of Object.entries(extra)) if (v === '') url.searchParams.delete(k);
      const res = await new BrowserAgent(w.h.url).request(url.toString());
      const back = new URL(res.headers.get('location') ?? '/', w.h.url);
      expect({ error, status: res.status, at: back.origin + back.pathname }).toEqual({
        error,
        status: 303,
        at: CALLBACK,
      });
      const params = back.hash ? new URLSearchParams(back.hash.slice(1)) : back.searchParams;
      expect(Object.fromEntries(params)).toMatchObject({ error, state, iss: w.h.url });
      let raised: unknown;
      try {
        oauth.validateAuthResponse(as, clientOf(w.web), params, state);
      } catch (err) {
        raised = err;
      }
      expect(raised).toBeInstanceOf(oauth.AuthorizationResponseError);
      expect((raised as oauth.AuthorizationResponseError).error).toBe(error);
    }
  });

  it('a denied consent reaches the callback with access_denied, state and iss', async () => {
    const state = oauth.generateRandomState();
    const agent = new BrowserAgent(w.h.url);
    const url = await authorizeUrl(w.web, 'code', { state, prompt: 'consent' });
    let page = await agent.follow(url.toString());
    page = await agent.follow(actionOf(page.html, w.h.url), {
      csrf: fieldOf(page.html, 'csrf'),
      username: w.user.email,
      password: w.user.password,
    });
    const denied = await agent.follow(actionOf(page.html, w.h.url), {
      csrf: fieldOf(page.html, 'csrf'),
      decision: 'deny',
    });
    expect(() => oauth.validateAuthResponse(as, clientOf(w.web), new URL(denied.url), state)).toThrow(
      expect.objectContaining({ error: 'access_denied' }),
    );
    expect(new URL(denied.url).searchParams.get('iss')).toBe(w.h.url);
  });

  it('an unregistered redirect_uri or an unknown client is an error page, never a redirect', async () => {
    const bad = await authorizeUrl(w.web, 'code', { redirect_uri: 'https://evil.test/cb', prompt: 'none' });
    const unknown = await authorizeUrl({ id: crypto.randomUUID() }, 'code');
    for (const url of [bad, unknown]) {
      const res = await new BrowserAgent(w.h.url).request(url.toString());
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
  });
});

describe('implicit', () => {
  it('oauth4webapi refuses implicit responses by design (openid-client covers the flow)', async () => {
    // The fragment carries no `iss` parameter: RFC 9207 leaves it out when an ID token (which names the issuer) is
    // in the response, and oidc-provider does so. oauth4webapi refuses it (iss missing; implicit is unsupported).
    const state = oauth.generateRandomState();
    const done = await signInAndAllow(w, (await authorizeUrl(w.implicit, 'id_token', { state })).toString());
    const fragment = new URLSearchParams(new URL(done.url).hash.slice(1));
    expect(fragment.get('id_token')).toEqual(expect.any(String));
    expect(fragment.get('iss')).toBeNull();
    expect(decodeJwt(fragment.get('id_token')!).iss).toBe(w.h.url);
    expect(() => oauth.validateAuthResponse(as, clientOf(w.implicit), fragment, state)).toThrow();
  });
});

describe('refresh', () => {
  it('offline_access gives a refresh token; the refresh answers new tokens, rotates, and the old one is dead', async () => {
    const { tokens } = await codeFlow(w.web, basic(w.web), {
      scope: 'openid offline_access read',
      resource: w.api.identifier,
      prompt: 'consent',
    });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      clientOf(w.web),
      await oauth.refreshTokenGrantRequest(
        as,
        clientOf(w.web),
        basic(w.web),
        tokens.refresh_token!,
        insecure,
      ),
    );
    expect(oauth.getValidatedIdTokenClaims(refreshed)).toMatchObject({ sub: w.user.id, aud: w.web.id });
    expect(await validateAccessToken(refreshed.access_token, w.api.identifier)).toMatchObject({
      sub: w.user.id,
      client_id: w.web.id,
      scope: 'read',
    });
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await expect(
      oauth.processRefreshTokenResponse(
        as,
        clientOf(w.web),
        await oauth.refreshTokenGrantRequest(
          as,
          clientOf(w.web),
          basic(w.web),
          tokens.refresh_token!,
          insecure,
        ),
      ),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});

describe('client credentials', () => {
  it('the fast path and oidc-provider issue the same RFC 9068 token (RS256 and ES256)', async () => {
    const fast = w.h.tokenServer.fastClientCredentials;
    for (const api of [w.api, w.esApi]) {
      // the first request of a grant and scope is oidc-provider's, which teaches the fast path its scope
      await oauth.clientCredentialsGrantRequest(
        as,
        clientOf(w.web),
        basic(w.web),
        { resource: api.identifier, scope: 'read' },
        insecure,
      );
      const before = fast.issued;
      const viaFast = await oauth.processClientCredentialsResponse(
        as,
        clientOf(w.web),
        await oauth.clientCredentialsGrantRequest(
          as,
          clientOf(w.web),
          basic(w.web),
          { resource: api.identifier, scope: 'read' },
          insecure,
        ),
      );
      expect(fast.issued).toBe(before + 1);
      // a query string on the token URL is not a plain request of the fast path: oidc-provider answers it
      const viaProvider = await oauth.processClientCredentialsResponse(
        as,
        clientOf(w.web),
        await oauth.clientCredentialsGrantRequest(
          as,
          clientOf(w.web),
          basic(w.web),
          { resource: api.identifier, scope: 'read' },
          {
            ...insecure,
            [oauth.customFetch]: (url: string, init: RequestInit) => fetch(`${url}?via=provider`, init),
          },
        ),
      );
      expect(fast.issued).toBe(before + 1);
      const claims = [];
      for (const t of [viaFast, viaProvider]) {
        expect(t).toMatchObject({ token_type: 'bearer', scope: 'read', expires_in: expect.any(Number) });
        const at = await validateAccessToken(t.access_token, api.identifier);
        expect(at).toMatchObject({ iss: w.h.url, aud: api.identifier, sub: w.web.id, client_id: w.web.id });
        claims.push({
          header: Object.keys(decodeProtectedHeader(t.access_token)).sort(),
          claims: Object.keys(at).sort(),
        });
      }
      expect(claims[0]).toEqual(claims[1]);
    }
  });

  it("the default client's token for the management API (a system resource) is RFC 9068 too", async () => {
    const boot: TestClient = { id: w.h.boot.clientId, secret: w.h.boot.clientSecret };
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      clientOf(boot),
      await oauth.clientCredentialsGrantRequest(
        as,
        clientOf(boot),
        basic(boot),
        { audience: 'urn:gatehouse:management', scope: 'users:read' },
        insecure,
      ),
    );
    expect(await validateAccessToken(tokens.access_token, 'urn:gatehouse:management')).toMatchObject({
      sub: boot.id,
      client_id: boot.id,
      scope: 'users:read',
    });
  });
});

describe('device authorization (RFC 8628)', () => {
  it('device code, authorization_pending, a person approves, then validated tokens', async () => {
    const started = await oauth.processDeviceAuthorizationResponse(
      as,
      clientOf(w.web),
      await oauth.deviceAuthorizationRequest(
        as,
        clientOf(w.web),
        basic(w.web),
        { scope: 'openid offline_access read', resource: w.api.identifier },
        insecure,
      ),
    );
    expect(started.verification_uri).toBe(`${w.h.url}/device`);
    const poll = async () =>
      oauth.processDeviceCodeResponse(
        as,
        clientOf(w.web),
        await oauth.deviceCodeGrantRequest(as, clientOf(w.web), basic(w.web), started.device_code, insecure),
      );
    await expect(poll()).rejects.toMatchObject({ error: 'authorization_pending' });
    await approveDevice(w, started);
    let tokens: oauth.TokenEndpointResponse | undefined;
    let waited = 0;
    try {
      for (let i = 0; i < 5 && !tokens; i++) {
        try {
          tokens = await poll();
        } catch (err) {
          // polled again within the interval: slow_down, wait as RFC 8628 says (on the poll clock, moved ahead)
          if ((err as oauth.ResponseBodyError).error !== 'slow_down') throw err;
          waited += (started.interval ?? 5) * 1000;
          const offset = waited;
          w.h.tokenServer.pollClock = () => Date.now() + offset;
        }
      }
    } finally {
      w.h.tokenServer.pollClock = Date.now;
    }
    expect(oauth.getValidatedIdTokenClaims(tokens!)).toMatchObject({ sub: w.user.id, aud: w.web.id });
    expect(tokens!.refresh_token).toEqual(expect.any(String));
    expect(await validateAccessToken(tokens!.access_token, w.api.identifier)).toMatchObject({
      sub: w.user.id,
      client_id: w.web.id,
    });
  }, 30_000);
});

describe('custom grants through genericTokenEndpointRequest', () => {
  it('token exchange (RFC 8693): an ID token of the local identity provider for validated tokens', async () => {
    const subjectToken = await w.issuer.idToken(w.upstreamClientId, `upstream-${crypto.randomUUID()}`, {
      email: `ex-${crypto.randomUUID()}@upstream.test`,
      email_verified: true,
    });
    const c = w.exchanger;
    const tokens = await oauth.processGenericTokenEndpointResponse(
      as,
      clientOf(c),
      await oauth.genericTokenEndpointRequest(
        as,
        clientOf(c),
        basic(c),
        TOKEN_EXCHANGE,
        {
          subject_token: subjectToken,
          subject_token_type: ID_TOKEN_TYPE,
          resource: w.api.identifier,
          scope: 'openid read',
        },
        insecure,
      ),
    );
    expect(tokens.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
    const at = await validateAccessToken(tokens.access_token, w.api.identifier);
    expect(at).toMatchObject({ client_id: c.id, scope: 'read', tenant_id: expect.any(String) });
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub: at.sub, aud: c.id });
  });

  it('one-time code (grant_type otp) and password: validated tokens', async () => {
    const otp = await oneTimeCode(w);
    for (const [grantType, params] of [
      ['otp', { username: w.user.email, otp }],
      ['password', { username: w.user.email, password: w.user.password }],
    ] as const) {
      const tokens = await oauth.processGenericTokenEndpointResponse(
        as,
        clientOf(w.web),
        await oauth.genericTokenEndpointRequest(
          as,
          clientOf(w.web),
          basic(w.web),
          grantType,
          { ...params, scope: 'openid read', resource: w.api.identifier },
          insecure,
        ),
      );
      expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub: w.user.id, aud: w.web.id });
      expect(await validateAccessToken(tokens.access_token, w.api.identifier)).toMatchObject({
        sub: w.user.id,
        client_id: w.web.id,
        scope: 'read',
      });
    }
  });
});

describe('introspection and revocation', () => {
  it('introspects an access token, revokes the refresh token (RFC 7009), and both then answer inactive', async () => {
    const { tokens } = await codeFlow(w.web, basic(w.web), {
      scope: 'openid offline_access',
      prompt: 'consent',
    });
    const introspect = async (token: string) =>
      oauth.processIntrospectionResponse(
        as,
        clientOf(w.web),
        await oauth.introspectionRequest(as, clientOf(w.web), basic(w.web), token, insecure),
      );
    expect(await introspect(tokens.access_token)).toMatchObject({
      active: true,
      client_id: w.web.id,
      sub: w.user.id,
      iss: w.h.url,
      token_type: 'Bearer',
    });
    expect(await introspect(tokens.refresh_token!)).toMatchObject({
      active: true,
      token_type: 'refresh_token',
    });
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, clientOf(w.web), basic(w.web), tokens.refresh_token!, insecure),
    );
    expect(await introspect(tokens.refresh_token!)).toEqual({ active: false });
    // revoking a refresh token ends its grant: the access token of that grant too
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    await expect(
      oauth.processUserInfoResponse(
        as,
        clientOf(w.web),
        w.user.id,
        await oauth.userInfoRequest(as, clientOf(w.web), tokens.access_token, insecure),
      ),
    ).rejects.toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
  });
});

describe('end session (RP-initiated logout)', () => {
  it('the end_session_endpoint URL with id_token_hint, a confirmation, then the post_logout_redirect_uri with state', async () => {
    const agent = new BrowserAgent(w.h.url);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = await authorizeUrl(w.web, 'code', {
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    });
    const done = await signInAndAllow(w, url.toString(), agent);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      clientOf(w.web),
      await oauth.authorizationCodeGrantRequest(
        as,
        clientOf(w.web),
        basic(w.web),
        oauth.validateAuthResponse(as, clientOf(w.web), new URL(done.url), state),
        CALLBACK,
        verifier,
        insecure,
      ),
      { expectedNonce: url.searchParams.get('nonce')!, requireIdToken: true },
    );
    const end = new URL(as.end_session_endpoint!);
    end.searchParams.set('id_token_hint', tokens.id_token!);
    end.searchParams.set('client_id', w.web.id);
    end.searchParams.set('post_logout_redirect_uri', LOGGED_OUT);
    end.searchParams.set('state', 'bye');
    const back = await confirmLogout(w, end.toString(), agent);
    expect(back.origin + back.pathname).toBe(LOGGED_OUT);
    expect(back.searchParams.get('state')).toBe('bye');
    // the session is gone: prompt=none needs a login again
    const silent = await agent.request((await authorizeUrl(w.web, 'code', { prompt: 'none' })).toString());
    expect(new URL(silent.headers.get('location')!).searchParams.get('error')).toBe('login_required');
  });
});

// the raw document, for what oauth4webapi's types leave out
it('discovery document: the OpenID and RFC 8414 documents are the same', async () => {
  const oidcDoc = await discoveryDocument(w);
  const rfc8414 = (await (await fetch(`${w.h.url}/.well-known/oauth-authorization-server`)).json()) as Record<
    string,
    unknown
  >;
  expect(rfc8414).toEqual(oidcDoc);
});
