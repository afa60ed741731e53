import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { HTTP_FOUNDATION, type HttpFoundation } from '@gatehouse/http';
import { sealedIn, seedInstance } from '@gatehouse/identity-data';
import { eventually, smtpSink, type SunkMail } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { actionOf, BrowserAgent, fieldOf } from './support/browser-agent.js';
import { Fixtures, tokenRequest, type TestClient, type TestUser } from './support/fixtures.js';

/**
 * The budgets of passwordless sign-in with the default settings: how many messages one account or one address
 * gets (1 a minute, 5 an hour), how many wrong codes one account takes across codes before a lock (10 in 15
 * minutes, then 15 minutes, doubling), and the confirmation page of a sign-in link (a POST with a CSRF token).
 * Messages go to a real local SMTP server and a real HTTP sink standing for the SMS gateway.
 */
const mails: SunkMail[] = [];
const texts: { to: string; text: string }[] = [];

const smtp = smtpSink(mails);
const sink = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString('utf8')));
  req.on('end', () => {
    texts.push(JSON.parse(body) as { to: string; text: string });
    res.writeHead(200).end();
  });
});

let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;

const CB = 'https://rp.example.test/linked';
const VERIFIER = 'dBjftJeZ4CVP-mJ92K1qUdEpZhZdqPCI_R-aNxlhxYk';
const CHALLENGE = 'YENcV5s6vQw_FNIKW1guPzkS0_Bep5uk0jGGlDWxg68';

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
  h = await startAuth({
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    SMS_WEBHOOK_URL: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/sms`,
  });
  fx = new Fixtures(h);
  client = await fx.client({
    grantTypes: ['otp', 'authorization_code'],
    metadata: { urls: { callbacks: [CB] } },
  });
});
afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
  await new Promise<void>((r) => sink.close(() => r()));
});
afterEach(() => {
  h.tokenServer.codes.clock = () => new Date();
});

/** Moves the clock of codes and their budgets `sec` seconds ahead of now. */
const at = (sec: number) => {
  h.tokenServer.codes.clock = () => new Date(Date.now() + sec * 1000);
};

const start = (username: string, extra: Record<string, unknown> = {}, as = client) =>
  fetch(`${h.url}/passwordless/start`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${as.id}:${as.secret}`).toString('base64')}`,
    },
    body: JSON.stringify({ username, options: { send_type: 'code' }, ...extra }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

const otpGrant = (username: string, otp: string) =>
  tokenRequest(
    h.url,
    { grant_type: 'otp', username, otp, scope: 'openid' },
    { basic: { id: client.id, secret: client.secret! } },
  );

const mailsTo = (to: string) => mails.filter((m) => m.to.toLowerCase() === to.toLowerCase());
const codeIn = (s: string) => /\b(\d{6})\b/.exec(s)?.[1] ?? '';
const wrongFor = (code: string, i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');
/**
 * Every message queued for `to` so far has left the delivery outbox. A message is queued in the transaction of the
 * request that sends it, before its answer, and reaches the sink before its row is marked sent: after this, what
 * the sink holds for `to` is all it will get from the requests answered so far.
 */
const settle = (to: string) =>
  eventually(
    async () =>
      (
        await fx.ds.rows(
          `SELECT 1 FROM delivery_outbox WHERE lower(recipient) = lower($1) AND status = 'pending' LIMIT 1`,
          [to],
        )
      ).length === 0,
    { what: `every message to ${to} delivered` },
  );

/** Sends a code (at the current clock) and returns it as delivered. */
async function sendCode(u: TestUser): Promise<string> {
  const before = mailsTo(u.email).length;
  expect((await start(u.email)).status).toBe(200);
  await eventually(() => mailsTo(u.email).length > before, { what: 'the code by e-mail' });
  return codeIn(mailsTo(u.email).at(-1)!.body);
}

const CODE_ANSWER = { status: 200, body: { send_type: 'code', channel: 'email', expires_in: 300 } };

describe('hole 5: one-time codes re-issued without limit', () => {
  it('a burst of 40 requests for one account sends one message; the answer is the same over the limit', async () => {
    const u = await fx.user();
    const answers = await Promise.all(Array.from({ length: 40 }, () => start(u.email)));
    for (const a of answers) expect(a).toEqual(CODE_ANSWER);
    await eventually(() => mailsTo(u.email).length > 0, { what: 'the first code' });
    await settle(u.email);
    expect(mailsTo(u.email)).toHaveLength(1);

    // the same account by SMS within the minute: the same kind of answer, no message (the limit is per account)
    const sms = await start(u.phone);
    expect(sms).toEqual({ status: 200, body: { send_type: 'code', channel: 'sms', expires_in: 300 } });
    await settle(u.phone);
    expect(texts.filter((t) => t.to === u.phone)).toHaveLength(0);

    // a minute later, one more; at most 5 in an hour
    for (let i = 1; i <= 6; i++) {
      at(61 * i);
      expect(await start(u.email)).toEqual(CODE_ANSWER);
    }
    await eventually(() => mailsTo(u.email).length >= 5, { what: 'five codes in the hour' });
    await settle(u.email);
    expect(mailsTo(u.email)).toHaveLength(5);
    // the hour over: sent again
    at(3700);
    await start(u.email);
    await eventually(() => mailsTo(u.email).length === 6, { what: 'a code in the next hour' });
  }, 30_000);

  it('one destination shared by accounts of two instances gets one message a minute', async () => {
    const a = await fx.user();
    const b = await fx.ds.transaction((tx) => seedInstance(tx, { name: `b-${randomUUID()}` }, fx.box));
    const otherClient = { id: randomUUID(), secret: `s-${randomBytes(16).toString('hex')}` };
    await fx.ds.exec(
      `INSERT INTO clients (id, instance_id, client_name, client_secret_enc, client_metadata)
       VALUES ($1, $2, 'b-otp', $3, $4::jsonb)`,
      [
        otherClient.id,
        b.instanceId,
        fx.box.encrypt(otherClient.secret, sealedIn.clientSecret(otherClient.id)),
        '{"grant_types":["otp"]}',
      ],
    );
    await fx.ds.exec(`INSERT INTO users (instance_id, user_email, email_verified) VALUES ($1, $2, true)`, [
      b.instanceId,
      a.email.toUpperCase(),
    ]);
    expect(await start(a.email)).toEqual(CODE_ANSWER);
    await eventually(() => mailsTo(a.email).length === 1, { what: 'the code of instance A' });
    expect(await start(a.email, {}, otherClient)).toEqual(CODE_ANSWER);
    await settle(a.email);
    expect(mailsTo(a.email)).toHaveLength(1);
    at(61);
    await start(a.email, {}, otherClient);
    await eventually(() => mailsTo(a.email).length === 2, { what: 'the code of instance B, a minute later' });
  }, 30_000);

  it('10 wrong codes across codes lock the account (even the right code fails), then back-off', async () => {
    const u = await fx.user();
    const c1 = await sendCode(u);
    for (let i = 0; i < 4; i++) expect((await otpGrant(u.email, wrongFor(c1, i))).status).toBe(400);
    at(61);
    const c2 = await sendCode(u);
    for (let i = 0; i < 4; i++) expect((await otpGrant(u.email, wrongFor(c2, i))).status).toBe(400);
    at(122);
    const c3 = await sendCode(u);
    for (let i = 0; i < 2; i++) expect((await otpGrant(u.email, wrongFor(c3, i))).status).toBe(400);
    // ten failures: the live code's right value is refused, with the answer of a wrong one
    const locked = await otpGrant(u.email, c3);
    expect([locked.status, locked.body.error, locked.body.error_description]).toEqual([
      400,
      'invalid_grant',
      'invalid or expired one-time code',
    ]);
    const row = await fx.ds.one<{ locked: boolean }>(
      `SELECT locked_until > now() AS locked FROM otp_failures WHERE user_id = $1`,
      [u.id],
    );
    expect(row?.locked).toBe(true);
    // while locked nothing is sent, with the same answer
    at(183);
    expect(await start(u.email)).toEqual(CODE_ANSWER);
    await settle(u.email);
    expect(mailsTo(u.email)).toHaveLength(3);

    // the first lock (15 minutes) is over: a code is sent again; ten more failures lock for twice as long
    at(122 + 901);
    const c4 = await sendCode(u);
    for (let i = 0; i < 10; i++) expect((await otpGrant(u.email, wrongFor(c4, i))).status).toBe(400);
    at(122 + 901 + 901);
    expect(await start(u.email)).toEqual(CODE_ANSWER);
    await settle(u.email);
    expect(mailsTo(u.email)).toHaveLength(4);
    at(122 + 901 + 1801);
    const c5 = await sendCode(u);
    const ok = await otpGrant(u.email, c5);
    expect([ok.status, ok.body.error_description]).toEqual([200, undefined]);
    // a success clears the count
    expect(await fx.ds.rows(`SELECT 1 FROM otp_failures WHERE user_id = $1`, [u.id])).toEqual([]);
  }, 30_000);

  it('wrong codes on the sign-in page count in the same budget', async () => {
    const u = await fx.user();
    const c1 = await sendCode(u);
    for (let i = 0; i < 4; i++) expect((await otpGrant(u.email, wrongFor(c1, i))).status).toBe(400);
    at(61);
    const c2 = await sendCode(u);
    for (let i = 0; i < 4; i++) expect((await otpGrant(u.email, wrongFor(c2, i))).status).toBe(400);
    at(122);
    const c3 = await sendCode(u);
    const browser = new BrowserAgent(h.url);
    const url = new URL(`${h.url}/authorize`);
    for (const [k, v] of Object.entries({
      client_id: client.id,
      response_type: 'code',
      redirect_uri: CB,
      scope: 'openid',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const login = await browser.follow(url.toString());
    const href = new URL(/<a href="([^"]+\/otp)">/.exec(login.html)![1], h.url).toString();
    const ask = await browser.follow(href);
    const csrf = fieldOf(ask.html, 'csrf');
    for (let i = 0; i < 2; i++) {
      const wrong = await browser.follow(href, { csrf, username: u.email, otp: wrongFor(c3, i) });
      expect(wrong.res.status).toBe(401);
    }
    // the tenth failure was on the page: the right code is refused there too
    const page = await browser.follow(href, { csrf, username: u.email, otp: c3 });
    expect(page.res.status).toBe(401);
    expect(page.html).not.toContain('name="decision"');
  }, 30_000);

  it('no one-time code or link is written to the log, whatever the outcome', async () => {
    const u = await fx.user();
    const log = captureLogs();
    try {
      const code = await sendCode(u);
      expect((await otpGrant(u.email, wrongFor(code, 0))).status).toBe(400);
      expect((await otpGrant(u.email, code)).status).toBe(200);
      at(61);
      const link = await linkFor(u);
      const token = new URL(link).searchParams.get('token')!;
      const browser = new BrowserAgent(h.url);
      const page = await browser.follow(link);
      const action = actionOf(page.html, h.url);
      expect((await browser.request(action, { token, csrf: 'forged' })).status).toBe(403);
      expect((await browser.follow(action, { token, csrf: fieldOf(page.html, 'csrf') })).html).toContain(
        'name="decision"',
      );
      expect((await browser.request(link)).status).toBe(400);
      // a body the server cannot parse, carrying a code
      await fetch(`${h.url}/passwordless/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"username": "${u.email}", "otp": "${code}"`,
      });
      expect(log.lines.length).toBeGreaterThan(5);
      const all = log.lines.join('');
      expect(all).toContain('/passwordless/verify');
      expect(all).not.toContain(code);
      expect(all).not.toContain(token);
    } finally {
      log.restore();
    }
  }, 30_000);
});

/**
 * Every line the token server's loggers write from now on (its own, the delivery's and the request lines), at the
 * most detailed level, kept here instead of written; `restore` puts the loggers back.
 */
function captureLogs(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const loggers = [
    (h.tokenServer as unknown as { log: Logger }).log,
    h.built.app.get<HttpFoundation>(HTTP_FOUNDATION).logger,
  ];
  const undo = loggers.map((log) => {
    const stream = (log as unknown as Record<symbol, { write: (s: string) => boolean }>)[
      pino.symbols.streamSym
    ];
    const write = stream.write;
    const level = log.level;
    stream.write = (line: string) => (lines.push(line), true);
    log.level = 'trace';
    return () => {
      stream.write = write;
      log.level = level;
    };
  });
  return { lines, restore: () => undo.forEach((u) => u()) };
}

/** A sign-in link for `u`, as delivered by e-mail. */
async function linkFor(u: TestUser): Promise<string> {
  const before = mailsTo(u.email).length;
  const started = await start(u.email, {
    options: { send_type: 'link' },
    redirect_url: CB,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 's1',
  });
  expect(started).toEqual({ status: 200, body: { send_type: 'link', channel: 'email', expires_in: 300 } });
  await eventually(() => mailsTo(u.email).length > before, { what: 'the link' });
  const body = mailsTo(u.email)
    .at(-1)!
    .body.replace(/=\r?\n/g, '')
    .replace(/=3D/g, '=');
  return /(http:\/\/127\.0\.0\.1:\d+\/passwordless\/verify\?token=[\w-]+)/.exec(body)![1];
}

const linkRow = (u: TestUser) =>
  fx.ds.one<{ consumed: boolean }>(
    `SELECT consumed_at IS NOT NULL AS consumed FROM one_time_codes WHERE user_id = $1 AND channel = 'signin-link'
      ORDER BY created_at DESC LIMIT 1`,
    [u.id],
  );

describe('hole 8: zero-click login CSRF', () => {
  it('GET of the link only asks; a POST without or with a bad CSRF token is refused; with it, signed in', async () => {
    const u = await fx.user();
    const link = await linkFor(u);
    const browser = new BrowserAgent(h.url, { 'accept-language': 'en' });

    // opening the link: a page asking to continue as the masked address; nobody signed in, nothing used up
    const res = await browser.request(link);
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const setCookies = res.headers.getSetCookie();
    expect(setCookies.some((c) => c.startsWith('gh.pl='))).toBe(false);
    const html = await res.text();
    const masked = `${u.email[0]}***@auth.test`;
    expect(html).toContain(`Continue as ${masked}?`);
    expect(html).not.toContain(u.email);
    expect(html).toMatch(/<form method="post"/);
    expect((await linkRow(u))?.consumed).toBe(false);
    // a mail scanner fetching it twice changes nothing
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(200);
    expect((await linkRow(u))?.consumed).toBe(false);

    const action = actionOf(html, h.url);
    const token = fieldOf(html, 'token');
    const csrf = fieldOf(html, 'csrf');
    expect(csrf).not.toBe('');
    // a cross-site form: no CSRF cookie with it
    const forged = await fetch(action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({ token, csrf }).toString(),
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    // the cookie with a wrong token in the form
    const bad = await browser.request(action, { token, csrf: `${csrf.slice(0, -2)}xx` });
    expect(bad.status).toBe(403);
    const none = await browser.request(action, { token });
    expect(none.status).toBe(403);
    expect((await linkRow(u))?.consumed).toBe(false);

    // the person's click: signed in, at the consent page, then back at the client with a code
    const consent = await browser.follow(action, { token, csrf });
    expect(consent.html).toContain('name="decision"');
    expect((await linkRow(u))?.consumed).toBe(true);
    const done = await browser.follow(actionOf(consent.html, h.url), {
      csrf: fieldOf(consent.html, 'csrf'),
      decision: 'allow',
    });
    expect(done.url.startsWith(CB)).toBe(true);
    const back = new URL(done.url);
    expect(back.searchParams.get('state')).toBe('s1');
    const tokens = await tokenRequest(
      h.url,
      {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: CB,
        code_verifier: VERIFIER,
      },
      { basic: { id: client.id, secret: client.secret! } },
    );
    expect(tokens.status).toBe(200);
    const claims = JSON.parse(
      Buffer.from(String(tokens.body.id_token).split('.')[1], 'base64url').toString(),
    );
    expect(claims.sub).toBe(u.id);

    // used: the link shows that it is not valid any more, and a second POST signs nobody in
    expect((await browser.request(link)).status).toBe(400);
    const again = await browser.request(action, { token, csrf });
    expect([400, 403]).toContain(again.status);
    expect(again.headers.get('location')).toBeNull();
  }, 30_000);

  it('the confirmation page speaks Mongolian when asked', async () => {
    const u = await fx.user();
    const link = await linkFor(u);
    const res = await fetch(`${link}&ui_locales=mn`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<html lang="mn">');
    expect(html).toContain(`${u.email[0]}***@auth.test`);
    const byHeader = await fetch(link, { headers: { 'accept-language': 'mn-MN,mn;q=0.9' } });
    expect(await byHeader.text()).toContain('<html lang="mn">');
  }, 30_000);
});
