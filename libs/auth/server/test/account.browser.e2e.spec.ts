import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually } from '@gatehouse/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  accountClientId,
  ACCOUNT_CLIENT_NAME,
  SECRET_BOX,
  seedInstance,
  type SecretBox,
} from '@gatehouse/identity-data';
import { startAuth, startReplica, type AuthHarness } from './support/auth-app.js';
import { Fixtures, type TestUser } from './support/fixtures.js';
import { chromiumAvailable, launchChromium, shot, signInAtAccount } from './support/account-browser.js';
import { totpCode, totpStep } from '../src/mfa/totp.js';

/**
 * The account pages (`/account`) in a real browser (Debian's Chromium, playwright-core), on the real token server,
 * PostgreSQL and oidc-provider session: a signed-out visit is sent to sign in (an authorization request of the
 * first-party account client the token server seeds at every start, none made by the test) and comes back; the profile is edited; the password is changed (then signs in);
 * the authenticator app is enrolled, its recovery codes regenerated, removed (recent sign-in or the password) and
 * enrolled again. Bad input shows the error box and writes nothing. Screenshots under test-artifacts/browser/
 * (`account-*`), in English and Mongolian.
 */
(chromiumAvailable ? describe : describe.skip)('account pages in Chromium', () => {
  let h: AuthHarness;
  let fx: Fixtures;
  let browser: Browser;
  /** The second factors' clock (also the recent sign-in rule's), moved on by the tests. */
  let now = Date.now();
  const nextCode = (secret: string) => {
    now += 30_000;
    return totpCode(secret, totpStep(new Date(now)));
  };
  beforeAll(async () => {
    h = await startAuth();
    fx = new Fixtures(h);
    h.tokenServer.mfa.clock = () => new Date(now);
    // no account client is created here: the token server seeded the instance's own at its start
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  /** A fresh browser at /account: sent to the sign-in page, signs in, comes back. */
  const signIn = (user: TestUser, lang: 'en' | 'mn', password = user.password, shotName?: string) =>
    signInAtAccount(browser, h.url, user, lang, { password, shotName });

  const userRow = (id: string) =>
    fx.ds.one<{
      name: string | null;
      nickname: string | null;
      picture: string | null;
      locale: string | null;
    }>(`SELECT name, nickname, picture, locale FROM users WHERE id = $1`, [id]);
  const notices = (email: string) =>
    fx.ds.rows<{ kind: string }>(
      `SELECT kind FROM delivery_outbox WHERE recipient = $1 ORDER BY created_at`,
      [email],
    );

  async function profileAndPassword(lang: 'en' | 'mn') {
    const user = await fx.user();
    const { ctx, page } = await signIn(user, lang, user.password, `account-0-signin-${lang}`);
    expect(await page.textContent('#signed-in-as')).toContain(user.email);
    expect(await page.inputValue('#nickname')).toBe('batka');
    await shot(page, `account-1-page-${lang}`);

    // bad profile input: the error box, nothing written
    await page.fill('#nickname', 'changed');
    await page.fill('#picture', 'javascript:alert(1)');
    await page.fill('#locale', 'not a language');
    await page.click('#save-profile');
    await page.waitForSelector('#profile-error');
    expect(await page.locator('#profile-error li').count()).toBe(2);
    expect(await page.inputValue('#nickname')).toBe('changed');
    await shot(page, `account-2-profile-error-${lang}`);
    expect((await userRow(user.id))?.nickname).toBe('batka');

    await page.fill('#name', 'Bat Erdene');
    await page.fill('#nickname', 'bataa');
    await page.fill('#picture', 'https://example.com/me.png');
    await page.fill('#locale', 'mn');
    await page.click('#save-profile');
    await page.waitForSelector('#account-done');
    await shot(page, `account-3-profile-saved-${lang}`);
    expect(await userRow(user.id)).toEqual({
      name: 'Bat Erdene',
      nickname: 'bataa',
      picture: 'https://example.com/me.png',
      locale: 'mn',
    });

    // a wrong current password: the error box, counted as a failed login, the password unchanged
    const next = `new-${user.password}`;
    await page.fill('#current_password', 'not-the-password');
    await page.fill('#new_password', next);
    await page.click('#change-password');
    await page.waitForSelector('#password-error');
    await shot(page, `account-4-password-wrong-${lang}`);
    const failures = await fx.ds.one<{ n: number }>(
      `SELECT coalesce(sum(failed_count), 0)::int AS n FROM login_failures WHERE user_id = $1`,
      [user.id],
    );
    expect(failures?.n).toBe(1);
    // a new password the policy refuses
    await page.fill('#current_password', user.password);
    await page.fill('#new_password', 'short');
    await page.click('#change-password');
    await page.waitForSelector('#password-error');
    expect(await page.textContent('#password-error')).toContain('8');
    await shot(page, `account-5-password-policy-${lang}`);
    expect(await notices(user.email)).toEqual([]);

    await page.fill('#current_password', user.password);
    await page.fill('#new_password', next);
    await page.click('#change-password');
    await page.waitForSelector('#account-done');
    await shot(page, `account-6-password-changed-${lang}`);
    expect((await notices(user.email)).map((n) => n.kind)).toEqual(['password-changed']);
    // this browser stays signed in
    await page.goto(`${h.url}/account`);
    await page.waitForSelector('#signed-in-as');
    await ctx.close();

    // the old password no longer signs in, the new one does
    const old = await browser.newContext();
    const oldPage = await old.newPage();
    await oldPage.goto(`${h.url}/account`);
    await oldPage.fill('input[name="username"]', user.email);
    await oldPage.fill('input[name="password"]', user.password);
    await oldPage.keyboard.press('Enter');
    await oldPage.waitForSelector('#login-error');
    await old.close();
    const again = await signIn(user, lang, next);
    await again.ctx.close();
  }

  it('a signed-out visit signs in and comes back; the profile and the password change (en)', async () => {
    await profileAndPassword('en');
  }, 60_000);

  it('the same in Mongolian', async () => {
    await profileAndPassword('mn');
  }, 60_000);

  async function enrol(page: Page, lang: 'en' | 'mn', shotsToo: boolean, password?: string): Promise<string> {
    if (password) await page.fill('#factor-password', password);
    await page.click('#enrol-start');
    await page.waitForSelector('#totp-secret');
    expect(await page.locator('svg.qr path').count()).toBeGreaterThan(0);
    if (shotsToo) await shot(page, `account-7-enrol-${lang}`);
    const secret = (await page.textContent('#totp-secret'))!.replace(/\s/g, '');
    const right = nextCode(secret);
    await page.fill('#otp', right === '000000' ? '111111' : '000000');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#enrol-error');
    if (shotsToo) await shot(page, `account-8-enrol-error-${lang}`);
    expect((await page.textContent('#totp-secret'))!.replace(/\s/g, '')).toBe(secret);
    await page.fill('#otp', right);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#recovery-codes');
    if (shotsToo) await shot(page, `account-9-codes-${lang}`);
    expect(await page.locator('#recovery-codes code').count()).toBe(10);
    await page.click('#back');
    await page.waitForSelector('#remove-app');
    return secret;
  }

  async function factors(lang: 'en' | 'mn') {
    now = Date.now();
    const user = await fx.user();
    const { ctx, page }: { ctx: BrowserContext; page: Page } = await signIn(user, lang);
    const secret = await enrol(page, lang, true);
    await shot(page, `account-10-page-app-${lang}`);
    // this session signed in with the password only: the app is changed only after signing in with it
    await page.click('#regenerate-codes');
    await page.waitForSelector('#factors-error');
    await shot(page, `account-10b-needs-app-sign-in-${lang}`);
    await page.click('#step-up');
    await page.waitForSelector('input[name="otp"]');
    await page.fill('input[name="otp"]', nextCode(secret));
    await page.keyboard.press('Enter');
    await page.waitForSelector('#remove-app');
    expect(page.url()).toBe(`${h.url}/account`);
    expect(await page.locator('#step-up').count()).toBe(0);
    const factorRows = () =>
      fx.ds.rows<{ type: string }>(
        `SELECT type FROM user_authenticators WHERE user_id = $1 AND confirmed_at IS NOT NULL ORDER BY type`,
        [user.id],
      );
    expect((await factorRows()).map((r) => r.type)).toEqual(['recovery_codes', 'totp']);

    // within 5 minutes of signing in: new recovery codes without the password
    await page.click('#regenerate-codes');
    await page.waitForSelector('#recovery-codes');
    await shot(page, `account-11-new-codes-${lang}`);
    await page.click('#back');
    await page.waitForSelector('#remove-app');

    // later: removing the app needs the password; none, then a wrong one, write nothing
    now += 10 * 60_000;
    await page.click('#remove-app');
    await page.waitForSelector('#factors-error');
    await shot(page, `account-12-remove-needs-password-${lang}`);
    await page.fill('#factor-password', 'wrong-password');
    await page.click('#remove-app');
    await page.waitForSelector('#factors-error');
    expect((await factorRows()).length).toBe(2);
    expect(await notices(user.email)).toEqual([]);
    await page.fill('#factor-password', user.password);
    await page.click('#remove-app');
    await page.waitForSelector('#account-done');
    await shot(page, `account-13-removed-${lang}`);
    expect(await factorRows()).toEqual([]);
    expect((await notices(user.email)).map((n) => n.kind)).toEqual(['factor-removed']);

    // and enrolled again from the account page: no longer a recent sign-in, the password first
    await page.click('#enrol-start');
    await page.waitForSelector('#factors-error');
    expect(await page.locator('#totp-secret').count()).toBe(0);
    await enrol(page, lang, false, user.password);
    expect((await factorRows()).map((r) => r.type)).toEqual(['recovery_codes', 'totp']);
    await ctx.close();
  }

  it('enrols the app, regenerates recovery codes, removes it with the password, enrols again (en)', async () => {
    await factors('en');
  }, 60_000);

  it('the same in Mongolian', async () => {
    await factors('mn');
  }, 60_000);

  async function sessionsAndApps(lang: 'en' | 'mn') {
    const user = await fx.user();
    const a = await signIn(user, lang);
    const b = await signIn(user, lang);
    await a.page.reload();
    expect(await a.page.locator('#sessions li').count()).toBe(2);
    expect(await a.page.locator('#apps li').count()).toBe(1);
    await shot(a.page, `account-14-sessions-apps-${lang}`);
    // sign out the other browser: it is sent to sign in again, this one stays
    await a.page.click('#sessions li form button');
    await a.page.waitForSelector('#account-done');
    expect(await a.page.locator('#sessions li').count()).toBe(1);
    await b.page.goto(`${h.url}/account`);
    await b.page.waitForSelector('input[name="username"]');
    await b.ctx.close();
    // a grant revoked with its tokens
    await a.page.click('#apps li form button');
    await a.page.waitForSelector('#account-done');
    await shot(a.page, `account-15-app-revoked-${lang}`);
    expect(await a.page.locator('#apps li').count()).toBe(0);
    const grants = await fx.ds.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM oidc_payloads WHERE model = 'Grant' AND payload->>'accountId' = $1`,
      [user.id],
    );
    expect(grants?.n).toBe(0);
    // everywhere: this browser too
    await a.page.click('#sign-out-all');
    await a.page.waitForSelector('input[name="username"]');
    await a.ctx.close();
  }

  it('lists the sessions and applications, signs out one, revokes one, signs out everywhere (en)', async () => {
    await sessionsAndApps('en');
  }, 60_000);

  it('the same in Mongolian', async () => {
    await sessionsAndApps('mn');
  }, 60_000);

  async function changeEmail(lang: 'en' | 'mn') {
    now = Date.now();
    const user = await fx.user();
    const other = await fx.user();
    const { ctx, page } = await signIn(user, lang);
    const email = () =>
      fx.ds.one<{ user_email: string; email_verified: boolean }>(
        `SELECT user_email, email_verified FROM users WHERE id = $1`,
        [user.id],
      );
    // not an address, another account's, then (no longer a recent sign-in) without the password: nothing written
    await page.fill('#new_email', 'not-an-address');
    await page.click('#change-email');
    await page.waitForSelector('#email-error');
    await shot(page, `account-16-email-error-${lang}`);
    await page.fill('#new_email', other.email.toUpperCase());
    await page.click('#change-email');
    await page.waitForSelector('#email-error');
    now += 10 * 60_000;
    const fresh = `new-${user.email}`;
    await page.fill('#new_email', fresh);
    await page.click('#change-email');
    await page.waitForSelector('#email-error');
    expect(await email()).toEqual({ user_email: user.email, email_verified: true });
    expect(await notices(user.email)).toEqual([]);
    await page.fill('#new_email', fresh);
    await page.fill('#email-password', user.password);
    await page.click('#change-email');
    await page.waitForSelector('#account-done');
    await shot(page, `account-17-email-changed-${lang}`);
    expect(await email()).toEqual({ user_email: fresh, email_verified: false });
    expect((await notices(user.email)).map((n) => n.kind)).toEqual(['email-changed']);
    // the new address verified through the link sent there
    // no delivery configured in this harness: the outbox worker writes each message to DATA_DIR/outbox/
    const outbox = path.join(h.dataDir, 'outbox');
    const verification = () =>
      (existsSync(outbox) ? readdirSync(outbox) : [])
        .map((f) => JSON.parse(readFileSync(path.join(outbox, f), 'utf8')) as { to?: string; text?: string })
        .find((m) => m.text?.includes('/tickets/email-verification') && JSON.stringify(m).includes(fresh));
    await eventually(() => !!verification(), { what: 'the verification message in DATA_DIR/outbox/' });
    const sent = verification()! as { text: string };
    const link = /https?:\/\/\S+/.exec(sent.text)![0];
    await page.goto(link);
    await page.click('button[type="submit"]');
    await page.waitForSelector('[role="status"]');
    expect((await email())?.email_verified).toBe(true);
    await ctx.close();
  }

  it('changes the e-mail: recent sign-in or password, a notice to the old address, the new one verified (en)', async () => {
    await changeEmail('en');
  }, 60_000);

  it('the same in Mongolian', async () => {
    await changeEmail('mn');
  }, 60_000);

  it('refuses a form without its CSRF cookie and a signed-out POST', async () => {
    const res = await fetch(`${h.url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=profile&name=x&csrf=y',
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    const get = await fetch(`${h.url}/account`, { redirect: 'manual' });
    expect(get.status).toBe(302);
    expect(get.headers.get('location')).toMatch(/^\/authorize\?client_id=/);
    // a session cookie that is no session of ours (bad encoding, a forged value): signed out, never a 500
    for (const cookie of ['_session=%E0%A4%A; _session.sig=%zz', '_session=forged; _session.sig=forged']) {
      const forged = await fetch(`${h.url}/account`, { headers: { cookie }, redirect: 'manual' });
      expect([cookie, forged.status]).toEqual([cookie, 302]);
    }
  });

  /** The seeded account clients (flag `gatehouse_account`) of the default instance, with what they may do. */
  const seeded = () =>
    fx.ds.rows<{
      id: string;
      client_name: string;
      is_public: boolean;
      is_first_party: boolean;
      client_secret_enc: string | null;
      client_metadata: { grant_types: string[]; urls: { callbacks: string[] } };
      resources: number;
      permissions: number;
    }>(
      `SELECT c.id, c.client_name, c.is_public, c.is_first_party, c.client_secret_enc, c.client_metadata,
              (SELECT count(*)::int FROM client_resources r WHERE r.client_id = c.id) AS resources,
              (SELECT count(*)::int FROM client_permissions p WHERE p.client_id = c.id) AS permissions
         FROM clients c JOIN instances i ON i.id = c.instance_id
        WHERE i.is_default AND c.client_metadata->>'gatehouse_account' = 'true'`,
    );
  const defaultInstance = async () =>
    (await fx.ds.one<{ id: string }>(`SELECT id FROM instances WHERE is_default`))!.id;
  const signInClient = async (query = '') => {
    const res = await fetch(`${h.url}/account${query}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!, h.url);
    expect(to.pathname).toBe('/authorize');
    expect(to.searchParams.get('redirect_uri')).toBe(`${h.url}/account`);
    return to.searchParams.get('client_id');
  };

  it('signs in through the seeded public first-party client, which holds no API resource or scope', async () => {
    const [client, ...more] = await seeded();
    expect(more).toEqual([]);
    expect(client).toEqual({
      id: accountClientId(await defaultInstance()),
      client_name: ACCOUNT_CLIENT_NAME,
      is_public: true,
      is_first_party: true,
      client_secret_enc: null,
      client_metadata: {
        grant_types: ['authorization_code'],
        urls: { callbacks: [`${h.url}/account`] },
        gatehouse_account: true,
      },
      resources: 0,
      permissions: 0,
    });
    expect(await signInClient()).toBe(client.id);
  });

  it('prefers the seeded client; `?client_id=` names another first-party account client', async () => {
    const other = await fx.client({ grantTypes: ['authorization_code'] });
    await fx.ds.exec(`UPDATE clients SET client_metadata = $2::jsonb, is_first_party = true WHERE id = $1`, [
      other.id,
      JSON.stringify({ grant_types: ['authorization_code'], urls: { callbacks: [`${h.url}/account`] } }),
    ]);
    try {
      expect(await signInClient()).toBe(accountClientId(await defaultInstance()));
      expect(await signInClient(`?client_id=${other.id}`)).toBe(other.id);
      // and the other client's sign-in comes back to the page
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      const user = await fx.user();
      await page.goto(`${h.url}/account?client_id=${other.id}`);
      await page.waitForSelector('input[name="username"]');
      await page.fill('input[name="username"]', user.email);
      await page.fill('input[name="password"]', user.password);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#signed-in-as');
      expect(page.url()).toBe(`${h.url}/account`);
      await ctx.close();
    } finally {
      await fx.ds.exec(`DELETE FROM clients WHERE id = $1`, [other.id]);
    }
  }, 60_000);

  it('later starts, two replicas at once among them, create no second client; a changed ISSUER moves its callback', async () => {
    const [before] = await seeded();
    const replicas = await Promise.all([startReplica(h), startReplica(h)]);
    await Promise.all(replicas.map((r) => r.close()));
    await h.restart();
    expect(await seeded()).toEqual([before]);
    const all = await fx.ds.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM clients WHERE client_name = $1`,
      [ACCOUNT_CLIENT_NAME],
    );
    expect(all?.n).toBe(1);

    // ISSUER changed (the same server now published under another name): the callback follows it
    const moved = `http://localhost:${h.port}`;
    await h.restart({ ISSUER: moved });
    expect((await seeded()).map((c) => [c.id, c.client_metadata.urls.callbacks])).toEqual([
      [before.id, [`${moved}/account`]],
    ]);
    // and back: the callback is this issuer's again, still the one client
    await h.restart();
    expect((await seeded()).map((c) => [c.id, c.client_metadata.urls.callbacks])).toEqual([
      [before.id, [`${h.url}/account`]],
    ]);
  }, 120_000);

  it('a deleted seeded client is created again by the next start (same id)', async () => {
    const [before] = await seeded();
    await fx.ds.exec(`DELETE FROM clients WHERE id = $1`, [before.id]);
    expect(await seeded()).toEqual([]);
    await h.restart();
    expect((await seeded()).map((c) => c.id)).toEqual([before.id]);
    expect(await signInClient()).toBe(before.id);
  }, 60_000);

  it('an instance created while the server runs gets its client at the first visit that names it', async () => {
    const box = h.built.app.get<SecretBox>(SECRET_BOX);
    const made = await fx.ds.transaction((tx) =>
      seedInstance(tx, { name: `account-later-${Date.now()}` }, box),
    );
    const id = accountClientId(made.instanceId);
    expect(await fx.ds.rows(`SELECT 1 FROM clients WHERE id = $1`, [id])).toHaveLength(0);
    expect(await signInClient(`?client_id=${id}`)).toBe(id);
    const [row] = await fx.ds.rows<{ instance_id: string; is_public: boolean }>(
      `SELECT instance_id, is_public FROM clients WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ instance_id: made.instanceId, is_public: true });
    // without `?client_id=`, still the default instance's
    expect(await signInClient()).toBe(accountClientId(await defaultInstance()));
  });
});
