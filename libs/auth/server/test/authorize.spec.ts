import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { BrowserAgent as Agent } from './support/browser-agent.js';
import { Fixtures, type TestClient, type TestResource, type TestUser } from './support/fixtures.js';

/**
 * Authorization code + PKCE through the login and consent pages, with `openid-client` as the relying party and a
 * cookie-keeping HTTP agent as the browser.
 */
const CALLBACK = 'https://rp.example.test/callback';
const LOGGED_OUT = 'https://rp.example.test/bye';

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const actionOf = (html: string) => /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';

let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;
let api: TestResource;
let user: TestUser;
let config: oidc.Configuration;

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  client = await fx.client({
    grantTypes: ['authorization_code', 'refresh_token'],
    metadata: { urls: { callbacks: [CALLBACK], logout_urls: [LOGGED_OUT] } },
  });
  api = await fx.resource({ scopes: ['orders:read'] });
  await fx.grant(client, api);
  user = await fx.user();
  config = await oidc.discovery(
    new URL(h.url),
    client.id,
    undefined,
    oidc.ClientSecretBasic(client.secret!),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
});
afterAll(async () => {
  await h?.close();
});

async function authorizationUrl(extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const params: Record<string, string> = {
    redirect_uri: CALLBACK,
    scope: 'openid profile email offline_access orders:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    resource: api.identifier,
    prompt: 'consent',
    ...extra,
  };
  // an empty value leaves the parameter out
  for (const k of Object.keys(params)) if (params[k] === '') delete params[k];
  const url = oidc.buildAuthorizationUrl(config, params);
  return { url: url.toString(), verifier, state };
}

async function signIn(agent: Agent, url: string, password = user.password) {
  const login = await agent.follow(url);
  expect(login.res.status).toBe(200);
  const html = login.html;
  return agent.follow(new URL(actionOf(html), h.url).toString(), {
    csrf: csrfOf(html),
    username: user.email,
    password,
  });
}

describe('authorization code + PKCE with the login and consent pages', () => {
  it('signs in, asks consent listing the scopes, and the code gives validated tokens and userinfo', async () => {
    const agent = new Agent(h.url);
    // no resource: the access token is for the userinfo endpoint
    const { url, verifier, state } = await authorizationUrl({
      resource: '',
      scope: 'openid profile email offline_access',
    });
    const first = await agent.follow(url);
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get('content-security-policy')).toMatch(
      /default-src 'none'.*frame-ancestors 'none'/,
    );
    expect(first.res.headers.get('x-frame-options')).toBe('DENY');
    const loginHtml = first.html;
    expect(loginHtml).toContain('<html lang="en">');
    expect(loginHtml).toMatch(/<label for="username">[\s\S]*<input id="username" name="username"/);
    expect(loginHtml).toMatch(/<input id="password" name="password" type="password"/);
    // the one script: the token server's own passkey file, by the page's nonce; no inline code (this test once
    // asserted no script at all: the passkey button needs one, docs/security.md "Passkeys")
    expect(
      [...loginHtml.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => [
        m[1].replace(/ nonce="[^"]+"/, ''),
        m[2],
      ]),
    ).toEqual([[' type="module" src="/assets/passkeys.js"', '']]);

    const consent = await agent.follow(new URL(actionOf(loginHtml), h.url).toString(), {
      csrf: csrfOf(loginHtml),
      username: user.email,
      password: user.password,
    });
    expect(consent.res.status).toBe(200);
    const consentHtml = consent.html;
    expect(consentHtml).toContain('<button type="submit" name="decision" value="allow">');
    expect(consentHtml).toContain('value="deny"');
    expect(consentHtml).toContain('See your e-mail address');

    const done = await agent.follow(new URL(actionOf(consentHtml), h.url).toString(), {
      csrf: csrfOf(consentHtml),
      decision: 'allow',
    });
    expect(done.url.startsWith(CALLBACK)).toBe(true);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.url), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(user.id);
    expect(claims.iss).toBe(h.url);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
    expect(info).toMatchObject({ sub: user.id, email: user.email });
    expect(
      String(tokens.scope ?? '')
        .split(' ')
        .sort(),
    ).toEqual(['email', 'offline_access', 'openid', 'profile']);
  });

  it("with a resource: consent lists the API's scopes, and the access token is for that API", async () => {
    const agent = new Agent(h.url);
    const { url, verifier, state } = await authorizationUrl();
    const consent = await signIn(agent, url);
    const html = consent.html;
    expect(html).toContain('data-scope="orders:read"');
    const done = await agent.follow(new URL(actionOf(html), h.url).toString(), {
      csrf: csrfOf(html),
      decision: 'allow',
    });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.url), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const info = await fetch(`${h.url}/tokeninfo`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: tokens.access_token }),
    });
    expect(await info.json()).toMatchObject({ active: true, aud: api.identifier, scope: 'orders:read' });
  });

  it('deny ends at the callback with access_denied; the same session then skips the login', async () => {
    const agent = new Agent(h.url);
    const { url } = await authorizationUrl();
    const consent = await signIn(agent, url);
    const html = consent.html;
    const denied = await agent.follow(new URL(actionOf(html), h.url).toString(), {
      csrf: csrfOf(html),
      decision: 'deny',
    });
    const back = new URL(denied.url);
    expect(back.origin + back.pathname).toBe(CALLBACK);
    expect(back.searchParams.get('error')).toBe('access_denied');

    // signed in already: straight to consent
    const again = await agent.follow((await authorizationUrl()).url);
    expect(again.html).toContain('name="decision"');
  });

  it('prompt=none answers login_required without a session, and a code with one (consent given)', async () => {
    const none = await new Agent(h.url).follow((await authorizationUrl({ prompt: 'none' })).url);
    expect(new URL(none.url).searchParams.get('error')).toBe('login_required');

    const agent = new Agent(h.url);
    const consent = await signIn(agent, (await authorizationUrl()).url);
    const html = consent.html;
    await agent.follow(new URL(actionOf(html), h.url).toString(), { csrf: csrfOf(html), decision: 'allow' });
    const silent = await agent.follow((await authorizationUrl({ prompt: 'none' })).url);
    expect(new URL(silent.url).searchParams.get('code')).toEqual(expect.any(String));
  });

  it('a wrong password re-renders the login (401) with one message; a blocked user is told so', async () => {
    const agent = new Agent(h.url);
    const wrong = await signIn(agent, (await authorizationUrl()).url, 'not-the-password');
    expect(wrong.res.status).toBe(401);
    const html = wrong.html;
    expect(html).toContain('role="alert"');
    expect(html).toContain('The sign-in details are not right');
    expect(html).toContain(`value="${user.email}"`);

    const blocked = await fx.user({ blocked: true });
    const b = new Agent(h.url);
    const page = await b.follow((await authorizationUrl()).url);
    const form = page.html;
    const res = await b.follow(new URL(actionOf(form), h.url).toString(), {
      csrf: csrfOf(form),
      username: blocked.email,
      password: blocked.password,
    });
    expect(res.res.status).toBe(401);
    expect(res.html).toContain('blocked');
  });

  it('a form without its CSRF token is refused (403 page), nothing signs in', async () => {
    const agent = new Agent(h.url);
    const page = await agent.follow((await authorizationUrl()).url);
    const html = page.html;
    const res = await agent.follow(new URL(actionOf(html), h.url).toString(), {
      csrf: 'forged',
      username: user.email,
      password: user.password,
    });
    expect(res.res.status).toBe(403);
    expect(res.res.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('Mongolian pages for ui_locales=mn or Accept-Language mn', async () => {
    const byParam = await new Agent(h.url).follow((await authorizationUrl({ ui_locales: 'mn-MN' })).url);
    expect(byParam.html).toMatch(/<html lang="mn">[\s\S]*Нэвтрэх/);
    const byHeader = await new Agent(h.url, { 'accept-language': 'mn_MN, en;q=0.5' }).follow(
      (await authorizationUrl()).url,
    );
    expect(byHeader.html).toContain('<html lang="mn">');
  });

  it('errors a browser sees are pages: an unknown redirect_uri, no PKCE', async () => {
    const bad = await new Agent(h.url).follow(
      (await authorizationUrl({ redirect_uri: 'https://evil.test/cb' })).url,
    );
    expect(bad.res.status).toBe(400);
    expect(bad.res.headers.get('content-type')).toMatch(/text\/html/);
    expect(bad.html).toContain('redirect_uri');

    const noPkce = new URL((await authorizationUrl()).url);
    noPkce.searchParams.delete('code_challenge');
    noPkce.searchParams.delete('code_challenge_method');
    const res = await new Agent(h.url).follow(noPkce.toString());
    expect(new URL(res.url).searchParams.get('error')).toBe('invalid_request');
  });

  it('implicit: id_token and id_token token for a client whose grant_types name implicit', async () => {
    const implicitClient = await fx.client({
      grantTypes: ['implicit'],
      metadata: { urls: { callbacks: [CALLBACK] } },
    });
    const jwks = createRemoteJWKSet(new URL(`${h.url}/jwks`));
    for (const responseType of ['id_token', 'id_token token']) {
      const agent = new Agent(h.url);
      const nonce = oidc.randomNonce();
      const url = new URL(`${h.url}/authorize`);
      for (const [k, v] of Object.entries({
        client_id: implicitClient.id,
        response_type: responseType,
        redirect_uri: CALLBACK,
        scope: 'openid email',
        nonce,
        state: 'st',
      }))
        url.searchParams.set(k, v);
      const consent = await signIn(agent, url.toString());
      const html = consent.html;
      const done = await agent.follow(new URL(actionOf(html), h.url).toString(), {
        csrf: csrfOf(html),
        decision: 'allow',
      });
      const fragment = new URLSearchParams(new URL(done.url).hash.slice(1));
      const { payload } = await jwtVerify(fragment.get('id_token')!, jwks, {
        issuer: h.url,
        audience: implicitClient.id,
      });
      expect(payload).toMatchObject({ sub: user.id, nonce });
      expect(fragment.get('access_token') !== null).toBe(responseType === 'id_token token');
      expect(fragment.get('state')).toBe('st');
    }
    // a code request of the implicit-only client is refused (oidc-provider's answer)
    const code = await new Agent(h.url).follow(
      `${h.url}/authorize?client_id=${implicitClient.id}&response_type=code&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=openid&code_challenge_method=S256&code_challenge=${await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier())}`,
    );
    expect(Object.fromEntries(new URL(code.url).searchParams)).toMatchObject({
      error: 'invalid_request',
      error_description: 'requested response_type is not allowed for this client',
    });
  });

  it('logout at /session/end: a confirmation page, then the registered post_logout_redirect_uri; the session is gone', async () => {
    const agent = new Agent(h.url);
    const { url, verifier, state } = await authorizationUrl({ resource: '', scope: 'openid' });
    const consent = await signIn(agent, url);
    const html = consent.html;
    const done = await agent.follow(new URL(actionOf(html), h.url).toString(), {
      csrf: csrfOf(html),
      decision: 'allow',
    });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.url), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });

    const bad = await agent.follow(
      `${h.url}/session/end?id_token_hint=${tokens.id_token}&post_logout_redirect_uri=${encodeURIComponent('https://evil.test/')}`,
    );
    expect(bad.res.status).toBe(400);
    expect(bad.res.headers.get('content-type')).toMatch(/text\/html/);

    const endUrl = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: LOGGED_OUT,
      state: 'bye-state',
    });
    const page = await agent.follow(endUrl.toString());
    expect(page.res.status).toBe(200);
    const confirm = page.html;
    expect(confirm).not.toContain('<script');
    expect(confirm).toMatch(/<button type="submit" form="[^"]+" name="logout" value="yes">/);
    const action = /<form[^>]*action="([^"]+)"/.exec(confirm)![1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(confirm)![1];
    const out = await agent.follow(new URL(action, h.url).toString(), { xsrf, logout: 'yes' });
    const back = new URL(out.url);
    expect(back.origin + back.pathname).toBe(LOGGED_OUT);
    expect(back.searchParams.get('state')).toBe('bye-state');

    const silent = await agent.follow((await authorizationUrl({ prompt: 'none' })).url);
    expect(new URL(silent.url).searchParams.get('error')).toBe('login_required');
  });

  it('discovery lists what is served: the endpoints, grant types and response types of the browser flows', async () => {
    const d = (await (await fetch(`${h.url}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(d).toMatchObject({
      authorization_endpoint: `${h.url}/authorize`,
      device_authorization_endpoint: `${h.url}/device/code`,
      end_session_endpoint: `${h.url}/session/end`,
      code_challenge_methods_supported: ['S256'],
    });
    expect([...(d.response_types_supported as string[])].sort()).toEqual([
      'code',
      'id_token',
      'id_token token',
    ]);
    expect([...(d.grant_types_supported as string[])].sort()).toEqual(
      [
        'authorization_code',
        'client_credentials',
        'implicit',
        'otp',
        'password',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
        'urn:ietf:params:oauth:grant-type:token-exchange',
        'http://auth0.com/oauth/grant-type/mfa-otp',
        'http://auth0.com/oauth/grant-type/mfa-recovery-code',
      ].sort(),
    );
    expect(d.acr_values_supported).toEqual(['urn:gatehouse:acr:pwd', 'urn:gatehouse:acr:mfa']);
  });

  it("hole 2: a code-flow token for the management API carries only the user's own scopes, not the client's", async () => {
    const [mgmt] = await fx.ds.rows<{ id: string }>(
      `SELECT r.id FROM resources r JOIN instances i ON i.id = r.instance_id AND i.is_default
        WHERE r.identifier_url = 'urn:gatehouse:management'`,
    );
    const rows = await fx.ds.rows<{ id: string; scope_name: string }>(
      `SELECT id, scope_name FROM scopes WHERE resource_id = $1`,
      [mgmt.id],
    );
    const system = {
      id: mgmt.id,
      identifier: 'urn:gatehouse:management',
      scopes: Object.fromEntries(rows.map((r) => [r.scope_name, r.id])),
    };
    await fx.grant(client, system, ['users:read', 'users:write', 'clients:read']);
    await fx.ds.exec(`DELETE FROM user_permissions WHERE user_id = $1`, [user.id]);
    const agent = new Agent(h.url);
    const { url, verifier, state } = await authorizationUrl({
      resource: system.identifier,
      scope: 'openid users:read users:write clients:read',
    });
    const consent = await signIn(agent, url);
    const done = await agent.follow(new URL(actionOf(consent.html), h.url).toString(), {
      csrf: csrfOf(consent.html),
      decision: 'allow',
    });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.url), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.scope ?? '').not.toMatch(/users:|clients:/);
    const info = (await (
      await fetch(`${h.url}/tokeninfo`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens.access_token}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token: tokens.access_token }),
      })
    ).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ active: true });
    expect(info.scope ?? '').toBe('');
  });

  it("RBAC: a code-flow token for an rbac_enabled API carries only the user's effective scopes, rechecked at /tokeninfo", async () => {
    const rbacApi = await fx.resource({ scopes: ['vault:open', 'vault:seal'] });
    await fx.ds.exec(`UPDATE resources SET rbac_enabled = true WHERE id = $1`, [rbacApi.id]);
    await fx.grant(client, rbacApi);
    // the user holds vault:open only (the client may ask for both)
    await fx.ds.exec(
      `INSERT INTO user_permissions (instance_id, user_id, resource_id, scope_id)
       SELECT instance_id, $1, id, $3 FROM resources WHERE id = $2`,
      [user.id, rbacApi.id, rbacApi.scopes['vault:open']],
    );
    const agent = new Agent(h.url);
    const { url, verifier, state } = await authorizationUrl({
      resource: rbacApi.identifier,
      scope: 'openid vault:open vault:seal',
    });
    const consent = await signIn(agent, url);
    const done = await agent.follow(new URL(actionOf(consent.html), h.url).toString(), {
      csrf: csrfOf(consent.html),
      decision: 'allow',
    });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.url), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const info = async () =>
      (await (
        await fetch(`${h.url}/tokeninfo`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tokens.access_token}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ token: tokens.access_token }),
        })
      ).json()) as Record<string, unknown>;
    expect(await info()).toMatchObject({ active: true, scope: 'vault:open' });
    await fx.ds.exec(`DELETE FROM user_permissions WHERE user_id = $1`, [user.id]);
    expect(await info()).toMatchObject({ active: true, scope: '' });
  });

  it('offline_access without prompt=consent: asked on the consent page, a refresh token that refreshes; next time without a page', async () => {
    const agent = new Agent(h.url);
    const exchange = async (done: { url: string }, verifier: string, state: string) =>
      oidc.authorizationCodeGrant(config, new URL(done.url), {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
    const first = await authorizationUrl({ resource: '', scope: 'openid offline_access', prompt: '' });
    const consent = await signIn(agent, first.url);
    expect(consent.html).toContain('data-scope="offline_access"');
    const done = await agent.follow(new URL(actionOf(consent.html), h.url).toString(), {
      csrf: csrfOf(consent.html),
      decision: 'allow',
    });
    const tokens = await exchange(done, first.verifier, first.state);
    expect(tokens.scope?.split(' ').sort()).toEqual(['offline_access', 'openid']);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).toEqual(expect.any(String));

    // the grant holds it now: the next request of the session gets a code (and a refresh token) without a page
    const again = await authorizationUrl({ resource: '', scope: 'openid offline_access', prompt: '' });
    const back = await agent.follow(again.url);
    expect(back.url.startsWith(CALLBACK)).toBe(true);
    expect((await exchange(back, again.verifier, again.state)).refresh_token).toEqual(expect.any(String));

    // prompt=none cannot ask: offline_access is dropped there as before, no refresh token
    const silent = await authorizationUrl({ resource: '', scope: 'openid offline_access', prompt: 'none' });
    const quiet = await agent.follow(silent.url);
    const t = await exchange(quiet, silent.verifier, silent.state);
    expect(t.refresh_token).toBeUndefined();
  });

  it('RFC 6749 errors of the code flow: a reused code, another redirect_uri or verifier, an unknown client, an unsupported response type', async () => {
    const agent = new Agent(h.url);
    const freshCode = async () => {
      const { url, verifier } = await authorizationUrl({ resource: '', scope: 'openid' });
      const consent = await signIn(agent, url);
      const done = consent.html.includes('name="decision"')
        ? await agent.follow(new URL(actionOf(consent.html), h.url).toString(), {
            csrf: csrfOf(consent.html),
            decision: 'allow',
          })
        : consent;
      return { code: new URL(done.url).searchParams.get('code')!, verifier };
    };
    const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
      fetch(`${h.url}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: CALLBACK,
          code_verifier: verifier,
          ...extra,
        }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));

    const a = await freshCode();
    expect((await exchange(a.code, a.verifier)).status).toBe(200);
    expect((await exchange(a.code, a.verifier)).body.error).toBe('invalid_grant'); // used once
    const b = await freshCode();
    const other = await exchange(b.code, b.verifier, { redirect_uri: 'https://rp.example.test/other' });
    expect([other.status, other.body.error]).toEqual([400, 'invalid_grant']);
    const c = await freshCode();
    const wrong = await exchange(c.code, oidc.randomPKCECodeVerifier());
    expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_grant']);

    const unknown = await agent.follow(
      `${h.url}/authorize?client_id=${crypto.randomUUID()}&response_type=code&scope=openid`,
    );
    expect(unknown.res.status).toBe(400);
    expect(unknown.res.headers.get('content-type')).toMatch(/text\/html/);

    const token = new URL((await authorizationUrl()).url);
    token.searchParams.set('response_type', 'token');
    const unsupported = await agent.follow(token.toString());
    // a token response type answers in the fragment
    const answer = new URL(unsupported.url);
    const error = answer.searchParams.get('error') ?? new URLSearchParams(answer.hash.slice(1)).get('error');
    expect([unsupported.res.status, error]).toEqual([303, 'unsupported_response_type']);
  });

  it('prompt=login and max_age=0 ask for the password again though a session exists', async () => {
    const agent = new Agent(h.url);
    const consent = await signIn(agent, (await authorizationUrl({ resource: '', scope: 'openid' })).url);
    await agent.follow(new URL(actionOf(consent.html), h.url).toString(), {
      csrf: csrfOf(consent.html),
      decision: 'allow',
    });
    // with the session: no login page
    const silent = await agent.follow(
      (await authorizationUrl({ resource: '', scope: 'openid', prompt: '' })).url,
    );
    expect(silent.html).not.toContain('name="password"');
    const asks: Record<string, string>[] = [{ prompt: 'login' }, { prompt: '', max_age: '0' }];
    for (const extra of asks) {
      const again = await agent.follow(
        (await authorizationUrl({ resource: '', scope: 'openid', ...extra })).url,
      );
      expect(again.html).toContain('name="password"');
    }
  });
});
