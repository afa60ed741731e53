import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { eventually, smtpSink, type SunkMail } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './auth-app.js';
import { actionOf, BrowserAgent, fieldOf } from './browser-agent.js';
import { Fixtures, type TestClient, type TestResource, type TestUser } from './fixtures.js';
import { LocalIssuer } from '@gatehouse/testing';

/**
 * The world of the strict-client interop tests (oauth4webapi, openid-client): one token server with a user, APIs
 * signed RS256, ES256 and HS256, a confidential web client allowed every grant type the server serves, a public
 * (PKCE) client, an implicit client, a tenant client for token exchange with a real local identity provider, and a
 * real local SMTP server for one-time codes. The browser is a cookie-keeping HTTP agent.
 */
export const CALLBACK = 'https://rp.example.test/callback';
export const LOGGED_OUT = 'https://rp.example.test/bye';

/** Every grant type of client_metadata.grant_types the token server serves (document 1's names). */
export const ALL_GRANT_TYPES = [
  'authorization_code',
  'implicit',
  'refresh_token',
  'client_credentials',
  'password',
  'otp',
  'device_code',
  'token_exchange',
];

export interface InteropWorld {
  h: AuthHarness;
  fx: Fixtures;
  issuer: LocalIssuer;
  /** Our client id at the local identity provider (the `aud` of its ID tokens). */
  upstreamClientId: string;
  mails: SunkMail[];
  user: TestUser;
  /** RS256, ES256 and HS256 APIs, each granted to `web` (and the other clients) with the scopes `read write`. */
  api: TestResource;
  esApi: TestResource;
  hsApi: TestResource;
  hsSecret: string;
  web: TestClient;
  spa: TestClient;
  implicit: TestClient;
  exchanger: TestClient;
  close(): Promise<void>;
}

export async function startInteropWorld(): Promise<InteropWorld> {
  const mails: SunkMail[] = [];
  const smtp = smtpSink(mails);
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const issuer = await LocalIssuer.start();
  const h = await startAuth({
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    AUTH_OTP_SEND_INTERVAL_SEC: '0',
    AUTH_OTP_SENDS_PER_HOUR: '1000',
  });
  const fx = new Fixtures(h);
  const urls = { callbacks: [CALLBACK], logout_urls: [LOGGED_OUT] };
  const web = await fx.client({
    grantTypes: ALL_GRANT_TYPES.filter((g) => g !== 'implicit'),
    metadata: { urls },
  });
  const spa = await fx.client({
    grantTypes: ['authorization_code', 'refresh_token'],
    isPublic: true,
    metadata: { urls },
  });
  const implicit = await fx.client({ grantTypes: ['implicit'], metadata: { urls } });
  const api = await fx.resource({ scopes: ['read', 'write'] });
  const esApi = await fx.resource({ scopes: ['read', 'write'], alg: 'ES256' });
  const hsSecret = `hs-${randomBytes(24).toString('hex')}`;
  const hsApi = await fx.resource({ scopes: ['read', 'write'], alg: 'HS256', secret: hsSecret });
  for (const c of [web, spa, implicit]) for (const r of [api, esApi, hsApi]) await fx.grant(c, r);

  // token exchange: a tenant, its identity provider (the local issuer) and a client of that tenant
  const tag = randomBytes(4).toString('hex');
  const upstreamClientId = `gatehouse-${tag}`;
  const [tenant] = await fx.ds.rows<{ id: string }>(
    `INSERT INTO tenants (instance_id, name) VALUES ($1, $2) RETURNING id`,
    [await fx.instanceId(), `tenant-${tag}`],
  );
  await fx.ds.rows(
    `INSERT INTO tenant_identity_providers (instance_id, tenant_id, identity_provider, name, issuer, client_id,
                                            jwks_uri, enabled)
     VALUES ($1, $2, 'oidc', $3, $4, $5, $6, true)`,
    [await fx.instanceId(), tenant.id, `idp-${tag}`, issuer.url, upstreamClientId, issuer.jwksUri],
  );
  const exchanger = await fx.client({ grantTypes: ['token_exchange', 'refresh_token'] });
  await fx.ds.exec(`UPDATE clients SET tenant_id = $2, is_global = false WHERE id = $1`, [
    exchanger.id,
    tenant.id,
  ]);
  await fx.grant(exchanger, api);

  const user = await fx.user();
  return {
    h,
    fx,
    issuer,
    upstreamClientId,
    mails,
    user,
    api,
    esApi,
    hsApi,
    hsSecret,
    web,
    spa,
    implicit,
    exchanger,
    close: async () => {
      await h.close();
      await issuer.stop();
      await new Promise<void>((r) => smtp.close(() => r()));
    },
  };
}

/**
 * A person in a browser: opens `url` (an authorization request, or a device verification link already confirmed),
 * signs in on the login page when it is shown and allows on the consent page when it is shown. `url` is where the
 * walk ended (the client's callback), `html` the last page when it stayed on the token server (form_post).
 */
export async function signInAndAllow(
  w: InteropWorld,
  url: string,
  agent = new BrowserAgent(w.h.url),
): Promise<{ url: string; html: string; status: number }> {
  let page = await agent.follow(url);
  if (page.html.includes('name="password"')) {
    page = await agent.follow(actionOf(page.html, w.h.url), {
      csrf: fieldOf(page.html, 'csrf'),
      username: w.user.email,
      password: w.user.password,
    });
  }
  if (page.html.includes('name="decision"')) {
    page = await agent.follow(actionOf(page.html, w.h.url), {
      csrf: fieldOf(page.html, 'csrf'),
      decision: 'allow',
    });
  }
  return { url: page.url, html: page.html, status: page.res.status };
}

/** A person approves a device: opens the verification link, confirms the code, signs in and allows. */
export async function approveDevice(
  w: InteropWorld,
  started: { verification_uri_complete?: string; user_code: string },
): Promise<string> {
  const agent = new BrowserAgent(w.h.url);
  const confirm = await agent.follow(started.verification_uri_complete!);
  const next = await agent.follow(actionOf(confirm.html, w.h.url), {
    xsrf: fieldOf(confirm.html, 'xsrf'),
    user_code: started.user_code,
    confirm: 'yes',
  });
  const login = await agent.follow(actionOf(next.html, w.h.url), {
    csrf: fieldOf(next.html, 'csrf'),
    username: w.user.email,
    password: w.user.password,
  });
  const done = login.html.includes('name="decision"')
    ? await agent.follow(actionOf(login.html, w.h.url), {
        csrf: fieldOf(login.html, 'csrf'),
        decision: 'allow',
      })
    : login;
  return done.html;
}

/** A person at the logout page of an end-session URL: confirms; the URL it ends at (post_logout_redirect_uri). */
export async function confirmLogout(
  w: InteropWorld,
  endSessionUrl: string,
  agent: BrowserAgent,
): Promise<URL> {
  const page = await agent.follow(endSessionUrl);
  const action = /<form[^>]*action="([^"]+)"/.exec(page.html)![1];
  const out = await agent.follow(new URL(action, w.h.url).toString(), {
    xsrf: fieldOf(page.html, 'xsrf'),
    logout: 'yes',
  });
  return new URL(out.url);
}

/** Sends a one-time code by e-mail (POST /passwordless/start) and reads it from the local SMTP server. */
export async function oneTimeCode(w: InteropWorld, client: TestClient = w.web): Promise<string> {
  const before = w.mails.filter((m) => m.to === w.user.email).length;
  const res = await fetch(`${w.h.url}/passwordless/start`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
    },
    body: JSON.stringify({ client_id: client.id, username: w.user.email, options: { send_type: 'code' } }),
  });
  if (res.status !== 200) throw new Error(`passwordless/start answered ${res.status}: ${await res.text()}`);
  await eventually(() => w.mails.filter((m) => m.to === w.user.email).length > before, {
    what: 'the e-mail',
  });
  const mail = w.mails.filter((m) => m.to === w.user.email).at(-1)!;
  return /\b(\d{6})\b/.exec(mail.body)![1];
}

/** The discovery document as served (raw JSON). */
export async function discoveryDocument(w: InteropWorld): Promise<Record<string, unknown>> {
  return (await (await fetch(`${w.h.url}/.well-known/openid-configuration`)).json()) as Record<
    string,
    unknown
  >;
}
