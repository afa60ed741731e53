import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as oidc from 'openid-client';
import { chromium, type Browser, type Page } from 'playwright-core';
import { eventually } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, type TestClient, type TestUser } from './support/fixtures.js';

/**
 * Sign-in in a real browser (Debian's Chromium, driven by playwright-core): a relying party on a local port (a real
 * HTTP server using openid-client) sends the browser to /authorize; the user signs in and consents on our pages;
 * the relying party exchanges the code (PKCE), validates the ID token and reads userinfo; then RP-initiated
 * logout. Every page is kept as a screenshot under test-artifacts/browser/. Chromium comes from the project's own
 * install step (.ci/run); where it is missing the test says so and is skipped.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const shots = path.join(root, 'test-artifacts', 'browser');

/** The relying party: /login starts a code + PKCE request, /callback finishes it and shows who signed in. */
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
        const to = oidc.buildAuthorizationUrl(config, {
          redirect_uri: `${base}/callback`,
          scope: 'openid profile email',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
          ...(url.searchParams.get('prompt') ? { prompt: url.searchParams.get('prompt')! } : {}),
        });
        res.writeHead(302, { location: to.toString() }).end();
        return;
      }
      if (url.pathname === '/link') {
        // passwordless by e-mail link, started server-side with the client's credentials
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        pending.set(state, verifier);
        const started = await fetch(`${issuer}/passwordless/start`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
          },
          body: JSON.stringify({
            username: url.searchParams.get('email'),
            options: { send_type: 'link' },
            redirect_url: `${base}/callback`,
            scope: 'openid email',
            code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
            code_challenge_method: 'S256',
            state,
          }),
        });
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1 id="sent">${started.status}</h1>`);
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
        const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        const logout = oidc.buildEndSessionUrl(config, {
          id_token_hint: tokens.id_token!,
          post_logout_redirect_uri: `${base}/bye`,
        });
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
          `<!doctype html><html lang="en"><title>RP</title><h1 id="who">Signed in as ${String(info.email)}</h1>
           <p id="sub">${claims.sub}</p><a id="logout" href="${logout.toString()}">Sign out</a></html>`,
        );
        return;
      }
      if (url.pathname === '/bye') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<h1 id="bye">Signed out at the RP</h1>');
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

(available ? describe : describe.skip)('sign-in in Chromium', () => {
  let h: AuthHarness;
  let fx: Fixtures;
  let browser: Browser;
  let page: Page;
  let user: TestUser;
  let rp: Awaited<ReturnType<typeof relyingParty>>;
  let rpClientId: string;

  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    h = await startAuth();
    fx = new Fixtures(h);
    user = await fx.user();
    // the client's callback and logout URLs point at the RP, whose port is known only once it listens
    const client = await fx.client({ grantTypes: ['authorization_code'] });
    rpClientId = client.id;
    rp = await relyingParty(h.url, client);
    await fx.ds.exec(`UPDATE clients SET client_metadata = $2::jsonb WHERE id = $1`, [
      client.id,
      JSON.stringify({
        grant_types: ['authorization_code', 'otp'],
        urls: { callbacks: [`${rp.base}/callback`], logout_urls: [`${rp.base}/bye`] },
      }),
    ]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = await browser.newPage({ locale: 'en-US' });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await h?.close();
  });

  it('code + PKCE: login page, consent page, back at the RP with a validated ID token and userinfo; logout', async () => {
    await page.goto(`${rp.base}/login`);
    await page.waitForSelector('input[name="username"]');
    await shot('1-login');
    // keyboard only: the fields are labelled and in order
    await page.getByLabel('E-mail, user name or phone').fill(user.email);
    await page.getByLabel('Password').fill('wrong-password');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[role="alert"]');
    await shot('2-login-error');
    await page.getByLabel('Password').fill(user.password);
    await page.keyboard.press('Enter');
    await page.waitForSelector('button[value="allow"]');
    await shot('3-consent');
    expect(await page.locator('li[data-scope]').allTextContents()).toEqual(
      expect.arrayContaining(['See your e-mail address']),
    );
    await page.click('button[value="allow"]');
    await page.waitForSelector('#who');
    await shot('4-signed-in');
    expect(await page.textContent('#who')).toBe(`Signed in as ${user.email}`);
    expect(await page.textContent('#sub')).toBe(user.id);

    await page.click('#logout');
    await page.waitForSelector('button[value="yes"]');
    await shot('5-logout-confirm');
    await page.click('button[value="yes"]');
    await page.waitForSelector('#bye');
    await shot('6-signed-out');
  }, 60_000);

  it('consent denied: the RP gets access_denied', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await p.goto(`${rp.base}/login`);
    await p.getByLabel('E-mail, user name or phone').fill(user.email);
    await p.getByLabel('Password').fill(user.password);
    await p.keyboard.press('Enter');
    await p.waitForSelector('button[value="deny"]');
    const [response] = await Promise.all([
      p.waitForResponse((r) => r.url().startsWith(`${rp.base}/callback`)),
      p.click('button[value="deny"]'),
    ]);
    expect(new URL(response.url()).searchParams.get('error')).toBe('access_denied');
    await p.screenshot({ path: path.join(shots, '7-denied.png'), fullPage: true });
    await ctx.close();
  }, 60_000);

  it('device flow approved in the browser while the device polls', async () => {
    const device = await fx.client({ grantTypes: ['device_code'] });
    const basic = `Basic ${Buffer.from(`${device.id}:${device.secret}`).toString('base64')}`;
    const post = async (p: string, body: Record<string, string>) => {
      const r = await fetch(`${h.url}${p}`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
      return { status: r.status, body: (await r.json()) as Record<string, string> };
    };
    const started = await post('/device/code', { scope: 'openid' });
    let polls = 0;
    let tokens: Record<string, string> | undefined;
    const polling = (async () => {
      // until approved: bounded by time (the browser's steps may take long on a loaded machine), not by a count
      const until = Date.now() + 45_000;
      for (let i = 0; Date.now() < until && !tokens; i++) {
        h.tokenServer.pollClock = () => Date.now() + i * 6_000; // each poll a full interval after the last
        const r = await post('/token', { grant_type: 'device_code', device_code: started.body.device_code });
        polls++;
        if (r.status === 200) tokens = r.body;
        else if (r.body.error !== 'authorization_pending')
          throw new Error(`poll ${i}: ${JSON.stringify(r.body)}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await p.goto(`${h.url}/device`);
    await p.getByLabel('Code shown on your device').fill(started.body.user_code);
    await p.screenshot({ path: path.join(shots, '8-device-code.png'), fullPage: true });
    await p.keyboard.press('Enter');
    await p.waitForSelector('#user-code');
    await p.screenshot({ path: path.join(shots, '9-device-confirm.png'), fullPage: true });
    await p.click('button[value="yes"][name="confirm"]');
    await p.getByLabel('E-mail, user name or phone').fill(user.email);
    await p.getByLabel('Password').fill(user.password);
    await p.keyboard.press('Enter');
    await p.waitForSelector('button[value="allow"]');
    await p.click('button[value="allow"]');
    await p.waitForSelector('[role="status"]');
    await p.screenshot({ path: path.join(shots, '10-device-done.png'), fullPage: true });
    await polling;
    expect(polls).toBeGreaterThan(1);
    expect(tokens?.access_token).toEqual(expect.any(String));
    await ctx.close();
  }, 60_000);

  it('sign-up from the login page, then the sign-in form (the same answer as for a taken address), then at the RP', async () => {
    await fx.ds.exec(
      `UPDATE clients SET client_metadata = jsonb_set(client_metadata, '{oauth}', '{"allow_signup": true}') WHERE id = $1`,
      [rpClientId],
    );
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await p.goto(`${rp.base}/login`);
    await p.click('text=Create an account');
    const email = `browser-${Date.now()}@example.test`;
    await p.getByLabel('E-mail', { exact: true }).fill(email);
    await p.getByLabel('Password').fill('browser-password-1');
    await p.screenshot({ path: path.join(shots, '11-sign-up.png'), fullPage: true });
    await p.keyboard.press('Enter');
    await p.waitForSelector('#login-notice');
    await p.getByLabel('Password').fill('browser-password-1');
    await p.keyboard.press('Enter');
    await p.waitForSelector('button[value="allow"]');
    await p.click('button[value="allow"]');
    await p.waitForSelector('#who');
    expect(await p.textContent('#who')).toBe(`Signed in as ${email}`);
    await ctx.close();
  }, 60_000);

  it('prompt=none: a code without any page when signed in; login_required without a session', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await p.goto(`${rp.base}/login?prompt=none`);
    await p.waitForSelector('#error');
    expect(await p.textContent('#error')).toBe('login_required');
    await p.goto(`${rp.base}/login`);
    await p.getByLabel('E-mail, user name or phone').fill(user.email);
    await p.getByLabel('Password').fill(user.password);
    await p.keyboard.press('Enter');
    await p.waitForSelector('button[value="allow"]');
    await p.click('button[value="allow"]');
    await p.waitForSelector('#who');
    await p.goto(`${rp.base}/login?prompt=none`);
    await p.waitForSelector('#who');
    expect(await p.textContent('#who')).toBe(`Signed in as ${user.email}`);
    await ctx.close();
  }, 60_000);

  it('implicit: the ID token in the fragment of the callback', async () => {
    // implicit needs an https callback (oidc-provider refuses http ones for it): the browser's request to it is
    // answered by the test, the fragment never leaves the browser anyway
    const callback = 'https://rp.example.test/implicit';
    const implicit = await fx.client({
      grantTypes: ['implicit'],
      metadata: { urls: { callbacks: [callback] } },
    });
    const ctx = await browser.newContext();
    await ctx.route('https://rp.example.test/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<h1 id="implicit">implicit</h1>' }),
    );
    const p = await ctx.newPage();
    const url = new URL(`${h.url}/authorize`);
    for (const [k, v] of Object.entries({
      client_id: implicit.id,
      response_type: 'id_token token',
      redirect_uri: callback,
      scope: 'openid',
      nonce: 'n-0S6_WzA2Mj',
      state: 'st',
    }))
      url.searchParams.set(k, v);
    await p.goto(url.toString());
    await p.getByLabel('E-mail, user name or phone').fill(user.email);
    await p.getByLabel('Password').fill(user.password);
    await p.keyboard.press('Enter');
    await p.waitForSelector('button[value="allow"]');
    await p.click('button[value="allow"]');
    await p.waitForSelector('#implicit');
    const fragment = new URLSearchParams(new URL(p.url()).hash.slice(1));
    expect(fragment.get('id_token')).toEqual(expect.any(String));
    expect(fragment.get('access_token')).toEqual(expect.any(String));
    expect(fragment.get('state')).toBe('st');
    await ctx.close();
  }, 60_000);

  /** A sign-in link for `email`, asked for by the RP and read from DATA_DIR/outbox/ (no delivery configured). */
  const linkFor = async (p: Page, email: string) => {
    // no delivery configured in this harness: the outbox worker writes the message to DATA_DIR/outbox/
    const outbox = path.join(h.dataDir, 'outbox');
    const links = () => {
      try {
        return readdirSync(outbox).filter((f) =>
          readFileSync(path.join(outbox, f), 'utf8').includes('/passwordless/verify'),
        );
      } catch {
        return [];
      }
    };
    // the links of earlier tests are there too: wait for this one's (a new file), never take an old one
    const before = new Set(links());
    await p.goto(`${rp.base}/link?email=${encodeURIComponent(email)}`);
    expect(await p.textContent('#sent')).toBe('200');
    await eventually(() => links().some((f) => !before.has(f)), { what: 'the link in DATA_DIR/outbox/' });
    const files = links()
      .filter((f) => !before.has(f))
      .sort();
    const message = JSON.parse(readFileSync(path.join(outbox, files.at(-1)!), 'utf8')) as { text: string };
    return /(http:\/\/\S+\/passwordless\/verify\?token=[\w-]+)/.exec(message.text)![1];
  };

  it('passwordless e-mail link: the link asks "Continue as ...?"; the click ends signed in at the RP', async () => {
    const ctx = await browser.newContext({ locale: 'en-US' });
    const p = await ctx.newPage();
    const link = await linkFor(p, user.email);
    await p.goto(link);
    // opening the link signs nobody in: a page asks first (login CSRF), the address masked
    await p.waitForSelector('#continue-as');
    expect(await p.textContent('#continue-as')).toBe(`Continue as ${user.email[0]}***@auth.test?`);
    await p.screenshot({ path: path.join(shots, '11-link-confirm-en.png'), fullPage: true });
    await p.getByRole('button', { name: 'Continue' }).click();
    await p.waitForSelector('button[value="allow"]');
    await p.screenshot({ path: path.join(shots, '12-link-consent.png'), fullPage: true });
    await p.click('button[value="allow"]');
    await p.waitForSelector('#who');
    expect(await p.textContent('#who')).toBe(`Signed in as ${user.email}`);
    await ctx.close();
  }, 60_000);

  it('passwordless e-mail link of a first-party client: the click lands at the RP (no consent page)', async () => {
    const other = await fx.user();
    await fx.ds.exec(`UPDATE clients SET is_first_party = true WHERE id = $1`, [rpClientId]);
    try {
      const ctx = await browser.newContext({ locale: 'en-US' });
      const p = await ctx.newPage();
      const link = await linkFor(p, other.email);
      await p.goto(link);
      await p.waitForSelector('#continue-as');
      // the form's answer redirects on to the RP's callback: the page's form-action allows that origin
      await p.getByRole('button', { name: 'Continue' }).click();
      await p.waitForSelector('#who');
      expect(await p.textContent('#who')).toBe(`Signed in as ${other.email}`);
      await ctx.close();
    } finally {
      await fx.ds.exec(`UPDATE clients SET is_first_party = false WHERE id = $1`, [rpClientId]);
    }
  }, 60_000);

  it('passwordless e-mail link in Mongolian: the confirmation page, then signed in', async () => {
    const other = await fx.user();
    const ctx = await browser.newContext({ locale: 'mn-MN' });
    const p = await ctx.newPage();
    const link = await linkFor(p, other.email);
    await p.goto(link);
    await p.waitForSelector('#continue-as');
    expect(await p.getAttribute('html', 'lang')).toBe('mn');
    expect(await p.textContent('#continue-as')).toBe(
      `${other.email[0]}***@auth.test хаягаар үргэлжлүүлэх үү?`,
    );
    await p.screenshot({ path: path.join(shots, '11-link-confirm-mn.png'), fullPage: true });
    await p.getByRole('button', { name: 'Үргэлжлүүлэх' }).click();
    await p.waitForSelector('button[value="allow"]');
    await p.click('button[value="allow"]');
    await p.waitForSelector('#who');
    expect(await p.textContent('#who')).toBe(`Signed in as ${other.email}`);
    await ctx.close();
  }, 60_000);
});
