import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as oidc from 'openid-client';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, type TestClient, type TestUser } from './support/fixtures.js';
import { totpCode, totpStep } from '../src/mfa/totp.js';
import { ACR_MFA, ACR_PWD } from '../src/mfa/second-factors.js';

/**
 * The second factor in a real browser (Debian's Chromium, playwright-core): enrolment at the next sign-in when the
 * policy requires it (QR page, the secret read from the page, the app's code computed here), sign-in with the
 * app's code and with a recovery code, and step-up by `acr_values`. Every new page is kept as a screenshot under
 * test-artifacts/browser/ (`mfa-*`), in English and Mongolian.
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
        {
          execute: [oidc.allowInsecureRequests],
        },
      );
      const url = new URL(req.url ?? '/', base);
      if (url.pathname === '/login') {
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        pending.set(state, verifier);
        const extra: Record<string, string> = {};
        for (const k of ['ui_locales', 'acr_values', 'prompt']) {
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
      if (url.pathname === '/callback' && url.searchParams.get('error')) {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(`<h1 id="error">${url.searchParams.get('error')}</h1>`);
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

(available ? describe : describe.skip)('second factor in Chromium', () => {
  let h: AuthHarness;
  let fx: Fixtures;
  let browser: Browser;
  /** An RP whose client requires MFA, and one whose client leaves the instance's default (optional). */
  let required: Awaited<ReturnType<typeof relyingParty>>;
  let optional: Awaited<ReturnType<typeof relyingParty>>;
  /** An RP whose client turns the second factor off. */
  let off: Awaited<ReturnType<typeof relyingParty>>;
  /** The second factors' clock, moved on one time step before each code. */
  let now = Date.now();
  const nextCode = (secret: string) => {
    now += 30_000;
    return totpCode(secret, totpStep(new Date(now)));
  };

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

  async function rpClient(mfa: string | null) {
    const client = await fx.client({ grantTypes: ['authorization_code'] });
    const rp = await relyingParty(h.url, client);
    await fx.ds.exec(
      `UPDATE clients SET client_metadata = $2::jsonb, is_first_party = true, mfa = $3 WHERE id = $1`,
      [
        client.id,
        JSON.stringify({ grant_types: ['authorization_code'], urls: { callbacks: [`${rp.base}/callback`] } }),
        mfa,
      ],
    );
    return rp;
  }

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    h = await startAuth();
    fx = new Fixtures(h);
    h.tokenServer.mfa.clock = () => new Date(now);
    required = await rpClient('required');
    optional = await rpClient(null);
    off = await rpClient('off');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await required?.close();
    await optional?.close();
    await off?.close();
    await h?.close();
  });

  /** A fresh browser (no session) at the RP's /login, through the password form. */
  async function signIn(rp: { base: string }, user: TestUser, query = '') {
    const ctx = await browser.newContext({ locale: 'en-US' });
    const page = await ctx.newPage();
    await page.goto(`${rp.base}/login${query}`);
    await page.fill('input[name="username"]', user.email);
    await page.fill('input[name="password"]', user.password);
    await page.keyboard.press('Enter');
    return { ctx, page };
  }

  /** The secret shown on the enrolment page (grouped by four for typing). */
  const shownSecret = async (page: Page) => (await page.textContent('#totp-secret'))!.replace(/\s/g, '');

  async function enrolOnPage(page: Page, lang: 'en' | 'mn'): Promise<{ secret: string; codes: string[] }> {
    await page.waitForSelector('#totp-secret');
    expect(await page.locator('svg.qr path').count()).toBeGreaterThan(0);
    await shot(page, `mfa-1-enrol-${lang}`);
    const secret = await shownSecret(page);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await page.fill('input[name="otp"]', '000000' === nextCode(secret) ? '111111' : '000000');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[role="alert"]');
    await shot(page, `mfa-2-enrol-error-${lang}`);
    // the same secret again after the error
    expect(await shownSecret(page)).toBe(secret);
    await page.fill('input[name="otp"]', nextCode(secret));
    await page.keyboard.press('Enter');
    await page.waitForSelector('#recovery-codes');
    await shot(page, `mfa-3-recovery-codes-${lang}`);
    const codes = (await page.locator('#recovery-codes code').allTextContents()).map((c) => c.trim());
    expect(codes).toHaveLength(10);
    await page.click('#continue');
    await page.waitForSelector('#acr');
    return { secret, codes };
  }

  it('mfa: required enrols at the next sign-in from the QR page, then signs in with the app’s code', async () => {
    const user = await fx.user();
    const first = await signIn(required, user);
    const { secret } = await enrolOnPage(first.page, 'en');
    expect(await first.page.textContent('#sub')).toBe(user.id);
    expect(await first.page.textContent('#acr')).toBe(ACR_MFA);
    expect(JSON.parse((await first.page.textContent('#amr'))!)).toEqual(['pwd', 'otp', 'mfa']);
    // the same session at the RP again: single sign-on keeps the second factor, no page
    await first.page.goto(`${required.base}/login`);
    await first.page.waitForSelector('#acr');
    expect(await first.page.textContent('#acr')).toBe(ACR_MFA);
    await first.ctx.close();

    const next = await signIn(required, user);
    await next.page.waitForSelector('input[name="otp"]');
    await shot(next.page, 'mfa-4-code-en');
    await next.page.fill('input[name="otp"]', '12345x');
    await next.page.keyboard.press('Enter');
    await next.page.waitForSelector('[role="alert"]');
    expect(await next.page.textContent('[role="alert"]')).toContain('not right');
    await shot(next.page, 'mfa-5-code-error-en');
    const code = nextCode(secret);
    await next.page.fill('input[name="otp"]', code);
    await next.page.keyboard.press('Enter');
    await next.page.waitForSelector('#acr');
    expect(await next.page.textContent('#acr')).toBe(ACR_MFA);
    await next.ctx.close();

    // the same code (time step) again is refused
    const again = await signIn(required, user);
    await again.page.waitForSelector('input[name="otp"]');
    await again.page.fill('input[name="otp"]', code);
    await again.page.keyboard.press('Enter');
    await again.page.waitForSelector('[role="alert"]');
    expect(await again.page.textContent('[role="alert"]')).toContain('already used');
    await shot(again.page, 'mfa-6-code-reused-en');
    // the reused code was the first failure of the budget: four more lock the second step, the right code too
    for (let i = 0; i < 4; i++) {
      await again.page.fill('input[name="otp"]', '000000' === nextCode(secret) ? '111111' : '000000');
      await again.page.keyboard.press('Enter');
      await again.page.waitForSelector('[role="alert"]');
    }
    expect(await again.page.textContent('[role="alert"]')).toContain('Too many wrong codes');
    await again.page.fill('input[name="otp"]', nextCode(secret));
    await again.page.keyboard.press('Enter');
    await again.page.waitForSelector('[role="alert"]');
    expect(await again.page.textContent('[role="alert"]')).toContain('Too many wrong codes');
    await shot(again.page, 'mfa-9-locked-en');
    await again.ctx.close();
    await h.tokenServer.events.flush();
    const events = await fx.ds.rows<{ type: string; reason: string | null; mfa_reason: string | null }>(
      `SELECT type, reason, details ->> 'mfa_reason' AS mfa_reason FROM events
        WHERE user_id = $1 AND (type = 'mfa.enrolled' OR reason = 'mfa_failed') ORDER BY created_at, id`,
      [user.id],
    );
    expect(events.map((e) => e.mfa_reason ?? e.type)).toEqual([
      'mfa.enrolled',
      'wrong_code',
      'reused_code',
      'wrong_code',
      'wrong_code',
      'wrong_code',
      'locked',
      'locked',
    ]);
  }, 90_000);

  it('a recovery code signs in once; its second use is refused', async () => {
    const user = await fx.user();
    const first = await signIn(required, user);
    const { codes } = await enrolOnPage(first.page, 'en');
    await first.ctx.close();

    const viaRecovery = async () => {
      const s = await signIn(required, user);
      await s.page.waitForSelector('#mfa-switch');
      await s.page.click('#mfa-switch');
      await s.page.waitForSelector('input[name="recovery_code"]');
      return s;
    };
    const s = await viaRecovery();
    await shot(s.page, 'mfa-7-recovery-en');
    await s.page.fill('input[name="recovery_code"]', codes[0]);
    await s.page.keyboard.press('Enter');
    await s.page.waitForSelector('#acr');
    expect(await s.page.textContent('#acr')).toBe(ACR_MFA);
    await s.ctx.close();

    const t = await viaRecovery();
    await t.page.fill('input[name="recovery_code"]', codes[0]);
    await t.page.keyboard.press('Enter');
    await t.page.waitForSelector('[role="alert"]');
    expect(await t.page.textContent('[role="alert"]')).toContain('already used');
    await shot(t.page, 'mfa-8-recovery-reused-en');
    // back to the app's code form
    await t.page.click('#mfa-switch');
    await t.page.waitForSelector('input[name="otp"]');
    await t.ctx.close();
  }, 90_000);

  it('step-up: acr_values asking for the MFA acr enrols a one-factor session (optional policy), then asks for the code', async () => {
    const user = await fx.user();
    const s = await signIn(optional, user);
    await s.page.waitForSelector('#acr');
    expect(await s.page.textContent('#acr')).toBe(ACR_PWD);
    expect(JSON.parse((await s.page.textContent('#amr'))!)).toEqual(['pwd']);
    // the same browser, a request for the MFA acr: no password asked again, the enrolment page
    await s.page.goto(`${optional.base}/login?acr_values=${encodeURIComponent(ACR_MFA)}`);
    const { secret } = await enrolOnPage(s.page, 'en');
    expect(await s.page.textContent('#acr')).toBe(ACR_MFA);
    await s.ctx.close();

    // with an authenticator now, the optional policy asks for it at every sign-in
    const next = await signIn(optional, user);
    await next.page.waitForSelector('input[name="otp"]');
    await next.page.fill('input[name="otp"]', nextCode(secret));
    await next.page.keyboard.press('Enter');
    await next.page.waitForSelector('#acr');
    expect(await next.page.textContent('#acr')).toBe(ACR_MFA);
    // prompt=none cannot show the second step: interaction_required
    await next.ctx.close();
    const other = await fx.user();
    const one = await signIn(optional, other);
    await one.page.waitForSelector('#acr');
    await one.page.goto(`${optional.base}/login?prompt=none&acr_values=${encodeURIComponent(ACR_MFA)}`);
    await one.page.waitForSelector('#error');
    expect(await one.page.textContent('#error')).toBe('interaction_required');
    await one.ctx.close();
  }, 90_000);

  it('step-up for a user with an app: a session of a client whose policy is off gives the second factor elsewhere', async () => {
    const user = await fx.user();
    const first = await signIn(required, user);
    const { secret } = await enrolOnPage(first.page, 'en');
    await first.ctx.close();
    // policy off: no second step, even with acr_values asking for it; the one-factor acr
    const s = await signIn(off, user, `?acr_values=${encodeURIComponent(ACR_MFA)}`);
    await s.page.waitForSelector('#acr');
    expect(await s.page.textContent('#acr')).toBe(ACR_PWD);
    // the same session at another client: the app's code only, no password
    await s.page.goto(`${optional.base}/login?acr_values=${encodeURIComponent(ACR_MFA)}`);
    await s.page.waitForSelector('input[name="otp"]');
    expect(await s.page.locator('input[name="password"]').count()).toBe(0);
    await s.page.fill('input[name="otp"]', nextCode(secret));
    await s.page.keyboard.press('Enter');
    await s.page.waitForSelector('#acr');
    expect(await s.page.textContent('#acr')).toBe(ACR_MFA);
    expect(JSON.parse((await s.page.textContent('#amr'))!)).toEqual(['pwd', 'otp', 'mfa']);
    await s.ctx.close();
  }, 90_000);

  it('the pages in Mongolian (ui_locales=mn)', async () => {
    const user = await fx.user();
    const first = await signIn(required, user, '?ui_locales=mn');
    await first.page.waitForSelector('#totp-secret');
    expect(await first.page.getAttribute('html', 'lang')).toBe('mn');
    const { secret } = await enrolOnPage(first.page, 'mn');
    await first.ctx.close();

    const next = await signIn(required, user, '?ui_locales=mn');
    await next.page.waitForSelector('input[name="otp"]');
    await shot(next.page, 'mfa-4-code-mn');
    await next.page.fill('input[name="otp"]', '000000' === nextCode(secret) ? '111111' : '000000');
    await next.page.keyboard.press('Enter');
    await next.page.waitForSelector('[role="alert"]');
    expect(await next.page.textContent('[role="alert"]')).toContain('Код буруу');
    await shot(next.page, 'mfa-5-code-error-mn');
    await next.page.click('#mfa-switch');
    await next.page.waitForSelector('input[name="recovery_code"]');
    await shot(next.page, 'mfa-7-recovery-mn');
    await next.ctx.close();
  }, 90_000);
});
