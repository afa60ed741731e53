import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as oidc from 'openid-client';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, type TestClient, type TestUser } from './support/fixtures.js';
import { ACR_MFA, ACR_PWD } from '../src/mfa/second-factors.js';
import { totpCode, totpStep } from '../src/mfa/totp.js';

/**
 * Passkeys in a real browser (Debian's Chromium, playwright-core) with Chromium's virtual authenticator (DevTools
 * protocol `WebAuthn.addVirtualAuthenticator` through a CDP session: CTAP2, internal, resident keys, user
 * verification): a passkey is added on the account page, then signs in as the second factor after the password,
 * then alone (no user name, no password), each time through a relying party that exchanges the code and reads the
 * ID token's `amr` and `acr` (openid-client checks the token). Renamed and removed on the account page; the removal
 * shows at the next sign-in. The issuer is `http://localhost:<port>` (an IP address is no RP ID). Screenshots under
 * test-artifacts/browser/ (`passkey-*`), in English and Mongolian.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const shots = path.join(root, 'test-artifacts', 'browser');

/** A relying party: /login?ui_locales=&acr_values= starts code + PKCE; /callback shows sub, acr and amr. */
async function relyingParty(issuer: string, client: TestClient) {
  const pending = new Map<string, string>();
  let config: oidc.Configuration | undefined;
  let base = '';
  const server = http.createServer((req, res) => {
    void (async () => {
      config ??= await oidc.discovery(
        new URL(issuer),
        client.id,
        undefined,
        oidc.ClientSecretBasic(client.secret!),
        { execute: [oidc.allowInsecureRequests] },
      );
      const url = new URL(req.url ?? '/', base);
      if (url.pathname === '/login') {
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        pending.set(state, verifier);
        const extra: Record<string, string> = {};
        for (const k of ['ui_locales', 'acr_values']) {
          const v = url.searchParams.get(k);
          if (v) extra[k] = v;
        }
        const to = oidc.buildAuthorizationUrl(config, {
          redirect_uri: `${base}/callback`,
          scope: 'openid email',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
          ...extra,
        });
        res.writeHead(302, { location: to.toString() }).end();
        return;
      }
      if (url.pathname === '/callback') {
        const state = url.searchParams.get('state') ?? '';
        const tokens = await oidc.authorizationCodeGrant(config, url, {
          pkceCodeVerifier: pending.get(state),
          expectedState: state,
        });
        const claims = tokens.claims()!;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
          `<!doctype html><html lang="en"><title>RP</title><h1 id="sub">${claims.sub}</h1>
           <p id="acr">${String(claims.acr)}</p><p id="amr">${JSON.stringify(claims.amr)}</p></html>`,
        );
        return;
      }
      res.writeHead(404).end();
    })().catch((err: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String((err as Error).stack ?? err));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, close: () => new Promise<void>((r) => server.close(() => r())) };
}

(available ? describe : describe.skip)('passkeys in Chromium', () => {
  let h: AuthHarness;
  let fx: Fixtures;
  let browser: Browser;
  let rp: Awaited<ReturnType<typeof relyingParty>>;
  /** A relying party whose client turns the second factor off. */
  let offRp: Awaited<ReturnType<typeof relyingParty>>;
  let user: TestUser;
  let ctx: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  /** The virtual authenticator's id (CDP). */
  let authenticatorId = '';

  const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  const notices = (email: string) =>
    fx.ds.rows<{ kind: string }>(
      `SELECT kind FROM delivery_outbox WHERE recipient = $1 ORDER BY created_at`,
      [email],
    );
  const claims = async () => ({
    sub: await page.textContent('#sub'),
    acr: await page.textContent('#acr'),
    amr: JSON.parse((await page.textContent('#amr'))!) as string[],
  });
  /** A new sign-in in the same browser (and the same authenticator): the token server's cookies go. */
  const signedOut = () => ctx.clearCookies();
  const passwordForm = async () => {
    await page.fill('input[name="username"]', user.email);
    await page.fill('input[name="password"]', user.password);
    await page.click('form[action$="/login"] button[type="submit"]');
  };

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    h = await startAuth({}, { issuerHost: 'localhost' });
    fx = new Fixtures(h);
    const client = await fx.client({ grantTypes: ['authorization_code'] });
    rp = await relyingParty(h.url, client);
    await fx.ds.exec(`UPDATE clients SET client_metadata = $2::jsonb, is_first_party = true WHERE id = $1`, [
      client.id,
      JSON.stringify({ grant_types: ['authorization_code'], urls: { callbacks: [`${rp.base}/callback`] } }),
    ]);
    const offClient = await fx.client({ grantTypes: ['authorization_code'] });
    offRp = await relyingParty(h.url, offClient);
    await fx.ds.exec(
      `UPDATE clients SET client_metadata = $2::jsonb, is_first_party = true, mfa = 'off' WHERE id = $1`,
      [
        offClient.id,
        JSON.stringify({
          grant_types: ['authorization_code'],
          urls: { callbacks: [`${offRp.base}/callback`] },
        }),
      ],
    );
    user = await fx.user();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
      ],
    });
    ctx = await browser.newContext({ locale: 'en-US' });
    page = await ctx.newPage();
    cdp = await ctx.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    ({ authenticatorId } = (await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    })) as { authenticatorId: string });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await offRp?.close();
    await h?.close();
  });

  it('adds a passkey on the account page and renames it', async () => {
    await page.goto(`${h.url}/account`);
    // the login page offers the passkey once its script found WebAuthn
    await page.waitForSelector('#passkey-signin:not([hidden])');
    await shot('passkey-1-login-en');
    await passwordForm();
    await page.waitForSelector('#signed-in-as');
    expect(await page.textContent('#passkeys')).toContain('No passkey');
    await page.waitForSelector('#add-passkey:not([hidden])');
    await shot('passkey-2-account-none-en');
    await page.goto(`${h.url}/account?ui_locales=mn`);
    await page.waitForSelector('#add-passkey:not([hidden])');
    await shot('passkey-2-account-none-mn');

    await page.goto(`${h.url}/account`);
    await page.waitForSelector('#add-passkey:not([hidden])');
    await page.fill('#passkey-name', 'Work laptop');
    await page.click('#add-passkey button');
    await page.waitForSelector('#account-done');
    expect(await page.textContent('#account-done')).toContain('The passkey is added');
    expect(await page.locator('.passkey-name').allTextContents()).toEqual(['Work laptop']);
    await shot('passkey-3-added-en');
    await page.goto(`${h.url}/account?done=passkeyAdded&ui_locales=mn`);
    await page.waitForSelector('#account-done');
    await shot('passkey-3-added-mn');

    const rows = await fx.ds.rows<{ type: string; name: string; transports: string[]; sign_count: string }>(
      `SELECT type, name, transports, sign_count FROM user_authenticators WHERE user_id = $1`,
      [user.id],
    );
    expect(rows).toEqual([
      { type: 'webauthn', name: 'Work laptop', transports: ['internal'], sign_count: expect.any(String) },
    ]);
    const { credentials } = (await cdp.send('WebAuthn.getCredentials', {
      authenticatorId,
    })) as { credentials: { isResidentCredential: boolean; rpId: string }[] };
    expect(credentials).toEqual([expect.objectContaining({ isResidentCredential: true, rpId: 'localhost' })]);

    // another passkey from this one-factor session (a password sign-in, before any factor): refused by the server,
    // the page says why (a second step first) and nothing is added
    await page.goto(`${h.url}/account?ui_locales=mn`);
    await page.waitForSelector('#add-passkey:not([hidden])');
    await page.click('#add-passkey button');
    await page.waitForSelector('#passkey-add-error:not([hidden])');
    await shot('passkey-4-add-refused-mn');
    await page.goto(`${h.url}/account`);
    await page.waitForSelector('#add-passkey:not([hidden])');
    await page.click('#add-passkey button');
    await page.waitForSelector('#passkey-add-error:not([hidden])');
    expect(await page.textContent('#passkey-add-error')).toContain('without a second step');
    await shot('passkey-4-add-refused-en');
    expect(await fx.ds.rows(`SELECT 1 FROM user_authenticators WHERE user_id = $1`, [user.id])).toHaveLength(
      1,
    );

    // renamed (no script needed)
    await page.fill('li[data-passkey] input[name="name"]', 'Laptop (work)');
    await page.click('li[data-passkey] button:not([form])');
    await page.waitForSelector('#account-done');
    expect(await page.locator('.passkey-name').allTextContents()).toEqual(['Laptop (work)']);
    await shot('passkey-5-renamed-en');
    await page.goto(`${h.url}/account?done=passkeyRenamed&ui_locales=mn`);
    await page.waitForSelector('#account-done');
    await shot('passkey-5-renamed-mn');
  });

  it('signs in with the password and the passkey as the second factor (amr pwd, hwk, user, mfa)', async () => {
    for (const lang of ['en', 'mn'] as const) {
      await signedOut();
      await page.goto(`${rp.base}/login${lang === 'mn' ? '?ui_locales=mn' : ''}`);
      await page.waitForSelector('#passkey-signin:not([hidden])');
      if (lang === 'mn') await shot('passkey-1-login-mn');
      await passwordForm();
      await page.waitForSelector('#passkey-mfa:not([hidden])');
      await shot(`passkey-6-mfa-${lang}`);
      await page.click('#passkey-mfa button');
      await page.waitForSelector('#acr');
      expect(await claims()).toEqual({ sub: user.id, acr: ACR_MFA, amr: ['pwd', 'hwk', 'user', 'mfa'] });
    }
  });

  it('signs in with the passkey alone, no user name or password (amr hwk, user, mfa)', async () => {
    await signedOut();
    await page.goto(`${rp.base}/login`);
    await page.waitForSelector('#passkey-signin:not([hidden])');
    await page.click('#passkey-signin button');
    await page.waitForSelector('#acr');
    expect(await claims()).toEqual({ sub: user.id, acr: ACR_MFA, amr: ['hwk', 'user', 'mfa'] });
    const used = await fx.ds.one<{ last_used_at: Date | null; sign_count: string }>(
      `SELECT last_used_at, sign_count FROM user_authenticators WHERE user_id = $1`,
      [user.id],
    );
    expect(used?.last_used_at).not.toBeNull();
    expect(Number(used?.sign_count)).toBeGreaterThan(0);
  });

  it('step-up: acr_values asks a password-only session for its passkey, without the password again', async () => {
    await signedOut();
    await page.goto(`${offRp.base}/login`);
    await page.waitForSelector('input[name="username"]');
    await passwordForm();
    await page.waitForSelector('#acr');
    expect(await claims()).toEqual({ sub: user.id, acr: ACR_PWD, amr: ['pwd'] });
    await page.goto(`${rp.base}/login?acr_values=${encodeURIComponent(ACR_MFA)}`);
    await page.waitForSelector('#passkey-mfa:not([hidden])');
    expect(await page.locator('input[name="password"]').count()).toBe(0);
    await page.click('#passkey-mfa button');
    await page.waitForSelector('#acr');
    expect(await claims()).toEqual({ sub: user.id, acr: ACR_MFA, amr: ['pwd', 'hwk', 'user', 'mfa'] });
    // the session now holds the second factor: step-up again asks nothing
    await page.goto(`${rp.base}/login?acr_values=${encodeURIComponent(ACR_MFA)}`);
    await page.waitForSelector('#acr');
    expect((await claims()).acr).toBe(ACR_MFA);
    // this session may add a passkey, but the same authenticator is excluded: the browser refuses, nothing added
    for (const lang of ['en', 'mn'] as const) {
      await page.goto(`${h.url}/account${lang === 'mn' ? '?ui_locales=mn' : ''}`);
      await page.waitForSelector('#add-passkey:not([hidden])');
      await page.click('#add-passkey button');
      await page.waitForSelector('#passkey-add-error:not([hidden])');
      await shot(`passkey-4-add-excluded-${lang}`);
    }
    expect(await page.textContent('#passkey-add-error')).toContain('passkey аль хэдийн байна');
    expect(await fx.ds.rows(`SELECT 1 FROM user_authenticators WHERE user_id = $1`, [user.id])).toHaveLength(
      1,
    );
  });

  it('offers the app and a passkey side by side on the two-step page', async () => {
    const both = await fx.user();
    const pending = await h.tokenServer.mfa.startEnrolment({
      id: both.id,
      instanceId: await instanceOf(both),
    });
    const confirmed = await h.tokenServer.mfa.confirmEnrolment(
      { id: both.id, instanceId: await instanceOf(both) },
      pending.id,
      totpCode(pending.secret, totpStep(new Date())),
    );
    expect(confirmed).not.toBe('wrong_code');
    // a passkey row as a registration leaves it (this page only lists what the user has)
    await fx.ds.exec(
      `INSERT INTO user_authenticators (instance_id, user_id, type, name, credential_id, public_key, sign_count,
                                        confirmed_at)
       SELECT instance_id, id, 'webauthn', 'Phone', 'cred-' || id, 'pk', 0, now() FROM users WHERE id = $1`,
      [both.id],
    );
    const other = await browser.newContext({ locale: 'en-US' });
    const p = await other.newPage();
    for (const lang of ['en', 'mn'] as const) {
      await other.clearCookies();
      await p.goto(`${rp.base}/login${lang === 'mn' ? '?ui_locales=mn' : ''}`);
      await p.fill('input[name="username"]', both.email);
      await p.fill('input[name="password"]', both.password);
      await p.click('form[action$="/login"] button[type="submit"]');
      await p.waitForSelector('#passkey-mfa:not([hidden])');
      expect(await p.locator('input[name="otp"]').count()).toBe(1);
      await p.screenshot({
        path: path.join(shots, `passkey-9-mfa-app-and-passkey-${lang}.png`),
        fullPage: true,
      });
    }
    await other.close();
  });

  const instanceOf = async (u: TestUser) =>
    (await fx.ds.one<{ instance_id: string }>(`SELECT instance_id FROM users WHERE id = $1`, [u.id]))!
      .instance_id;

  it('removes the passkey on the account page; the next sign-in no longer knows it', async () => {
    // this browser's session signed in with the passkey a moment ago (multi-factor, recent)
    await page.goto(`${h.url}/account`);
    await page.waitForSelector('li[data-passkey]');
    await page.click('li[data-passkey] button[form="remove-passkey"]');
    await page.waitForSelector('#account-done');
    expect(await page.textContent('#account-done')).toContain('The passkey is removed');
    expect(await page.textContent('#passkeys')).toContain('No passkey');
    await shot('passkey-7-removed-en');
    await page.goto(`${h.url}/account?done=passkeyRemoved&ui_locales=mn`);
    await page.waitForSelector('#account-done');
    await shot('passkey-7-removed-mn');
    expect(await fx.ds.rows(`SELECT 1 FROM user_authenticators WHERE user_id = $1`, [user.id])).toEqual([]);
    expect((await notices(user.email)).map((n) => n.kind)).toEqual(['passkey-removed']);

    // the password alone now (policy optional, no factor left): no second step
    await signedOut();
    await page.goto(`${rp.base}/login`);
    await page.waitForSelector('input[name="username"]');
    await passwordForm();
    await page.waitForSelector('#acr');
    expect(await claims()).toEqual({ sub: user.id, acr: ACR_PWD, amr: ['pwd'] });

    // the browser still holds the key: the token server no longer knows it
    for (const lang of ['en', 'mn'] as const) {
      await signedOut();
      await page.goto(`${rp.base}/login${lang === 'mn' ? '?ui_locales=mn' : ''}`);
      await page.waitForSelector('#passkey-signin:not([hidden])');
      await page.click('#passkey-signin button');
      await page.waitForSelector('#passkey-error:not([hidden])');
      expect(new URL(page.url()).pathname).toMatch(/^\/interaction\//);
      await shot(`passkey-8-unknown-${lang}`);
      if (lang === 'en') expect(await page.textContent('#passkey-error')).toContain('not known here');
    }

    await h.tokenServer.events.flush();
    const events = await fx.ds.rows<{ type: string; details: Record<string, unknown>; row: string }>(
      `SELECT type, details, to_jsonb(e)::text AS row FROM events e WHERE user_id = $1 ORDER BY created_at, id`,
      [user.id],
    );
    expect(
      events.filter((e) => e.type.startsWith('mfa.')).map((e) => [e.type, e.details.authenticator_type]),
    ).toEqual([
      ['mfa.enrolled', 'webauthn'],
      ['mfa.removed', 'webauthn'],
    ]);
    // no key material in any event
    const { credentials } = (await cdp.send('WebAuthn.getCredentials', {
      authenticatorId,
    })) as { credentials: { credentialId: string }[] };
    const id = Buffer.from(credentials[0].credentialId, 'base64').toString('base64url');
    for (const e of events) expect(e.row).not.toContain(id);
  });
});
