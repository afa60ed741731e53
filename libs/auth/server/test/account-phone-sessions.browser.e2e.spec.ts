import type { AddressInfo } from 'node:net';
import { randomInt } from 'node:crypto';
import { eventually, smsSink, smtpSink, type SunkMail, type SunkText } from '@gatehouse/testing';
import type { Browser, Page } from 'playwright-core';
import { accountClientId } from '@gatehouse/identity-data';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, type TestUser } from './support/fixtures.js';
import { chromiumAvailable, launchChromium, shot, signInAtAccount } from './support/account-browser.js';

/**
 * The account pages' phone number, notices, signed-in devices and wrong current passwords, in a real browser
 * (Debian's Chromium, playwright-core) on the real token server, with a real local SMTP server and a real local HTTP
 * sink standing for the SMS gateway (as passwordless.spec.ts): a new number is saved, verified, only after the
 * code the text message carried (5 tries, 5 minutes, the send budget); every notice arrives in the person's
 * language; the sessions list names each browser, its address and its last use, and signs out the others; a wrong
 * current password is a `signin.failure` (`wrong_password`) that counts toward the lockout. Screenshots under
 * test-artifacts/browser/ (`account-2x-*`, `account-3x-*`), in English and Mongolian.
 */

const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

/** The subject and plain text of a message as nodemailer wrote it (encoded words, base64 or quoted-printable). */
function decodeMail(m: SunkMail): { subject: string; text: string } {
  const [head] = m.body.split(/\r?\n\r?\n/);
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const words = (/^Subject: (.*)$/im.exec(unfolded)?.[1] ?? '').replace(
    /=\?utf-8\?([bq])\?([^?]*)\?=\s*/gi,
    (_all, enc: string, data: string) =>
      enc.toLowerCase() === 'b' ? Buffer.from(data, 'base64').toString('utf8') : qp(data.replace(/_/g, ' ')),
  );
  // the text/plain part (the message itself when it has no parts)
  const part = /Content-Type: text\/plain[^]*?\r?\n\r?\n([^]*?)(?:\r?\n--|$)/i.exec(m.body);
  const partHead = part ? m.body.slice(0, part.index + part[0].indexOf(part[1])) : head;
  const encoding = /Content-Transfer-Encoding: (\S+)/gi;
  let last = '';
  for (const e of partHead.matchAll(encoding)) last = e[1].toLowerCase();
  const raw = part?.[1] ?? '';
  const text = last === 'base64' ? Buffer.from(raw.replace(/\s/g, ''), 'base64').toString('utf8') : qp(raw);
  return { subject: words.trim(), text };
}

/** Quoted-printable undone (soft breaks, `=XX` bytes as UTF-8). */
function qp(s: string): string {
  const bytes = s
    .replace(/=\r?\n/g, '')
    .split(/(=[0-9A-F]{2})/i)
    .flatMap((chunk) =>
      /^=[0-9A-F]{2}$/i.test(chunk) ? [Buffer.from([parseInt(chunk.slice(1), 16)])] : [Buffer.from(chunk)],
    );
  return Buffer.concat(bytes).toString('utf8');
}

(chromiumAvailable ? describe : describe.skip)(
  'account pages: phone, notices, devices, wrong passwords (Chromium)',
  () => {
    const mails: SunkMail[] = [];
    const texts: SunkText[] = [];
    const smtp = smtpSink(mails);
    const sink = smsSink(texts);
    let h: AuthHarness;
    let fx: Fixtures;
    let browser: Browser;
    /** The one-time codes' clock (their expiry and send budget), moved on by the tests. */
    let codesNow = Date.now();

    beforeAll(async () => {
      await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
      await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
      h = await startAuth({
        SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
        SMS_WEBHOOK_URL: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/sms`,
        DELIVERY_RETRY_BASE_MS: '200',
        AUTH_LOCKOUT_THRESHOLD: '3',
      });
      fx = new Fixtures(h);
      h.tokenServer.codes.clock = () => new Date(codesNow);
      browser = await launchChromium();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await h?.close();
      await new Promise<void>((r) => smtp.close(() => r()));
      await new Promise<void>((r) => sink.close(() => r()));
    });

    /** A fresh browser at /account: sent to the sign-in page, signs in, comes back. */
    const signIn = (user: TestUser, lang: 'en' | 'mn', userAgent?: string) =>
      signInAtAccount(browser, h.url, user, lang, { userAgent });

    /** The password changed on the account page (the right current one). */
    async function changePassword(page: Page, user: TestUser) {
      await page.fill('#current_password', user.password);
      await page.fill('#new_password', `new-${user.password}`);
      await page.click('#change-password');
      await page.waitForSelector('#account-done');
    }

    /** The messages the SMTP server received for `to` of a subject, decoded, once one is there. */
    async function mailTo(to: string, subject: string) {
      await eventually(() => mails.some((m) => m.to === to && decodeMail(m).subject === subject), {
        what: `a mail "${subject}" to ${to}`,
      });
      return mails.filter((m) => m.to === to).map(decodeMail);
    }

    const phoneRow = (id: string) =>
      fx.ds.one<{ phone_number: string | null; phone_verified: boolean }>(
        `SELECT phone_number, phone_verified FROM users WHERE id = $1`,
        [id],
      );
    const newNumber = () => `+97688${String(randomInt(0, 1_000_000)).padStart(6, '0')}`;
    /** The code of the last text message to `to`. */
    async function smsCode(to: string, count: number): Promise<string> {
      await eventually(() => texts.filter((t) => t.to === to).length >= count, {
        what: `text message ${count} to ${to}`,
      });
      const last = texts.filter((t) => t.to === to).at(-1)!;
      return /\b(\d{6})\b/.exec(last.text)![1];
    }

    async function phone(lang: 'en' | 'mn') {
      codesNow = Date.now();
      // no profile language: messages follow the page's
      const user = await fx.user({ profile: { locale: null } });
      const { ctx, page } = await signIn(user, lang);
      expect(await page.textContent('#account-phone')).toContain(user.phone);
      await shot(page, `account-20-phone-${lang}`);

      // not E.164: the error box, nothing sent or written
      await page.fill('#new_phone', '9911 2233');
      await page.click('#send-phone-code');
      await page.waitForSelector('#phone-error');
      expect(await page.inputValue('#new_phone')).toBe('9911 2233');
      await shot(page, `account-21-phone-bad-${lang}`);

      // a new number, typed with spaces: a code by text message, the number not saved yet
      const number = newNumber();
      await page.fill('#new_phone', `${number.slice(0, 4)} ${number.slice(4, 8)} ${number.slice(8)}`);
      await page.click('#send-phone-code');
      await page.waitForSelector('#phone-sent');
      expect(await page.textContent('#phone-sent')).toContain(number);
      await shot(page, `account-22-phone-code-${lang}`);
      const code = await smsCode(number, 1);
      expect(texts.filter((t) => t.to === number).at(-1)!.text).toContain(
        lang === 'mn' ? 'баталгаажуулах код' : 'your code to verify this phone number',
      );
      expect(await phoneRow(user.id)).toEqual({ phone_number: user.phone, phone_verified: false });

      // a wrong code: the error, still waiting; then the right one saves it, verified, with a notice
      await page.fill('#phone_code', code === '000000' ? '111111' : '000000');
      await page.click('#confirm-phone');
      await page.waitForSelector('#phone-error');
      await shot(page, `account-23-phone-wrong-${lang}`);
      expect(await page.locator('#phone_code').count()).toBe(1);
      await page.fill('#phone_code', code);
      await page.click('#confirm-phone');
      await page.waitForSelector('#account-done');
      await shot(page, `account-24-phone-saved-${lang}`);
      expect(await phoneRow(user.id)).toEqual({ phone_number: number, phone_verified: true });
      const changed = lang === 'mn' ? 'Таны утасны дугаар солигдлоо' : 'Your phone number was changed';
      const [notice] = (await mailTo(user.email, changed)).filter((m) => m.subject === changed);
      expect(notice.text).toContain(`${number.slice(0, 4)}`);
      expect(notice.text).not.toContain(number); // masked
      expect(notice.text).toContain(`${h.url}/account`);

      // another number at once: the send budget (one message a minute to the account) refuses it, nothing sent
      const second = newNumber();
      await page.fill('#new_phone', second);
      await page.click('#send-phone-code');
      await page.waitForSelector('#phone-error');
      await shot(page, `account-25-phone-too-soon-${lang}`);
      expect(texts.filter((t) => t.to === second)).toEqual([]);

      // a minute later it is sent; five wrong codes end it: the right one no longer works
      codesNow += 61_000;
      await page.fill('#new_phone', second);
      await page.click('#send-phone-code');
      await page.waitForSelector('#phone-sent');
      const secondCode = await smsCode(second, 1);
      const wrong = secondCode === '000000' ? '111111' : '000000';
      for (let i = 0; i < 5; i++) {
        await page.fill('#phone_code', wrong);
        await page.click('#confirm-phone');
        await page.waitForSelector('#phone-error');
      }
      // the code is spent: the page asks for a number again, and the right code (posted anyway) is refused
      expect(await page.locator('#phone_code').count()).toBe(0);
      const csrf = await ctx.cookies().then((cs) => cs.find((c) => c.name === 'gh.account.csrf')!.value);
      const late = await page.request.post(`${h.url}/account`, {
        form: { csrf, action: 'phone_confirm', code: secondCode },
        maxRedirects: 0,
      });
      expect(late.status()).toBe(400);
      expect(await phoneRow(user.id)).toEqual({ phone_number: number, phone_verified: true });

      // a code past its 5 minutes is refused too
      codesNow += 61_000;
      await page.fill('#new_phone', second);
      await page.click('#send-phone-code');
      await page.waitForSelector('#phone-sent');
      const thirdCode = await smsCode(second, 2);
      codesNow += 5 * 60_000 + 1000;
      await page.reload();
      expect(await page.locator('#phone_code').count()).toBe(0);
      const expired = await page.request.post(`${h.url}/account`, {
        form: { csrf, action: 'phone_confirm', code: thirdCode },
        maxRedirects: 0,
      });
      expect(expired.status()).toBe(400);
      expect((await phoneRow(user.id))?.phone_number).toBe(number);

      // removed (a recent sign-in), with its notice
      await page.click('#remove-phone');
      await page.waitForSelector('#account-done');
      await shot(page, `account-26-phone-removed-${lang}`);
      expect(await phoneRow(user.id)).toEqual({ phone_number: null, phone_verified: false });
      expect(await page.textContent('#account-phone')).not.toContain('+');
      await mailTo(
        user.email,
        lang === 'mn' ? 'Таны утасны дугаар хасагдлаа' : 'Your phone number was removed',
      );
      await ctx.close();
    }

    it('adds a phone number verified by the code of a text message; tries, expiry and sends limited (en)', async () => {
      await phone('en');
    }, 90_000);

    it('the same in Mongolian', async () => {
      await phone('mn');
    }, 90_000);

    it("notices come in the person's language: the profile's locale, else the page's", async () => {
      // no profile language, a Mongolian page: the password notice in Mongolian
      const a = await fx.user({ profile: { locale: null } });
      const pa = await signIn(a, 'mn');
      await changePassword(pa.page, a);
      const [mn] = await mailTo(a.email, 'Таны нууц үг солигдлоо');
      expect(mn.text).toContain('Хэрэв энэ та биш бол');
      await pa.ctx.close();

      // the profile says English, the page is Mongolian: the e-mail change's notice and verification in English
      const b = await fx.user({ profile: { locale: 'en-US' } });
      const pb = await signIn(b, 'mn');
      const fresh = `new-${b.email}`;
      await pb.page.fill('#new_email', fresh);
      await pb.page.click('#change-email');
      await pb.page.waitForSelector('#account-done');
      const [old] = await mailTo(b.email, 'Your e-mail address was changed');
      expect(old.text).toContain('If it was not you');
      await mailTo(fresh, 'Verify your new e-mail address');
      await pb.ctx.close();

      // the profile says Mongolian, the page is English
      const c = await fx.user({ profile: { locale: 'mn-MN' } });
      const pc = await signIn(c, 'en');
      await changePassword(pc.page, c);
      await mailTo(c.email, 'Таны нууц үг солигдлоо');
      await pc.ctx.close();
    }, 60_000);

    async function devices(lang: 'en' | 'mn') {
      const user = await fx.user();
      const devicesOf = () =>
        fx.ds.rows<{ session_uid: string; user_agent: string; ip: string; last_seen_at: Date }>(
          `SELECT session_uid, user_agent, ip, last_seen_at FROM session_devices WHERE user_id = $1
          ORDER BY created_at`,
          [user.id],
        );
      // a sign-in records its browser: this one never reaches the account page (its answer is stopped)
      const phoneCtx = await browser.newContext({ userAgent: SAFARI_IPHONE });
      const phonePage = await phoneCtx.newPage();
      await phonePage.route(/\/account\?code=/, (route) => route.abort());
      await phonePage.goto(`${h.url}/account`);
      await phonePage.fill('input[name="username"]', user.email);
      await phonePage.fill('input[name="password"]', user.password);
      await phonePage.keyboard.press('Enter');
      await eventually(async () => (await devicesOf()).length === 1, {
        what: 'the sign-in recorded its device',
      });
      expect((await devicesOf())[0]).toMatchObject({ user_agent: SAFARI_IPHONE, ip: '127.0.0.1' });

      const laptop = await signIn(user, lang, FIREFOX_WINDOWS);
      const other = await signIn(user, lang);
      await laptop.page.reload();
      const items = laptop.page.locator('#sessions li');
      expect(await items.count()).toBe(3);
      // this browser first, marked
      const current = (await laptop.page.textContent('#current-session'))!;
      expect(current).toContain(lang === 'mn' ? 'Windows дээрх Firefox' : 'Firefox on Windows');
      expect(current).toContain(lang === 'mn' ? 'энэ хөтөч' : 'this browser');
      expect(current).toContain('127.0.0.1');
      const all = (await items.allTextContents()).join('\n');
      expect(all).toContain(lang === 'mn' ? 'iOS дээрх Safari' : 'Safari on iOS');
      expect(all).toContain(lang === 'mn' ? 'Linux дээрх Chrome' : 'Chrome on Linux');
      await shot(laptop.page, `account-30-devices-${lang}`);

      // the last activity follows the use: the other browser's visit moves its time on
      const before = (await devicesOf()).find(
        (d) => d.user_agent !== SAFARI_IPHONE && d.user_agent !== FIREFOX_WINDOWS,
      )!;
      await new Promise((r) => setTimeout(r, 20));
      await other.page.reload();
      const after = (await devicesOf()).find((d) => d.session_uid === before.session_uid)!;
      expect(new Date(after.last_seen_at).getTime()).toBeGreaterThan(new Date(before.last_seen_at).getTime());

      // every other session signed out, this one kept
      await laptop.page.click('#sign-out-others');
      await laptop.page.waitForSelector('#account-done');
      await shot(laptop.page, `account-31-others-signed-out-${lang}`);
      expect(await laptop.page.locator('#sessions li').count()).toBe(1);
      expect(await laptop.page.locator('#sign-out-others').count()).toBe(0);
      await other.page.goto(`${h.url}/account`);
      await other.page.waitForSelector('input[name="username"]');
      await phonePage.unroute(/\/account\?code=/);
      await phonePage.goto(`${h.url}/account`);
      await phonePage.waitForSelector('input[name="username"]');
      await laptop.page.reload();
      await laptop.page.waitForSelector('#current-session');
      await Promise.all([laptop.ctx.close(), other.ctx.close(), phoneCtx.close()]);
    }

    it('lists each session with its browser, address and last use, and signs out all others (en)', async () => {
      await devices('en');
    }, 60_000);

    it('the same in Mongolian', async () => {
      await devices('mn');
    }, 60_000);

    it.each(['en', 'mn'] as const)(
      'an old sign-in: "sign in again" makes it recent, no password needed for the change (%s)',
      async (lang) => {
        const user = await fx.user();
        const { ctx, page } = await signIn(user, lang);
        // this session signed in 10 minutes ago
        await fx.ds.exec(
          `UPDATE oidc_payloads SET payload = jsonb_set(payload, '{loginTs}', to_jsonb((payload->>'loginTs')::bigint - 600))
          WHERE model = 'Session' AND payload->>'accountId' = $1`,
          [user.id],
        );
        const number = newNumber();
        await page.fill('#new_phone', number);
        await page.click('#send-phone-code');
        await page.waitForSelector('#phone-error');
        await shot(page, `account-27-phone-recent-${lang}`);
        expect(texts.filter((t) => t.to === number)).toEqual([]);
        await page.click('#reauth');
        // the sign-in page again although the session lives (prompt=login)
        await page.waitForSelector('input[name="password"]');
        await page.fill('input[name="username"]', user.email);
        await page.fill('input[name="password"]', user.password);
        await page.keyboard.press('Enter');
        await page.waitForSelector('#signed-in-as');
        await page.fill('#new_phone', number);
        await page.click('#send-phone-code');
        await page.waitForSelector('#phone-sent');
        await smsCode(number, 1);
        await ctx.close();
      },
      60_000,
    );

    it('a wrong current password is a signin.failure (wrong_password) and counts toward the lockout', async () => {
      const user = await fx.user();
      const { ctx, page } = await signIn(user, 'en');
      const events = () =>
        fx.ds.rows<{ type: string; reason: string | null; client_id: string; method: string }>(
          `SELECT type, reason, client_id, details->>'method' AS method FROM events
          WHERE user_id = $1 AND type IN ('signin.failure', 'account.locked') ORDER BY id`,
          [user.id],
        );
      // the password form twice, the e-mail form (its password box) once: the third locks this address
      for (let i = 0; i < 2; i++) {
        await page.fill('#current_password', 'not-the-password');
        await page.fill('#new_password', `new-${user.password}`);
        await page.click('#change-password');
        await page.waitForSelector('#password-error');
      }
      // later than 5 minutes after the sign-in (the recent sign-in rule reads the second factors' clock)
      h.tokenServer.mfa.clock = () => new Date(Date.now() + 10 * 60_000);
      try {
        await page.fill('#new_email', `new-${user.email}`);
        await page.fill('#email-password', 'not-the-password');
        await page.click('#change-email');
        await page.waitForSelector('#email-error');
      } finally {
        h.tokenServer.mfa.clock = () => new Date();
      }
      const client = accountClientId(
        (await fx.ds.one<{ id: string }>(`SELECT instance_id AS id FROM users WHERE id = $1`, [user.id]))!.id,
      );
      await eventually(async () => (await events()).length === 4, { what: 'three failures and the lock' });
      const failure = {
        type: 'signin.failure',
        reason: 'wrong_password',
        client_id: client,
        method: 'account_page',
      };
      expect((await events()).sort((x, y) => x.type.localeCompare(y.type))).toEqual([
        { type: 'account.locked', reason: null, client_id: client, method: 'account_page' },
        failure,
        failure,
        failure,
      ]);
      // locked from this address: even the right current password is refused (and recorded as `locked`)
      await page.fill('#current_password', user.password);
      await page.fill('#new_password', `new-${user.password}`);
      await page.click('#change-password');
      await page.waitForSelector('#password-error');
      await eventually(async () => (await events()).at(-1)?.reason === 'locked', {
        what: 'the locked refusal',
      });
      // and so is the login page
      await ctx.close();
      const again = await browser.newContext();
      const login = await again.newPage();
      await login.goto(`${h.url}/account`);
      await login.fill('input[name="username"]', user.email);
      await login.fill('input[name="password"]', user.password);
      await login.keyboard.press('Enter');
      await login.waitForSelector('#login-error');
      await again.close();
    }, 60_000);
  },
);
