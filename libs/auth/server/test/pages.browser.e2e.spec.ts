import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { eventually, smtpSink, type SunkMail } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenRequest, type TestClient, type TestUser } from './support/fixtures.js';

/**
 * What a person sees on the token server's pages, in English and Mongolian, in Debian's Chromium: consent (the API
 * by name, scopes in words, only what the tokens will carry, who is signed in, switching account), offline access,
 * sign-up (rules up front, errors as sentences, no account oracle), "Forgot password?" through a real SMTP sink,
 * the focus after a wrong password, a cancelled device, the logout page, the e-mail verified page, the error page
 * of a browser flow that fails for the application (unknown client, unregistered redirect_uri). Every page is
 * kept as a screenshot under test-artifacts/browser/pages/.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const shots = path.join(root, 'test-artifacts', 'browser', 'pages');

const CALLBACK = 'https://rp.example.test/cb';
const LOGOUT = 'https://rp.example.test/bye';
const mails: SunkMail[] = [];
const smtp = smtpSink(mails);

/** A message's text (quoted-printable undone). */
const textOf = (m: SunkMail) => m.body.replace(/=\r?\n/g, '').replace(/=3D/g, '=');

(available ? describe : describe.skip)('the pages a person sees, in Chromium', () => {
  let h: AuthHarness;
  let fx: Fixtures;
  let browser: Browser;
  let client: TestClient;
  let user: TestUser;

  const shot = (p: Page, name: string) =>
    p.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

  /** A browser context whose requests to the RP's https origin are answered by the test. */
  const context = async (locale: 'en-US' | 'mn-MN') => {
    const ctx = await browser.newContext({ locale });
    await ctx.route('https://rp.example.test/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<h1 id="rp">RP</h1>' }),
    );
    return ctx;
  };

  /** An authorization request (code + PKCE) of `c`; its verifier for the code exchange. */
  const authorize = (c: TestClient, params: Record<string, string>) => {
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${h.url}/authorize`);
    const all = {
      client_id: c.id,
      response_type: 'code',
      redirect_uri: CALLBACK,
      scope: 'openid',
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...params,
    };
    for (const [k, v] of Object.entries(all)) url.searchParams.set(k, v);
    return { url: url.toString(), verifier };
  };

  const signIn = async (p: Page, u: { email: string; password: string }) => {
    await p.fill('#username', u.email);
    await p.fill('#password', u.password);
    await p.keyboard.press('Enter');
  };

  const exchange = (c: TestClient, code: string, verifier: string) =>
    tokenRequest(
      h.url,
      { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier },
      { basic: { id: c.id, secret: c.secret! } },
    );

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    h = await startAuth({ SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}` });
    fx = new Fixtures(h);
    user = await fx.user();
    client = await fx.client({
      grantTypes: ['authorization_code', 'refresh_token'],
      metadata: { urls: { callbacks: [CALLBACK], logout_urls: [LOGOUT] } },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await new Promise<void>((r) => smtp.close(() => r()));
  });

  describe('consent', () => {
    let api: Awaited<ReturnType<Fixtures['resource']>>;
    let apiName: string;

    beforeAll(async () => {
      api = await fx.resource({ scopes: ['read:things', 'write:things', 'delete:things'] });
      apiName = `Things API ${randomBytes(2).toString('hex')}`;
      await fx.ds.exec(`UPDATE resources SET rbac_enabled = true, resource_name = $2 WHERE id = $1`, [
        api.id,
        apiName,
      ]);
      await fx.ds.exec(`UPDATE scopes SET scope_description = 'See your things' WHERE id = $1`, [
        api.scopes['read:things'],
      ]);
      await fx.grant(client, api);
      // the user holds read:things and write:things; the client may ask for all three
      for (const s of ['read:things', 'write:things']) {
        await fx.ds.exec(
          `INSERT INTO user_permissions (instance_id, user_id, resource_id, scope_id)
           SELECT instance_id, $1, id, $3 FROM resources WHERE id = $2`,
          [user.id, api.id, api.scopes[s]],
        );
      }
    });

    for (const locale of ['en-US', 'mn-MN'] as const) {
      it(`names the API, describes scopes in words, lists only what the user gets, says who is signed in (${locale})`, async () => {
        const ctx = await context(locale);
        const p = await ctx.newPage();
        const { url } = authorize(client, {
          scope: 'openid email read:things write:things delete:things',
          resource: api.identifier,
        });
        await p.goto(url);
        await signIn(p, user);
        await p.waitForSelector('button[value="allow"]');
        await shot(p, `consent-${locale}`);
        expect(await p.textContent('h2.api')).toContain(apiName);
        const items = await p
          .locator('li[data-scope]')
          .evaluateAll((els) => els.map((e) => [e.getAttribute('data-scope'), e.textContent]));
        const text = Object.fromEntries(items) as Record<string, string>;
        // RBAC: delete:things is the client's, not the user's: not listed
        expect(Object.keys(text).sort()).toEqual(['email', 'openid', 'read:things', 'write:things']);
        if (locale === 'en-US') {
          expect(text['read:things']).toBe('See your things');
          expect(text['write:things']).toBe('Change things');
          expect(text.email).toBe('See your e-mail address');
          expect(await p.textContent('#signed-in-as')).toBe(`Signed in as ${user.email}.`);
          expect(await p.textContent('#switch-account')).toBe('Not you? Switch account');
        } else {
          expect(text['write:things']).toBe('things: өөрчлөх');
          expect(await p.textContent('#signed-in-as')).toBe(`Та ${user.email} бүртгэлээр нэвтэрсэн байна.`);
        }
        expect(Object.values(text).join(' ')).not.toMatch(/may /);
        await ctx.close();
      }, 60_000);
    }

    it('"Not you? Switch account" signs out and shows the sign-in page; another account then signs in', async () => {
      const other = await fx.user();
      const ctx = await context('en-US');
      const p = await ctx.newPage();
      const { url, verifier } = authorize(client, { scope: 'openid email' });
      await p.goto(url);
      await signIn(p, user);
      await p.waitForSelector('#switch-account');
      await p.click('#switch-account');
      await p.waitForSelector('#username');
      await shot(p, 'consent-switched-to-login-en');
      await signIn(p, other);
      await p.waitForSelector('#signed-in-as');
      expect(await p.textContent('#signed-in-as')).toBe(`Signed in as ${other.email}.`);
      await p.click('button[value="allow"]');
      await p.waitForSelector('#rp');
      const code = new URL(p.url()).searchParams.get('code')!;
      const tokens = await exchange(client, code, verifier);
      const idToken = String(tokens.body.id_token);
      const sub = (JSON.parse(Buffer.from(idToken.split('.')[1], 'base64url').toString()) as { sub: string })
        .sub;
      expect(sub).toBe(other.id);
      await ctx.close();
    }, 60_000);
  });

  it('offline_access without prompt=consent: shown on the consent page, and a refresh token that works', async () => {
    const ctx = await context('en-US');
    const p = await ctx.newPage();
    const { url, verifier } = authorize(client, { scope: 'openid offline_access' });
    await p.goto(url);
    await signIn(p, user);
    await p.waitForSelector('li[data-scope="offline_access"]');
    await shot(p, 'consent-offline-en');
    expect(await p.textContent('li[data-scope="offline_access"]')).toMatch(/^Stay signed in/);
    await p.click('button[value="allow"]');
    await p.waitForSelector('#rp');
    const code = new URL(p.url()).searchParams.get('code')!;
    const tokens = await exchange(client, code, verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toContain('offline_access');
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    const refreshed = await tokenRequest(
      h.url,
      { grant_type: 'refresh_token', refresh_token: String(tokens.body.refresh_token) },
      { basic: { id: client.id, secret: client.secret! } },
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).toEqual(expect.any(String));

    // a client without refresh_token still gets none (and the page does not offer it)
    const noRefresh = await fx.client({
      grantTypes: ['authorization_code'],
      metadata: { urls: { callbacks: [CALLBACK] } },
    });
    const second = authorize(noRefresh, { scope: 'openid offline_access' });
    await p.goto(second.url);
    await p.waitForSelector('button[value="allow"]');
    expect(await p.locator('li[data-scope="offline_access"]').count()).toBe(0);
    await p.click('button[value="allow"]');
    await p.waitForSelector('#rp');
    const t2 = await exchange(noRefresh, new URL(p.url()).searchParams.get('code')!, second.verifier);
    expect(t2.body.refresh_token).toBeUndefined();
    await ctx.close();
  }, 60_000);

  for (const locale of ['en-US', 'mn-MN'] as const) {
    it(`after a wrong password the (empty) password field has the focus (${locale})`, async () => {
      const ctx = await context(locale);
      const p = await ctx.newPage();
      await p.goto(authorize(client, {}).url);
      await signIn(p, { email: user.email, password: 'wrong-password' });
      await p.waitForSelector('#login-error');
      await shot(p, `login-wrong-password-${locale}`);
      expect(await p.evaluate('document.activeElement && document.activeElement.id')).toBe('password');
      expect(await p.inputValue('#password')).toBe('');
      expect(await p.inputValue('#username')).toBe(user.email);
      await ctx.close();
    }, 60_000);
  }

  it('offline_access on the consent page in Mongolian', async () => {
    const ctx = await context('mn-MN');
    const p = await ctx.newPage();
    await p.goto(authorize(client, { scope: 'openid offline_access', prompt: 'consent' }).url);
    await signIn(p, user);
    await p.waitForSelector('li[data-scope="offline_access"]');
    await shot(p, 'consent-offline-mn');
    expect(await p.textContent('li[data-scope="offline_access"]')).toMatch(/^Нэвтэрсэн хэвээр байх/);
    await ctx.close();
  }, 60_000);

  describe('sign-up', () => {
    let signupClient: TestClient;
    beforeAll(async () => {
      signupClient = await fx.client({
        grantTypes: ['authorization_code'],
        metadata: { urls: { callbacks: [CALLBACK] }, oauth: { allow_signup: true } },
      });
    });

    for (const locale of ['en-US', 'mn-MN'] as const) {
      it(`shows the password rules up front and says what is wrong in sentences, per field (${locale})`, async () => {
        const ctx = await context(locale);
        const p = await ctx.newPage();
        await p.goto(authorize(signupClient, {}).url);
        await p.click(`a[href$="/signup"]`);
        await p.waitForSelector('#password-rules');
        await shot(p, `signup-${locale}`);
        const rules = await p.textContent('#password-rules');
        expect(rules).toContain(locale === 'en-US' ? 'At least 8 characters' : 'Хамгийн багадаа 8 тэмдэгт');
        await p.fill('#email', 'not-an-address');
        await p.fill('#password', 'short');
        await p.keyboard.press('Enter');
        await p.waitForSelector('#email-error');
        await shot(p, `signup-errors-email-${locale}`);
        expect(await p.textContent('#email-error')).toBe(
          locale === 'en-US'
            ? 'This is not an e-mail address. Check it, for example name@example.com.'
            : 'Энэ и-мэйл хаяг биш байна. Шалгана уу, жишээ нь name@example.com.',
        );
        await p.fill('#email', `new-${randomBytes(3).toString('hex')}@auth.test`);
        await p.fill('#password', 'short');
        await p.keyboard.press('Enter');
        await p.waitForSelector('#password-error');
        await shot(p, `signup-errors-password-${locale}`);
        expect(await p.textContent('#password-error')).toBe(
          locale === 'en-US'
            ? 'Choose a password that meets the rules below.'
            : 'Доорх шаардлагыг хангасан нууц үг сонгоно уу.',
        );
        expect(await p.textContent('body')).not.toMatch(/password:|invalid_request/);
        await ctx.close();
      }, 60_000);
    }

    it('a new and a taken e-mail get the same answer; the taken one’s owner is told by e-mail; the new one signs in', async () => {
      const ctx = await context('en-US');
      const p = await ctx.newPage();
      const fresh = `fresh-${randomBytes(3).toString('hex')}@auth.test`;
      const answer = async (email: string) => {
        await p.goto(authorize(signupClient, {}).url);
        await p.click(`a[href$="/signup"]`);
        await p.fill('#email', email);
        await p.fill('#password', 'a-good-password-1');
        await p.keyboard.press('Enter');
        await p.waitForSelector('#login-notice');
        return (await p.textContent('#login-notice'))!.replace(email, '<email>');
      };
      const taken = await answer(user.email);
      await shot(p, 'signup-taken-en');
      const created = await answer(fresh);
      await shot(p, 'signup-new-en');
      expect(created).toBe(taken);
      expect(created).toMatch(/^Check your e-mail/);
      // the owner of the taken address learns of it; the new address gets its verification link
      await eventually(
        () => mails.some((m) => m.to === user.email && /already have an account/.test(textOf(m))),
        {
          what: 'the message to the owner',
        },
      );
      await eventually(() => mails.some((m) => m.to === fresh && /email-verification/.test(textOf(m))), {
        what: 'the verification link',
      });
      // the password field has the focus, the address is filled in: the new account signs in
      expect(await p.evaluate('document.activeElement && document.activeElement.id')).toBe('password');
      await p.fill('#password', 'a-good-password-1');
      await p.keyboard.press('Enter');
      await p.waitForSelector('button[value="allow"]');
      await ctx.close();
    }, 60_000);

    it('the e-mail verified page has a "Continue" to the application (en, mn)', async () => {
      const email = mails.find((m) => /email-verification\?token=/.test(textOf(m)))!;
      const link = /(http:\/\/127\.0\.0\.1:\d+\/email-verification\?token=[\w-]+)/.exec(textOf(email))![1];
      const ctx = await context('mn-MN');
      const p = await ctx.newPage();
      await p.goto(link);
      await p.waitForSelector('#continue');
      await shot(p, 'email-verified-mn');
      expect(await p.textContent('#continue')).toBe('Үргэлжлүүлэх');
      expect(await p.getAttribute('#continue', 'href')).toBe('https://rp.example.test/');
      await p.click('#continue');
      await p.waitForSelector('#rp');
      await ctx.close();
      // English, a client naming its initiate_login_uri
      await fx.ds.exec(
        `UPDATE clients SET client_metadata = jsonb_set(client_metadata, '{urls,initiate_login_uri}', '"https://rp.example.test/start-login"') WHERE id = $1`,
        [signupClient.id],
      );
      const ctx2 = await context('en-US');
      const p2 = await ctx2.newPage();
      const fresh = `verify-${randomBytes(3).toString('hex')}@auth.test`;
      await p2.goto(authorize(signupClient, {}).url);
      await p2.click(`a[href$="/signup"]`);
      await p2.fill('#email', fresh);
      await p2.fill('#password', 'a-good-password-1');
      await p2.keyboard.press('Enter');
      await p2.waitForSelector('#login-notice');
      await eventually(() => mails.some((m) => m.to === fresh));
      const link2 = /(http:\/\/127\.0\.0\.1:\d+\/email-verification\?token=[\w-]+)/.exec(
        textOf(mails.find((m) => m.to === fresh)!),
      )![1];
      await p2.goto(link2);
      await p2.waitForSelector('#continue');
      await shot(p2, 'email-verified-en');
      expect(await p2.textContent('#continue')).toBe('Continue');
      expect(await p2.getAttribute('#continue', 'href')).toBe('https://rp.example.test/start-login');
      await ctx2.close();
    }, 60_000);
  });

  for (const locale of ['en-US', 'mn-MN'] as const) {
    it(`"Forgot password?": e-mail, link, new password, signed in; an unknown address gets the same page (${locale})`, async () => {
      const person = await fx.user();
      const ctx = await context(locale);
      const p = await ctx.newPage();
      const { url } = authorize(client, {});
      await p.goto(url);
      await p.waitForSelector('#forgot');
      await shot(p, `login-${locale}`);
      await p.click('#forgot');
      await p.waitForSelector('#email');
      await shot(p, `forgot-${locale}`);
      // an address nobody has: the same answer, and no message
      const before = mails.length;
      await p.fill('#email', `nobody-${randomBytes(3).toString('hex')}@auth.test`);
      await p.keyboard.press('Enter');
      await p.waitForSelector('#forgot-sent');
      const unknownAnswer = await p.textContent('main');
      await p.goBack();
      await p.waitForSelector('#email');
      await p.fill('#email', person.email.toUpperCase());
      await p.keyboard.press('Enter');
      await p.waitForSelector('#forgot-sent');
      await shot(p, `forgot-sent-${locale}`);
      expect(await p.textContent('main')).toBe(unknownAnswer);
      await eventually(() => mails.some((m) => m.to === person.email), { what: 'the reset e-mail' });
      expect(mails.slice(before).filter((m) => m.to.startsWith('nobody-'))).toEqual([]);
      const link = /(http:\/\/127\.0\.0\.1:\d+\/tickets\/password-change\?ticket=[\w-]+)/.exec(
        textOf(mails.find((m) => m.to === person.email)!),
      )![1];
      // a second request within the minute sends nothing more (the passwordless send budget)
      await p.goBack();
      await p.waitForSelector('#email');
      await p.fill('#email', person.email);
      await p.keyboard.press('Enter');
      await p.waitForSelector('#forgot-sent');

      const mailPage = await ctx.newPage();
      await mailPage.goto(link);
      // the rules before the first submit, in the page's language
      expect(await mailPage.textContent('#password-rules')).toContain(
        locale === 'en-US' ? 'At least 8 characters' : 'Хамгийн багадаа 8 тэмдэгт',
      );
      await mailPage.fill('#password', 'short');
      await mailPage.keyboard.press('Enter');
      await mailPage.waitForSelector('#password-error');
      await shot(mailPage, `forgot-new-password-error-${locale}`);
      expect(await mailPage.textContent('#password-error')).toContain(
        locale === 'en-US' ? 'At least 8 characters' : 'Хамгийн багадаа 8 тэмдэгт',
      );
      await mailPage.fill('#password', 'my-new-password-1');
      await shot(mailPage, `forgot-new-password-${locale}`);
      await mailPage.keyboard.press('Enter');
      await mailPage.waitForSelector('[role="status"]');
      await shot(mailPage, `forgot-password-set-${locale}`);
      expect(mails.filter((m) => m.to === person.email)).toHaveLength(1);

      // back in the sign-in tab: the new password signs in
      await p.click('a[href^="/interaction/"]');
      await p.waitForSelector('#username');
      await signIn(p, { email: person.email, password: 'my-new-password-1' });
      await p.waitForSelector('button[value="allow"]');
      await ctx.close();
    }, 60_000);
  }

  for (const locale of ['en-US', 'mn-MN'] as const) {
    it(`the device page shows a cancel as a neutral message, not a failure (${locale})`, async () => {
      const device = await fx.client({ grantTypes: ['device_code'] });
      const r = await fetch(`${h.url}/device/code`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${device.id}:${device.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ scope: 'openid' }),
      });
      const started = (await r.json()) as Record<string, string>;
      const ctx = await context(locale);
      const p = await ctx.newPage();
      await p.goto(`${h.url}/device`);
      await p.fill('#user_code', started.user_code);
      await p.keyboard.press('Enter');
      await p.waitForSelector('button[name="abort"]');
      await p.click('button[name="abort"]');
      await p.waitForSelector('#code-error');
      await shot(p, `device-cancelled-${locale}`);
      expect(await p.getAttribute('#code-error', 'role')).toBe('status');
      expect(await p.getAttribute('#code-error', 'class')).toBe('notice');
      expect(await p.locator('[role="alert"]').count()).toBe(0);
      expect(await p.textContent('#code-error')).toBe(
        locale === 'en-US'
          ? 'You cancelled. Nothing was connected; you can close this page.'
          : 'Та цуцаллаа. Юу ч холбогдоогүй; энэ хуудсыг хааж болно.',
      );
      await ctx.close();
    }, 60_000);
  }

  describe('a browser flow that fails for the application', () => {
    // oidc-provider's own descriptions of these errors: a person never reads them
    const RAW = [
      /redirect_uri did not match/i,
      /registered redirect_uris/i,
      /client is invalid/i,
      /client not found/i,
      /invalid_client_metadata/,
      /error_description/,
    ];
    const FRIENDLY = {
      'en-US': {
        sentence: 'This application is not set up correctly to sign you in.',
        code: 'Error code:',
        reference: /Reference: [0-9a-f]{12}/,
        lang: 'en',
      },
      'mn-MN': {
        sentence: 'Энэ програм таныг нэвтрүүлэхээр зөв тохируулагдаагүй байна.',
        code: 'Алдааны код:',
        reference: /Лавлах дугаар: [0-9a-f]{12}/,
        lang: 'mn',
      },
    } as const;
    const FRIENDLY_REST = {
      en: 'Please let its owner know; there is nothing you can change to fix it.',
      mn: 'Програмын эзэмшигчид мэдэгдэнэ үү; та өөрөө засах боломжгүй.',
    };

    const cases = [
      {
        name: 'client',
        what: 'an unknown client id',
        code: 'invalid_client',
        url: () => authorize({ id: `unknown-${randomBytes(4).toString('hex')}` } as TestClient, {}).url,
      },
      {
        name: 'redirect',
        what: 'a known client with an unregistered redirect_uri',
        code: 'invalid_redirect_uri',
        url: () => authorize(client, { redirect_uri: 'https://evil.example.test/cb' }).url,
      },
    ];

    for (const c of cases) {
      for (const locale of ['en-US', 'mn-MN'] as const) {
        it(`${c.what}: a friendly page with the error code and a reference (${locale})`, async () => {
          const ctx = await context(locale);
          const p = await ctx.newPage();
          const res = await p.goto(c.url());
          expect(res?.status()).toBe(400);
          await p.waitForSelector('main');
          await shot(p, `error-${c.name}-${locale}`);
          const f = FRIENDLY[locale];
          expect(await p.getAttribute('html', 'lang')).toBe(f.lang);
          const text = (await p.textContent('body'))!;
          expect(text).toContain(f.sentence);
          expect(text).toContain(`${f.code} ${c.code}`);
          expect(text).toMatch(f.reference);
          for (const raw of RAW) expect(text).not.toMatch(raw);
          // the sentence in the alert, the code and the reference on a line of their own (read out or copied whole)
          expect(await p.textContent('[role="alert"]')).toBe(
            `${f.sentence} ${locale === 'en-US' ? FRIENDLY_REST.en : FRIENDLY_REST.mn}`,
          );
          expect(await p.textContent('#error-reference')).toMatch(
            new RegExp(`^${f.code} ${c.code} · ${f.reference.source}$`),
          );
          // each "label: value" on one line box: no line break between a label and its value
          const lines = await p
            .locator('#error-reference span')
            .evaluateAll((els) => els.map((e) => e.getClientRects().length));
          expect(lines).toEqual([1, 1]);
          if (locale === 'mn-MN') expect(text).not.toContain('not set up correctly');
          // nothing sent the browser to the unregistered address
          expect(p.url()).toMatch(new RegExp(`^${h.url}/`));
          await ctx.close();
        }, 60_000);
      }
    }
  });

  for (const locale of ['en-US', 'mn-MN'] as const) {
    it(`the logout page names the application and the account (${locale})`, async () => {
      const ctx = await context(locale);
      const p = await ctx.newPage();
      const { url, verifier } = authorize(client, { scope: 'openid' });
      await p.goto(url);
      await signIn(p, user);
      const allow = await p.waitForSelector('button[value="allow"], #rp');
      if ((await allow.getAttribute('id')) !== 'rp') await p.click('button[value="allow"]');
      await p.waitForSelector('#rp');
      const tokens = await exchange(client, new URL(p.url()).searchParams.get('code')!, verifier);
      const [name] = await fx.ds.rows('SELECT client_name FROM clients WHERE id = $1', [client.id]);
      const logout = new URL(`${h.url}/session/end`);
      logout.searchParams.set('id_token_hint', String(tokens.body.id_token));
      logout.searchParams.set('post_logout_redirect_uri', LOGOUT);
      await p.goto(logout.toString());
      await p.waitForSelector('#logout-client');
      await shot(p, `logout-${locale}`);
      expect(await p.textContent('#logout-client')).toBe(
        locale === 'en-US'
          ? `You are signing out of ${String(name.client_name)}.`
          : `Гарах програм: ${String(name.client_name)}`,
      );
      expect(await p.textContent('#logout-account')).toContain(user.email);
      await ctx.close();
    }, 60_000);
  }
});
