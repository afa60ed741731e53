import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import { actionOf, BrowserAgent, fieldOf } from './support/browser-agent.js';
import type { TestClient } from './support/fixtures.js';
import {
  approveDevice,
  CALLBACK,
  confirmLogout,
  LOGGED_OUT,
  oneTimeCode,
  signInAndAllow,
  startInteropWorld,
  type InteropWorld,
} from './support/interop.js';

/**
 * Every flow of the token server through openid-client (6.x, built on oauth4webapi): discovery, authorization code +
 * PKCE with state, nonce and response `iss` (RFC 9207), implicit (id_token, and id_token token), refresh, client
 * credentials, device, token exchange and one-time codes (genericGrantRequest), introspection, revocation, userinfo,
 * DPoP (advertised, so served), and RP-initiated logout (buildEndSessionUrl). Its strict defaults are kept; the one
 * option used is its documented test option `execute: [allowInsecureRequests]`, because the issuer of this test
 * server is http://127.0.0.1 (openid-client refuses non-https URLs otherwise).
 */
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

let w: InteropWorld;

beforeAll(async () => {
  w = await startInteropWorld();
});
afterAll(async () => {
  await w?.close();
});

function configOf(c: TestClient, auth = client.ClientSecretBasic(c.secret!)) {
  return client.discovery(new URL(w.h.url), c.id, undefined, auth, {
    execute: [client.allowInsecureRequests],
  });
}

/** An authorization URL of `config` (PKCE S256, state, nonce) and what its answer is checked against. */
async function authorization(config: client.Configuration, params: Record<string, string> = {}) {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedState = client.randomState();
  const expectedNonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid profile email',
    state: expectedState,
    nonce: expectedNonce,
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    ...params,
  });
  return { url, checks: { pkceCodeVerifier, expectedState, expectedNonce, idTokenExpected: true } };
}

async function codeFlow(
  config: client.Configuration,
  params: Record<string, string> = {},
  agent = new BrowserAgent(w.h.url),
  options?: client.DPoPOptions,
) {
  const { url, checks } = await authorization(config, params);
  const done = await signInAndAllow(w, url.toString(), agent);
  return client.authorizationCodeGrant(config, new URL(done.url), checks, undefined, options);
}

describe('discovery', () => {
  it('is accepted, and announces RFC 9207 iss, PKCE S256, and the endpoints of every flow', async () => {
    const meta = (await configOf(w.web)).serverMetadata();
    expect(meta).toMatchObject({
      issuer: w.h.url,
      authorization_response_iss_parameter_supported: true,
      code_challenge_methods_supported: ['S256'],
      introspection_endpoint: `${w.h.url}/token/introspection`,
      revocation_endpoint: `${w.h.url}/revoke`,
      device_authorization_endpoint: `${w.h.url}/device/code`,
      end_session_endpoint: `${w.h.url}/session/end`,
      userinfo_endpoint: `${w.h.url}/userinfo`,
    });
    expect(meta.supportsPKCE()).toBe(true);
  });
});

describe('authorization code + PKCE', () => {
  it('confidential client: state, iss, nonce, ID token, userinfo (a token without an API audience)', async () => {
    const config = await configOf(w.web);
    const tokens = await codeFlow(config);
    expect(tokens.claims()).toMatchObject({ iss: w.h.url, aud: w.web.id, sub: w.user.id });
    const info = await client.fetchUserInfo(config, tokens.access_token, w.user.id);
    expect(info).toMatchObject({ sub: w.user.id, email: w.user.email, email_verified: true });
  });

  it('userinfo with an access token for an API that also carries openid', async () => {
    const config = await configOf(w.web);
    const tokens = await codeFlow(config, { scope: 'openid email read', resource: w.api.identifier });
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    const info = await client.fetchUserInfo(config, tokens.access_token, w.user.id);
    expect(info).toMatchObject({ sub: w.user.id, email: w.user.email, email_verified: true });
  });

  it('public client (none): a JWT access token (at+jwt) for the API asked for', async () => {
    const config = await configOf(w.spa, client.None());
    const tokens = await codeFlow(config, { scope: 'openid read', resource: w.api.identifier });
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      aud: w.api.identifier,
      sub: w.user.id,
      client_id: w.spa.id,
      scope: 'read',
      jti: expect.any(String),
      iat: expect.any(Number),
    });
  });

  it('an error reaches the callback with error, state and iss: openid-client checks them, then raises it', async () => {
    const config = await configOf(w.web);
    const { url, checks } = await authorization(config, { prompt: 'none' });
    const res = await new BrowserAgent(w.h.url).request(url.toString());
    const back = new URL(res.headers.get('location')!);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      error: 'login_required',
      state: checks.expectedState,
      iss: w.h.url,
    });
    await expect(client.authorizationCodeGrant(config, back, checks)).rejects.toMatchObject({
      name: 'AuthorizationResponseError',
      error: 'login_required',
    });
    // a wrong state or a wrong iss is refused before the error is looked at
    const forged = new URL(back);
    forged.searchParams.set('iss', 'https://evil.test');
    const refusedFor = (what: RegExp) => ({
      code: 'OAUTH_INVALID_RESPONSE',
      cause: expect.objectContaining({ message: expect.stringMatching(what) }),
    });
    await expect(client.authorizationCodeGrant(config, forged, checks)).rejects.toMatchObject(
      refusedFor(/iss/),
    );
    await expect(
      client.authorizationCodeGrant(config, back, { ...checks, expectedState: 'another' }),
    ).rejects.toMatchObject(refusedFor(/state/));
  });

  it('a denied consent is access_denied at the callback', async () => {
    const config = await configOf(w.web);
    const { url, checks } = await authorization(config, { prompt: 'consent' });
    const agent = new BrowserAgent(w.h.url);
    const login = await agent.follow(url.toString());
    const consent = await agent.follow(actionOf(login.html, w.h.url), {
      csrf: fieldOf(login.html, 'csrf'),
      username: w.user.email,
      password: w.user.password,
    });
    const denied = await agent.follow(actionOf(consent.html, w.h.url), {
      csrf: fieldOf(consent.html, 'csrf'),
      decision: 'deny',
    });
    await expect(client.authorizationCodeGrant(config, new URL(denied.url), checks)).rejects.toMatchObject({
      error: 'access_denied',
    });
  });
});

describe('implicit', () => {
  it('response_type id_token: implicitAuthentication validates the ID token (nonce, state)', async () => {
    const config = await configOf(w.implicit);
    client.useIdTokenResponseType(config);
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid email',
      nonce,
      state,
    });
    expect(url.searchParams.get('response_type')).toBe('id_token');
    const done = await signInAndAllow(w, url.toString());
    const claims = await client.implicitAuthentication(config, new URL(done.url), nonce, {
      expectedState: state,
    });
    expect(claims).toMatchObject({
      iss: w.h.url,
      aud: w.implicit.id,
      sub: w.user.id,
      nonce,
      email: w.user.email,
    });
  });

  it('response_type id_token token: the ID token validates, and the access token serves userinfo', async () => {
    // openid-client names only id_token for implicit; the same check validates the ID token of id_token token (it
    // does not check at_hash: docs/contract.md)
    const config = await configOf(w.implicit);
    client.useIdTokenResponseType(config);
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      response_type: 'id_token token',
      scope: 'openid email',
      nonce,
      state,
    });
    const done = await signInAndAllow(w, url.toString());
    const claims = await client.implicitAuthentication(config, new URL(done.url), nonce, {
      expectedState: state,
    });
    expect(claims).toMatchObject({ sub: w.user.id, at_hash: expect.any(String) });
    const fragment = new URLSearchParams(new URL(done.url).hash.slice(1));
    const info = await client.fetchUserInfo(config, fragment.get('access_token')!, claims.sub);
    expect(info).toMatchObject({ sub: w.user.id, email: w.user.email });
  });
});

describe('refresh', () => {
  it('offline_access: refreshTokenGrant gives new tokens (the same user) and a new refresh token', async () => {
    const config = await configOf(w.web);
    const tokens = await codeFlow(config, {
      scope: 'openid offline_access read',
      resource: w.api.identifier,
      prompt: 'consent',
    });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject({ sub: w.user.id, aud: w.web.id });
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ aud: w.api.identifier, scope: 'read' });
  });
});

describe('client credentials', () => {
  it('clientCredentialsGrant: an at+jwt for the API, client_secret_basic and client_secret_post', async () => {
    for (const auth of [client.ClientSecretBasic(w.web.secret!), client.ClientSecretPost(w.web.secret!)]) {
      const config = await configOf(w.web, auth);
      const tokens = await client.clientCredentialsGrant(config, { resource: w.esApi.identifier });
      expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read write' });
      expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
      expect(decodeJwt(tokens.access_token)).toMatchObject({
        iss: w.h.url,
        aud: w.esApi.identifier,
        sub: w.web.id,
        client_id: w.web.id,
        jti: expect.any(String),
        iat: expect.any(Number),
        exp: expect.any(Number),
      });
    }
  });
});

describe('DPoP (advertised in discovery)', () => {
  it('a DPoP-bound code flow token serves userinfo with its proof; client credentials are bound (cnf.jkt)', async () => {
    const config = await configOf(w.web);
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair());
    const tokens = await codeFlow(config, {}, undefined, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    expect(await client.fetchUserInfo(config, tokens.access_token, w.user.id, { DPoP })).toMatchObject({
      sub: w.user.id,
    });
    const cc = await client.clientCredentialsGrant(config, { resource: w.api.identifier }, { DPoP });
    expect(cc.token_type).toBe('dpop');
    expect(decodeJwt(cc.access_token).cnf).toEqual({ jkt: expect.any(String) });
  });
});

describe('device authorization (RFC 8628)', () => {
  it('initiateDeviceAuthorization, a person approves, pollDeviceAuthorizationGrant gives the tokens', async () => {
    const config = await configOf(w.web);
    const started = await client.initiateDeviceAuthorization(config, {
      scope: 'openid read',
      resource: w.api.identifier,
    });
    await approveDevice(w, started);
    const tokens = await client.pollDeviceAuthorizationGrant(config, started);
    expect(tokens.claims()).toMatchObject({ sub: w.user.id, aud: w.web.id });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: w.api.identifier, sub: w.user.id });
  }, 30_000);
});

describe('custom grants through genericGrantRequest', () => {
  it('token exchange (RFC 8693) with an ID token of the local identity provider', async () => {
    const config = await configOf(w.exchanger);
    const subjectToken = await w.issuer.idToken(w.upstreamClientId, `upstream-${crypto.randomUUID()}`, {
      email: `ex-${crypto.randomUUID()}@upstream.test`,
      email_verified: true,
    });
    const tokens = await client.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: subjectToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      resource: w.api.identifier,
      scope: 'openid read',
    });
    expect(tokens.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
    expect(tokens.claims()).toMatchObject({ iss: w.h.url, aud: w.exchanger.id });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: w.exchanger.id, scope: 'read' });
  });

  it('one-time code: grant_type otp after POST /passwordless/start', async () => {
    const config = await configOf(w.web);
    const tokens = await client.genericGrantRequest(config, 'otp', {
      username: w.user.email,
      otp: await oneTimeCode(w),
      scope: 'openid email',
    });
    expect(tokens.claims()).toMatchObject({ sub: w.user.id, aud: w.web.id });
    expect(await client.fetchUserInfo(config, tokens.access_token, w.user.id)).toMatchObject({
      email: w.user.email,
    });
  });
});

describe('introspection, revocation, end session', () => {
  it('tokenIntrospection and tokenRevocation of the tokens of a sign-in, then logout through buildEndSessionUrl', async () => {
    const config = await configOf(w.web);
    const agent = new BrowserAgent(w.h.url);
    const tokens = await codeFlow(config, { scope: 'openid offline_access', prompt: 'consent' }, agent);
    expect(await client.tokenIntrospection(config, tokens.access_token)).toMatchObject({
      active: true,
      sub: w.user.id,
      client_id: w.web.id,
    });
    await client.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
    expect(await client.tokenIntrospection(config, tokens.refresh_token!)).toEqual({ active: false });
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    const end = client.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: LOGGED_OUT,
      state: 'bye',
    });
    const back = await confirmLogout(w, end.toString(), agent);
    expect(back.origin + back.pathname).toBe(LOGGED_OUT);
    expect(back.searchParams.get('state')).toBe('bye');
  });
});
