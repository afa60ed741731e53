import * as oidc from 'openid-client';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { BrowserAgent } from './support/browser-agent.js';
import { Fixtures, tokenRequest, type TestClient, type TestUser } from './support/fixtures.js';
import { SoftAuthenticator } from './support/soft-authenticator.js';
import { accountBinding, CHALLENGE_TTL_SEC, type Passkeys } from '../src/mfa/passkeys.js';

/**
 * Passkeys against the real token server and PostgreSQL, with a software authenticator (ES256, attestation none)
 * in place of the browser's: registration and assertions verified by @simplewebauthn/server, the challenges' rules
 * (single use, bound, short-lived), a wrong origin, another user's credential, a counter that goes back, and the
 * second-factor budget through the pages (mfa_failed events, the lock refusing even a right passkey).
 */
const CALLBACK = 'https://rp.example.test/callback';
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

let h: AuthHarness;
let fx: Fixtures;
let passkeys: Passkeys;
let instanceId: string;
let now = Date.now();

beforeAll(async () => {
  h = await startAuth({}, { issuerHost: 'localhost' });
  fx = new Fixtures(h);
  passkeys = h.tokenServer.passkeys;
  h.tokenServer.mfa.clock = () => new Date(now);
  [{ id: instanceId }] = await fx.ds.rows<{ id: string }>(`SELECT id FROM instances WHERE is_default`);
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** A user with a passkey registered from the account page (binding of a made-up session). */
async function withPasskey(): Promise<{ user: TestUser; key: SoftAuthenticator; authenticatorId: string }> {
  const user = await fx.user();
  const key = new SoftAuthenticator(passkeys.origin);
  const binding = accountBinding(`session-${user.id}`);
  const options = await passkeys.registrationOptions({ id: user.id, instanceId, label: user.email }, binding);
  expect(options.rp.id).toBe('localhost');
  expect(options.attestation).toBe('none');
  expect(options.authenticatorSelection).toMatchObject({
    residentKey: 'required',
    userVerification: 'preferred',
  });
  const added = await passkeys.register(
    { id: user.id, instanceId },
    binding,
    key.register(options),
    'Laptop',
  );
  if (typeof added === 'string') throw new Error(`registration refused: ${added}`);
  return { user, key, authenticatorId: added.id };
}

describe('passkeys: registration and assertions', () => {
  it('registers a passkey (stored as a webauthn row) and signs in with it once per challenge', async () => {
    const { user, key, authenticatorId } = await withPasskey();
    const [row] = await fx.ds.rows<Record<string, unknown>>(
      `SELECT type, name, credential_id, sign_count, transports, confirmed_at FROM user_authenticators WHERE id = $1`,
      [authenticatorId],
    );
    expect(row).toMatchObject({
      type: 'webauthn',
      name: 'Laptop',
      credential_id: key.id,
      transports: ['internal'],
    });
    expect(row.confirmed_at).not.toBeNull();

    const options = await passkeys.authenticationOptions(instanceId, 'uid-1');
    expect(options.allowCredentials).toEqual([]); // passwordless: discoverable
    const assertion = key.assert(options);
    const ok = await passkeys.authenticate(instanceId, 'uid-1', assertion);
    expect(ok).toEqual({
      ok: true,
      use: { userId: user.id, authenticatorId, userVerified: true, backupEligible: false },
    });
    // the same assertion again: its challenge is used up
    expect(await passkeys.authenticate(instanceId, 'uid-1', assertion)).toMatchObject({
      ok: false,
      reason: 'no_challenge',
    });
  });

  it('refuses a replayed registration, a challenge of another binding and an expired one', async () => {
    const user = await fx.user();
    const key = new SoftAuthenticator(passkeys.origin);
    const binding = accountBinding(`s-${user.id}`);
    const options = await passkeys.registrationOptions(
      { id: user.id, instanceId, label: user.email },
      binding,
    );
    const answer = key.register(options);
    expect(await passkeys.register({ id: user.id, instanceId }, accountBinding('other'), answer, 'x')).toBe(
      'no_challenge',
    );
    // the wrong binding did not use it up; the right one does, once
    expect(typeof (await passkeys.register({ id: user.id, instanceId }, binding, answer, 'x'))).toBe(
      'object',
    );
    expect(await passkeys.register({ id: user.id, instanceId }, binding, answer, 'x')).toBe('no_challenge');

    const second = await withPasskey();
    const late = await passkeys.authenticationOptions(instanceId, 'uid-late');
    now += (CHALLENGE_TTL_SEC + 1) * 1000;
    expect(await passkeys.authenticate(instanceId, 'uid-late', second.key.assert(late))).toMatchObject({
      ok: false,
      reason: 'no_challenge',
    });
    const other = await passkeys.authenticationOptions(instanceId, 'uid-a');
    expect(await passkeys.authenticate(instanceId, 'uid-b', second.key.assert(other))).toMatchObject({
      ok: false,
      reason: 'no_challenge',
    });
  });

  it('keeps one live challenge per interaction: new options end the last ones', async () => {
    const { key } = await withPasskey();
    const first = await passkeys.authenticationOptions(instanceId, 'uid-twice');
    const second = await passkeys.authenticationOptions(instanceId, 'uid-twice');
    expect(await fx.ds.rows(`SELECT challenge FROM webauthn_challenges WHERE binding = 'uid-twice'`)).toEqual(
      [{ challenge: second.challenge }],
    );
    expect(await passkeys.authenticate(instanceId, 'uid-twice', key.assert(first))).toMatchObject({
      ok: false,
      reason: 'no_challenge',
    });
    const again = await passkeys.authenticationOptions(instanceId, 'uid-twice');
    expect((await passkeys.authenticate(instanceId, 'uid-twice', key.assert(again))).ok).toBe(true);
  });

  it('refuses a wrong origin, at registration and at sign-in', async () => {
    const user = await fx.user();
    const key = new SoftAuthenticator('https://evil.example');
    const binding = accountBinding(`s-${user.id}`);
    const options = await passkeys.registrationOptions(
      { id: user.id, instanceId, label: user.email },
      binding,
    );
    expect(await passkeys.register({ id: user.id, instanceId }, binding, key.register(options), 'x')).toBe(
      'invalid',
    );
    const { key: good, user: owner } = await withPasskey();
    const o = await passkeys.authenticationOptions(instanceId, 'uid-origin');
    expect(
      await passkeys.authenticate(instanceId, 'uid-origin', good.assert(o, { origin: 'http://localhost:1' })),
    ).toMatchObject({ ok: false, reason: 'invalid', userId: owner.id });
  });

  it("refuses another user's credential as the second factor, and a user handle that is not its owner's", async () => {
    const a = await withPasskey();
    const b = await withPasskey();
    const o = await passkeys.authenticationOptions(instanceId, 'uid-wrong', b.user.id);
    expect(o.allowCredentials?.map((c) => c.id)).toEqual([b.key.id]);
    expect(await passkeys.authenticate(instanceId, 'uid-wrong', a.key.assert(o), b.user.id)).toMatchObject({
      ok: false,
      reason: 'wrong_user',
      userId: b.user.id,
    });
    const p = await passkeys.authenticationOptions(instanceId, 'uid-handle');
    const lying = a.key.assert(p, { userHandle: Buffer.from(b.user.id).toString('base64url') });
    expect(await passkeys.authenticate(instanceId, 'uid-handle', lying)).toMatchObject({
      ok: false,
      reason: 'wrong_user',
    });
    // another instance's sign-in does not find the credential
    expect(
      await passkeys.authenticate(
        '00000000-0000-4000-8000-000000000000',
        'uid-x',
        a.key.assert(await passkeys.authenticationOptions(instanceId, 'uid-x')),
      ),
    ).toMatchObject({ ok: false });
  });

  it('refuses a signature counter that does not move on (a cloned authenticator)', async () => {
    const { key } = await withPasskey();
    const o1 = await passkeys.authenticationOptions(instanceId, 'uid-c1');
    expect((await passkeys.authenticate(instanceId, 'uid-c1', key.assert(o1, { counter: 7 }))).ok).toBe(true);
    const o2 = await passkeys.authenticationOptions(instanceId, 'uid-c2');
    expect(await passkeys.authenticate(instanceId, 'uid-c2', key.assert(o2, { counter: 7 }))).toMatchObject({
      ok: false,
      reason: 'counter',
    });
    const o3 = await passkeys.authenticationOptions(instanceId, 'uid-c3');
    expect(await passkeys.authenticate(instanceId, 'uid-c3', key.assert(o3, { counter: 3 }))).toMatchObject({
      ok: false,
      reason: 'counter',
    });
    const o4 = await passkeys.authenticationOptions(instanceId, 'uid-c4');
    expect((await passkeys.authenticate(instanceId, 'uid-c4', key.assert(o4, { counter: 8 }))).ok).toBe(true);
  });
});

describe('passkeys on the pages: the second-factor budget', () => {
  let client: TestClient;
  let config: oidc.Configuration;

  beforeAll(async () => {
    client = await fx.client({
      grantTypes: ['authorization_code'],
      metadata: { urls: { callbacks: [CALLBACK] } },
    });
    await fx.ds.exec(`UPDATE clients SET is_first_party = true WHERE id = $1`, [client.id]);
    config = await oidc.discovery(
      new URL(h.url),
      client.id,
      undefined,
      oidc.ClientSecretBasic(client.secret!),
      { execute: [oidc.allowInsecureRequests] },
    );
  });

  async function toMfaPrompt(user: TestUser) {
    const agent = new BrowserAgent(h.url);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    });
    const login = await agent.follow(url.toString());
    expect(login.html).toContain('id="passkey-signin"');
    const action = /<form method="post" action="([^"]+)"/.exec(login.html)![1];
    const mfa = await agent.follow(new URL(action, h.url).toString(), {
      csrf: csrfOf(login.html),
      username: user.email,
      password: user.password,
    });
    expect(mfa.html).toContain('id="passkey-mfa"');
    const uid = /\/interaction\/([\w-]+)\/passkey"/.exec(mfa.html)![1];
    return { agent, uid, csrf: csrfOf(mfa.html) };
  }

  /** One passkey attempt on the mfa page: its options (JSON), the assertion posted with the form. */
  async function attempt(
    p: Awaited<ReturnType<typeof toMfaPrompt>>,
    key: SoftAuthenticator,
    o: Parameters<SoftAuthenticator['assert']>[1] = {},
  ) {
    const optionsRes = await p.agent.request(`${h.url}/interaction/${p.uid}/passkey-options`, {
      csrf: p.csrf,
    });
    expect(optionsRes.status).toBe(200);
    const { publicKey } = (await optionsRes.json()) as { publicKey: { challenge: string; rpId: string } };
    return p.agent.follow(`${h.url}/interaction/${p.uid}/passkey`, {
      csrf: p.csrf,
      credential: JSON.stringify(key.assert(publicKey, o)),
    });
  }

  it('counts wrong passkeys (mfa_failed) and locks even the right one after five', async () => {
    const { user, key } = await withPasskey();
    const p = await toMfaPrompt(user);
    for (let i = 0; i < 4; i++) {
      const r = await attempt(p, key, { badSignature: true });
      expect(r.res.status).toBe(401);
      expect(r.html).toContain('could not be checked');
    }
    const fifth = await attempt(p, key, { badSignature: true });
    expect(fifth.html).toContain('Too many failed attempts');
    const right = await attempt(p, key);
    expect(right.res.status).toBe(401);
    expect(right.html).toContain('Too many failed attempts');
    await h.tokenServer.events.flush();
    const events = await fx.ds.rows<{ reason: string; details: Record<string, unknown> }>(
      `SELECT reason, details FROM events WHERE user_id = $1 AND reason = 'mfa_failed' ORDER BY created_at, id`,
      [user.id],
    );
    expect(events.map((e) => [e.details.mfa_reason, e.details.factor])).toEqual([
      ['invalid', 'webauthn'],
      ['invalid', 'webauthn'],
      ['invalid', 'webauthn'],
      ['invalid', 'webauthn'],
      ['locked', 'webauthn'],
      ['locked', 'webauthn'],
    ]);
    // the budget is the account's: its TOTP and recovery codes are locked too, and a new interaction as well
    expect(await h.tokenServer.mfa.check(user.id, 'totp', '000000')).toBe('locked');
    const later = await toMfaPrompt(user);
    expect((await attempt(later, key)).res.status).toBe(401);
    // when the lock is over, the right passkey signs in (the callback gets a code)
    now += 16 * 60_000;
    const done = await attempt(later, key);
    expect(done.url).toMatch(/^https:\/\/rp\.example\.test\/callback\?code=/);
    // nothing of the key in the events
    const all = await fx.ds.rows<{ row: string }>(
      `SELECT to_jsonb(e)::text AS row FROM events e WHERE user_id = $1`,
      [user.id],
    );
    const [{ public_key: publicKey }] = await fx.ds.rows<{ public_key: string }>(
      `SELECT public_key FROM user_authenticators WHERE user_id = $1 AND type = 'webauthn'`,
      [user.id],
    );
    for (const e of all) {
      expect(e.row).not.toContain(key.id);
      expect(e.row).not.toContain(publicKey);
    }
  });

  it('a passkey alone without user verification is one factor: the second step is another factor', async () => {
    const { user, key } = await withPasskey();
    const agent = new BrowserAgent(h.url);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    });
    const login = await agent.follow(url.toString());
    const uid = /\/interaction\/([\w-]+)\/passkey"/.exec(login.html)![1];
    const csrf = csrfOf(login.html);
    const optionsRes = await agent.request(`${h.url}/interaction/${uid}/passkey-options`, { csrf });
    const { publicKey } = (await optionsRes.json()) as { publicKey: { challenge: string; rpId: string } };
    const next = await agent.follow(`${h.url}/interaction/${uid}/passkey`, {
      csrf,
      credential: JSON.stringify(key.assert(publicKey, { userVerified: false })),
    });
    // signed in with one factor; the only second factor is that same key: the page enrols an app instead
    expect(next.html).toContain('id="totp-secret"');
    expect(next.html).not.toContain('id="passkey-mfa"');
    await h.tokenServer.events.flush();
    const [signin] = await fx.ds.rows<{ type: string; details: Record<string, unknown> }>(
      `SELECT type, details FROM events WHERE user_id = $1 AND type = 'signin.success'`,
      [user.id],
    );
    expect(signin.details).toMatchObject({ method: 'passkey', factor: 'webauthn' });
  });

  it('serves the one script; only the pages offering passkeys allow it, by their nonce', async () => {
    const js = await fetch(`${h.url}/assets/passkeys.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await js.text()).toContain('navigator.credentials.get');
    const agent = new BrowserAgent(h.url);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    });
    const login = await agent.follow(url.toString());
    const csp = login.res.headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1];
    expect(csp).toContain("connect-src 'self'");
    expect(login.html).toContain(
      `<script type="module" src="/assets/passkeys.js" nonce="${nonce}"></script>`,
    );
    // the passkey form is hidden until the script shows it: without script the page is the password form
    expect(login.html).toMatch(/<form [^>]*id="passkey-signin"[^>]*hidden>/);
    const forgot = await agent.follow(
      new URL(/href="([^"]+\/forgot)"/.exec(login.html)![1], h.url).toString(),
    );
    expect(forgot.res.headers.get('content-security-policy')).not.toContain('script-src');
    expect(forgot.html).not.toContain('<script');
  });

  it('a passwordless assertion of an unknown credential is refused on the login page, nothing counted', async () => {
    const agent = new BrowserAgent(h.url);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    });
    const login = await agent.follow(url.toString());
    const uid = /\/interaction\/([\w-]+)\/passkey"/.exec(login.html)![1];
    const csrf = csrfOf(login.html);
    const optionsRes = await agent.request(`${h.url}/interaction/${uid}/passkey-options`, { csrf });
    const { publicKey } = (await optionsRes.json()) as { publicKey: { challenge: string; rpId: string } };
    const stranger = new SoftAuthenticator(passkeys.origin);
    const r = await agent.follow(`${h.url}/interaction/${uid}/passkey`, {
      csrf,
      credential: JSON.stringify(stranger.assert(publicKey)),
    });
    expect(r.res.status).toBe(401);
    expect(r.html).toContain('This passkey is not known here');
    // without the CSRF token nothing is asked
    expect((await agent.request(`${h.url}/interaction/${uid}/passkey-options`, { csrf: 'x' })).status).toBe(
      403,
    );
  });
});

describe('passkeys on the account page: the rules of adding and removing', () => {
  /** A browser signed in at /account with the password (a fresh sign-in, one factor). */
  async function accountSession(user: TestUser) {
    const agent = new BrowserAgent(h.url);
    const login = await agent.follow(`${h.url}/account`);
    const action = /<form method="post" action="([^"]+\/login)"/.exec(login.html)![1];
    const page = await agent.follow(new URL(action, h.url).toString(), {
      csrf: csrfOf(login.html),
      username: user.email,
      password: user.password,
    });
    expect(page.html).toContain('id="add-passkey"');
    return { agent, csrf: csrfOf(page.html) };
  }
  const options = (a: Awaited<ReturnType<typeof accountSession>>, extra: Record<string, string> = {}) =>
    a.agent.request(`${h.url}/account`, { csrf: a.csrf, action: 'passkey_options', ...extra });

  it('adds one with a recent sign-in or the password; a second needs a session that used a second factor', async () => {
    now = Date.now();
    const user = await fx.user();
    const a = await accountSession(user);
    const key = new SoftAuthenticator(passkeys.origin);
    // recent: no password asked
    const first = await options(a);
    expect(first.status).toBe(200);
    const { publicKey } = (await first.json()) as { publicKey: Parameters<SoftAuthenticator['register']>[0] };
    expect(publicKey.rp.id).toBe('localhost');
    // more than 5 minutes later: the password, checked
    now += 6 * 60_000;
    const late = await options(a);
    expect(late.status).toBe(403);
    expect(((await late.json()) as { error: string }).error).toContain('more than 5 minutes');
    expect((await options(a, { current_password: 'wrong' })).status).toBe(403);
    const withPassword = await options(a, { current_password: user.password });
    expect(withPassword.status).toBe(200);
    // the first options' challenge is ended (a newer one of this session) and dead (5 minutes); the last one's
    // answer registers, once
    const expired = await a.agent.follow(`${h.url}/account`, {
      csrf: a.csrf,
      action: 'passkey_register',
      name: 'Desk key',
      credential: JSON.stringify(key.register(publicKey)),
    });
    expect(expired.res.status).toBe(400);
    const fresh = ((await withPassword.json()) as { publicKey: typeof publicKey }).publicKey;
    const answer = JSON.stringify(key.register(fresh));
    const added = await a.agent.request(`${h.url}/account`, {
      csrf: a.csrf,
      action: 'passkey_register',
      name: 'Desk key',
      credential: answer,
    });
    expect(added.status).toBe(303);
    expect(added.headers.get('location')).toContain('done=passkeyAdded');
    const again = await a.agent.follow(`${h.url}/account`, {
      csrf: a.csrf,
      action: 'passkey_register',
      name: 'Desk key',
      credential: answer,
    });
    expect(again.res.status).toBe(400);
    expect(again.html).toContain('The passkey could not be added');
    expect(
      await fx.ds.rows(`SELECT name FROM user_authenticators WHERE user_id = $1 AND type = 'webauthn'`, [
        user.id,
      ]),
    ).toEqual([{ name: 'Desk key' }]);
    // now the person has a second factor and this session signed in with the password only: no more keys, no
    // removal, until a sign-in that used one
    const more = await options(a, { current_password: user.password });
    expect(more.status).toBe(403);
    expect(((await more.json()) as { error: string }).error).toContain('without a second step');
    const [{ id }] = await fx.ds.rows<{ id: string }>(
      `SELECT id FROM user_authenticators WHERE user_id = $1 AND type = 'webauthn'`,
      [user.id],
    );
    const removal = await a.agent.follow(`${h.url}/account`, {
      csrf: a.csrf,
      action: 'remove_passkey',
      passkey: id,
      current_password: user.password,
    });
    expect(removal.res.status).toBe(400);
    expect(removal.html).toContain('without a second step');
    expect(removal.html).toContain('id="passkey-step-up"');
    // renaming needs neither
    const renamed = await a.agent.request(`${h.url}/account`, {
      csrf: a.csrf,
      action: 'rename_passkey',
      passkey: id,
      name: 'Old desk key',
    });
    expect(renamed.status).toBe(303);
    // another person's passkey id is not found
    const other = await withPasskey();
    const foreign = await a.agent.follow(`${h.url}/account`, {
      csrf: a.csrf,
      action: 'rename_passkey',
      passkey: other.authenticatorId,
      name: 'mine now',
    });
    expect(foreign.res.status).toBe(400);
    expect(
      (
        await fx.ds.one<{ name: string }>(`SELECT name FROM user_authenticators WHERE id = $1`, [
          other.authenticatorId,
        ])
      )?.name,
    ).toBe('Laptop');
  });
});

describe('passkeys and the grants without a page', () => {
  it('a user whose only second factor is a passkey gets 403 mfa_required without an mfa_token', async () => {
    const client = await fx.client({ grantTypes: ['password'] });
    const { user } = await withPasskey();
    const r = await tokenRequest(
      h.url,
      { grant_type: 'password', username: user.email, password: user.password, scope: 'openid' },
      { basic: { id: client.id, secret: client.secret! } },
    );
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'mfa_required' });
    expect(r.body.mfa_token).toBeUndefined();
    expect(r.body.id_token).toBeUndefined();
  });
});
