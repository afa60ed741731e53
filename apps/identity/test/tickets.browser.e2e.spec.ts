import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { chromium, type Browser } from 'playwright-core';
import { eventually, smtpSink, type SunkMail } from '@gatehouse/testing';
import { Management, uniq } from './management-harness.js';
import { passwordClient } from './ticket-pages.js';

/**
 * An invitation opened in a real browser (Debian's Chromium, driven by playwright-core): POST /users/invite sends
 * the e-mail through a real local SMTP server, Chromium opens its link on the token server, the invited user
 * chooses a password (the instance's rules shown first), is sent on to result_url (a local page: CSP form-action
 * lets the form's redirect reach it), and then signs in with that password. Screenshots go to
 * test-artifacts/browser/. Where Chromium is missing the test says so and is skipped.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const shots = path.join(root, 'test-artifacts', 'browser');

const mails: SunkMail[] = [];
const smtp = smtpSink(mails);

/** The application the invitation sends the user back to. */
const app = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' }).end('<h1 id="welcome">Welcome to the app</h1>');
});

if (!available) console.warn(`Chromium not found at ${CHROMIUM}: the ticket browser test is skipped`);

(available ? describe : describe.skip)('tickets in Chromium', () => {
  let m: Management;
  let browser: Browser;
  let appUrl = '';

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    m = await Management.start({
      SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    });
    await m.ds.rows(
      `UPDATE instances SET settings = jsonb_set(settings, '{password_validators}', $1::jsonb) WHERE is_default`,
      [
        JSON.stringify([
          {
            order: 1,
            validator: 'min_length',
            description: 'At least 10 characters',
            rules: '^[\\s\\S]{10,}$',
          },
        ]),
      ],
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await m?.close();
    await new Promise<void>((r) => smtp.close(() => r()));
    await new Promise<void>((r) => app.close(() => r()));
  });

  it('an invitation link sets a password that then signs in', async () => {
    const client = await passwordClient(m);
    const email = `${uniq('invitee')}@example.test`;
    const invited = (
      await m
        .call('post', '/api/v1/users/invite')
        .send({ user_email: email, client_id: client.id, result_url: `${appUrl}/welcome` })
        .expect(201)
    ).body as { id: string };
    await eventually(() => mails.some((x) => x.to === email), { what: 'the invitation e-mail' });
    const body = mails
      .find((x) => x.to === email)!
      .body.replace(/=\r?\n/g, '')
      .replace(/=3D/g, '=');
    const link = /(http:\/\/\S+\/tickets\/password-change\?ticket=[\w-]{43})/.exec(body)![1];

    const page = await browser.newPage({ locale: 'en-US' });
    await page.goto(link);
    await page.waitForSelector('input[name="password"]');
    await page.screenshot({ path: path.join(shots, 'ticket-1-choose-password.png'), fullPage: true });
    expect(await page.textContent('h1')).toBe('Choose your password');
    // keyboard only: the field is labelled and focused
    await page.getByLabel('New password').fill('short');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[role="alert"]');
    expect(await page.textContent('[role="alert"]')).toContain('At least 10 characters');
    await page.screenshot({ path: path.join(shots, 'ticket-2-password-rules.png'), fullPage: true });
    await page.getByLabel('New password').fill('my-chosen-password-1');
    await page.click('button[type="submit"]');
    await page.waitForSelector('#welcome');
    expect(page.url()).toBe(`${appUrl}/welcome`);
    await page.screenshot({ path: path.join(shots, 'ticket-3-welcome.png'), fullPage: true });

    const tokens = await client.login(email, 'my-chosen-password-1');
    expect(decodeJwt(tokens.access_token).sub).toBe(invited.id);
    const user = (await m.call('get', `/api/v2/users/${invited.id}`).expect(200)).body;
    expect(user).toMatchObject({ is_invited: true, user_email_verified: true });

    // the link works once
    await page.goto(link);
    await page.waitForSelector('[role="alert"]');
    await page.screenshot({ path: path.join(shots, 'ticket-4-used.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it('an e-mail verification link, in Mongolian, verifies on the button', async () => {
    const email = `${uniq('verify')}@example.test`;
    const user = (await m.call('post', '/api/v1/users').send({ user_email: email }).expect(201)).body as {
      id: string;
    };
    const url = (
      await m.call('post', '/api/v2/tickets/email-verification').send({ user_id: user.id }).expect(201)
    ).body.ticket as string;
    const page = await browser.newPage({ locale: 'mn-MN' });
    await page.goto(url);
    await page.waitForSelector('button[type="submit"]');
    expect(await page.getAttribute('html', 'lang')).toBe('mn');
    await page.screenshot({ path: path.join(shots, 'ticket-5-verify-email-mn.png'), fullPage: true });
    await page.click('button[type="submit"]');
    await page.waitForSelector('[role="status"]');
    expect(await page.textContent('[role="status"]')).toBe('Таны и-мэйл хаяг баталгаажлаа.');
    expect((await m.call('get', `/api/v1/users/${user.id}`).expect(200)).body.user_email_verified).toBe(true);
    await page.close();
  }, 60_000);
});
