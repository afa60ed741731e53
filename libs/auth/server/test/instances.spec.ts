import { randomBytes, randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { hashPassword, sealedIn, seedInstance } from '@gatehouse/identity-data';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { BrowserAgent as Agent } from './support/browser-agent.js';
import { Fixtures, type TestUser } from './support/fixtures.js';

/**
 * Instances are closed worlds at the token server too: a browser session of one instance's user signs in nobody at
 * a client of another instance. Instance B is seeded as POST /instances seeds it (seedInstance).
 */
const CALLBACK = 'https://rp.example.test/callback';
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const actionOf = (html: string) => /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';

let h: AuthHarness;
let fx: Fixtures;
let configA: oidc.Configuration;
let configB: oidc.Configuration;
let userA: TestUser;
let userB: { email: string; password: string };

/** A first-party code-flow client of `instanceId` (no consent page for OIDC scopes alone). */
async function codeClient(instanceId: string): Promise<oidc.Configuration> {
  const id = randomUUID();
  const secret = `s-${randomBytes(16).toString('hex')}`;
  await fx.ds.exec(
    `INSERT INTO clients (id, instance_id, client_name, client_secret_enc, client_metadata, is_first_party)
     VALUES ($1, $2, $3, $4, $5::jsonb, true)`,
    [
      id,
      instanceId,
      `code-${id}`,
      fx.box.encrypt(secret, sealedIn.clientSecret(id)),
      JSON.stringify({ grant_types: ['authorization_code'], urls: { callbacks: [CALLBACK] } }),
    ],
  );
  return oidc.discovery(new URL(h.url), id, undefined, oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests],
  });
}

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  configA = await codeClient(await fx.instanceId());
  userA = await fx.user();
  const b = await fx.ds.transaction((tx) => seedInstance(tx, { name: `b-${randomUUID()}` }, fx.box));
  configB = await codeClient(b.instanceId);
  userB = { email: userA.email, password: `pw-${randomBytes(6).toString('hex')}` };
  await fx.ds.exec(
    `INSERT INTO users (instance_id, user_email, password_hash, email_verified) VALUES ($1, $2, $3, true)`,
    [b.instanceId, userB.email, await hashPassword(userB.password)],
  );
});
afterAll(async () => {
  await h?.close();
});

async function authorize(config: oidc.Configuration, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  return oidc
    .buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
      ...extra,
    })
    .toString();
}

async function signIn(agent: Agent, config: oidc.Configuration, who: { email: string; password: string }) {
  const page = await agent.follow(await authorize(config));
  const done = await agent.follow(new URL(actionOf(page.html), h.url).toString(), {
    csrf: csrfOf(page.html),
    username: who.email,
    password: who.password,
  });
  return new URL(done.url);
}

describe('sessions stay in their instance', () => {
  it("a session of instance A's user signs in nobody at instance B's client; B's own user signs in there", async () => {
    const agent = new Agent(h.url);
    expect((await signIn(agent, configA, userA)).searchParams.get('code')).toEqual(expect.any(String));
    // The session works silently at A's client ...
    const silentA = await agent.follow(await authorize(configA, { prompt: 'none' }));
    expect(new URL(silentA.url).searchParams.get('code')).toEqual(expect.any(String));
    // ... but at B's client it is no login at all: login_required, and without prompt=none the login page.
    const silentB = await agent.follow(await authorize(configB, { prompt: 'none' }));
    expect(new URL(silentB.url).searchParams.get('error')).toBe('login_required');
    const page = await agent.follow(await authorize(configB));
    expect(page.res.status).toBe(200);
    expect(page.html).toContain('name="password"');

    // A's user's credentials are no login at B's client (same e-mail, A's password) ...
    const wrong = await agent.follow(new URL(actionOf(page.html), h.url).toString(), {
      csrf: csrfOf(page.html),
      username: userA.email,
      password: userA.password,
    });
    expect(wrong.res.status).toBe(401);
    // ... B's user of that e-mail signs in there, and then B's client gets codes silently.
    const other = new Agent(h.url);
    expect((await signIn(other, configB, userB)).searchParams.get('code')).toEqual(expect.any(String));
    const silent = await other.follow(await authorize(configB, { prompt: 'none' }));
    expect(new URL(silent.url).searchParams.get('code')).toEqual(expect.any(String));
  });
});
