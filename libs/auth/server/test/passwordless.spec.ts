import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually, smtpSink, type SunkMail } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { actionOf, BrowserAgent, fieldOf } from './support/browser-agent.js';
import {
  Fixtures,
  tokenRequest,
  type TestClient,
  type TestResource,
  type TestUser,
} from './support/fixtures.js';

/**
 * Passwordless one-time codes (document 2 part 4): POST /passwordless/start sends a code through a real local SMTP
 * server (smtp-server) or a real HTTP sink standing for the SMS gateway; grant_type=otp turns it into tokens.
 */
const mails: SunkMail[] = [];
const texts: { to: string; text: string }[] = [];
let smsStatus = 200;

const smtp = smtpSink(mails);
const sink = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString('utf8')));
  req.on('end', () => {
    if (smsStatus === 200) texts.push(JSON.parse(body) as { to: string; text: string });
    res.writeHead(smsStatus).end();
  });
});

let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;
let api: TestResource;
let user: TestUser;

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  const sinkPort = (sink.address() as AddressInfo).port;
  h = await startAuth({
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    SMS_WEBHOOK_URL: `http://127.0.0.1:${sinkPort}/sms`,
    // these tests send codes to one user back to back: the issuance limits have their own tests
    // (passwordless-limits.spec.ts)
    AUTH_OTP_SEND_INTERVAL_SEC: '0',
    AUTH_OTP_SENDS_PER_HOUR: '1000',
    DELIVERY_RETRY_BASE_MS: '200',
  });
  fx = new Fixtures(h);
  client = await fx.client({ grantTypes: ['otp', 'refresh_token'] });
  api = await fx.resource({ scopes: ['shop:buy'] });
  await fx.grant(client, api);
  user = await fx.user();
});
afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
  await new Promise<void>((r) => sink.close(() => r()));
});

const start = (username: string, extra: Record<string, unknown> = {}, as = client) =>
  fetch(`${h.url}/passwordless/start`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${as.id}:${as.secret}`).toString('base64')}`,
    },
    body: JSON.stringify({ client_id: as.id, username, options: { send_type: 'code' }, ...extra }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

const otpGrant = (username: string, otp: string) =>
  tokenRequest(
    h.url,
    { grant_type: 'otp', username, otp, resource: api.identifier, scope: 'openid offline_access' },
    { basic: { id: client.id, secret: client.secret! } },
  );

const codeIn = (s: string) => /\b(\d{6})\b/.exec(s)?.[1] ?? '';

describe('passwordless one-time codes', () => {
  it('e-mail: a code through SMTP, then grant_type=otp gives tokens once', async () => {
    const started = await start(user.email);
    expect(started).toEqual({ status: 200, body: { send_type: 'code', channel: 'email', expires_in: 300 } });
    await eventually(() => mails.some((m) => m.to === user.email), { what: 'the e-mail' });
    const code = codeIn(mails.filter((m) => m.to === user.email).at(-1)!.body);
    expect(code).toMatch(/^\d{6}$/);
    const stored = await fx.ds.rows(`SELECT code_hash FROM one_time_codes WHERE code_hash LIKE $1`, [
      `%${code}%`,
    ]);
    expect(stored).toEqual([]); // only a keyed hash is kept

    const t = await otpGrant(user.email, code);
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({
      access_token: expect.any(String),
      id_token: expect.any(String),
      scope: expect.stringContaining('shop:buy'),
    });
    const again = await otpGrant(user.email, code);
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('SMS: the code POSTed as JSON {to, text} to the gateway; a phone username signs in', async () => {
    const started = await start(user.phone);
    expect(started.body).toMatchObject({ channel: 'sms' });
    await eventually(() => texts.some((t) => t.to === user.phone), { what: 'the text message' });
    const code = codeIn(texts.filter((t) => t.to === user.phone).at(-1)!.text);
    expect((await otpGrant(user.phone, code)).status).toBe(200);
  });

  it('an unknown user gets the same answer and no message (no account oracle)', async () => {
    const before = mails.length;
    const started = await start('nobody-here@example.test');
    expect(started).toEqual({ status: 200, body: { send_type: 'code', channel: 'email', expires_in: 300 } });
    expect((await otpGrant('nobody-here@example.test', '123456')).body.error).toBe('invalid_grant');
    expect(mails.length).toBe(before);
  });

  it('five wrong attempts end the code; an expired code is refused; a new code replaces the old one', async () => {
    await start(user.email);
    await eventually(() => mails.filter((m) => m.to === user.email).length > 0);
    const count = mails.length;
    await start(user.email);
    await eventually(() => mails.length > count);
    const code = codeIn(mails.at(-1)!.body);
    for (let i = 0; i < 5; i++) {
      const wrong = String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');
      expect((await otpGrant(user.email, wrong)).body.error).toBe('invalid_grant');
    }
    expect((await otpGrant(user.email, code)).body.error).toBe('invalid_grant');

    const n = mails.length;
    await start(user.email);
    await eventually(() => mails.length > n);
    const fresh = codeIn(mails.at(-1)!.body);
    h.tokenServer.codes.clock = () => new Date(Date.now() + 6 * 60_000);
    try {
      expect((await otpGrant(user.email, fresh)).body.error).toBe('invalid_grant');
    } finally {
      h.tokenServer.codes.clock = () => new Date();
    }
  });

  it('a delivery failure does not change the answer: the message is retried and sent once the gateway works', async () => {
    smsStatus = 500;
    try {
      const sent = () => texts.filter((t) => t.to === user.phone).length;
      const before = sent();
      const res = await start(user.phone);
      expect(res.status).toBe(200);
      await eventually(
        async () =>
          Number(
            (await fx.ds.one(
              `SELECT coalesce(max(attempts), 0) AS n FROM delivery_outbox
                WHERE recipient = $1 AND status = 'pending'`,
              [user.phone],
            ))!.n,
          ) >= 1,
        { what: 'a failed try' },
      );
      smsStatus = 200;
      await eventually(() => sent() > before, { timeoutMs: 10_000, what: 'the text message after a retry' });
    } finally {
      smsStatus = 200;
    }
  });

  it('4xx: bad client credentials 401, a client without otp 400, a bad username or send_type 400', async () => {
    expect((await start(user.email, {}, { id: client.id, secret: 'wrong' })).status).toBe(401);
    const other = await fx.client({ grantTypes: ['password'] });
    const res = await start(user.email, {}, other);
    expect([res.status, res.body.error]).toEqual([400, 'unauthorized_client']);
    expect((await start('not an address')).status).toBe(400);
    expect((await start(user.email, { options: { send_type: 'fax' } })).status).toBe(400);
    expect((await start('', {})).status).toBe(400);
    const missing = await tokenRequest(
      h.url,
      { grant_type: 'otp', username: user.email },
      { basic: { id: client.id, secret: client.secret! } },
    );
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_request']);
  });

  it('the one-time code page of /authorize: username, then the code (field otp), then signed in', async () => {
    const browserClient = await fx.client({
      grantTypes: ['authorization_code', 'otp'],
      metadata: { urls: { callbacks: ['https://rp.example.test/cb'] } },
    });
    const browser = new BrowserAgent(h.url);
    const go = (url: string, form?: Record<string, string>) => browser.follow(url, form);
    const url = new URL(`${h.url}/authorize`);
    for (const [k, v] of Object.entries({
      client_id: browserClient.id,
      response_type: 'code',
      redirect_uri: 'https://rp.example.test/cb',
      scope: 'openid',
      code_challenge: 'YENcV5s6vQw_FNIKW1guPzkS0_Bep5uk0jGGlDWxg68',
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const login = await go(url.toString());
    const href = /<a href="([^"]+\/otp)">/.exec(login.html)![1];
    const ask = await go(new URL(href, h.url).toString());
    expect(ask.html).toMatch(/<label for="username">/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(ask.html)![1];
    const before = mails.length;
    const sent = await go(new URL(href, h.url).toString(), { csrf, username: user.email });
    expect(sent.html).toMatch(/<label for="otp">[\s\S]*name="otp"[\s\S]*autocomplete="one-time-code"/);
    await eventually(() => mails.length > before, { what: 'the code by e-mail' });
    const code = codeIn(mails.at(-1)!.body);
    const wrong = await go(new URL(href, h.url).toString(), {
      csrf,
      username: user.email,
      otp: String((Number(code) + 1) % 1_000_000).padStart(6, '0'),
    });
    expect(wrong.res.status).toBe(401);
    const consent = await go(new URL(href, h.url).toString(), { csrf, username: user.email, otp: code });
    expect(consent.html).toContain('name="decision"');
  });

  it('send_type link: an e-mail link signs the user in through /authorize and ends at redirect_url with a code', async () => {
    const CB = 'https://rp.example.test/linked';
    const linkClient = await fx.client({
      grantTypes: ['authorization_code', 'otp'],
      metadata: { urls: { callbacks: [CB] } },
    });
    const verifier = 'dBjftJeZ4CVP-mJ92K1qUdEpZhZdqPCI_R-aNxlhxYk';
    const challenge = 'YENcV5s6vQw_FNIKW1guPzkS0_Bep5uk0jGGlDWxg68';
    const link = { send_type: 'link' };
    const ok = await start(
      user.email,
      {
        options: link,
        redirect_url: CB,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 's1',
      },
      linkClient,
    );
    expect(ok).toEqual({ status: 200, body: { send_type: 'link', channel: 'email', expires_in: 300 } });
    await eventually(() => mails.some((m) => m.body.includes('/passwordless/verify')), { what: 'the link' });
    const body = mails
      .filter((m) => m.body.includes('/passwordless/verify'))
      .at(-1)!
      .body.replace(/=\r?\n/g, '')
      .replace(/=3D/g, '=');
    const url = /(http:\/\/127\.0\.0\.1:\d+\/passwordless\/verify\?token=[\w-]+)/.exec(body)![1];

    const browser2 = new BrowserAgent(h.url);
    const confirm = await browser2.follow(url);
    expect(confirm.html).toMatch(/Continue as u\*\*\*@auth\.test\?/);
    const consent = await browser2.follow(actionOf(confirm.html, h.url), {
      csrf: fieldOf(confirm.html, 'csrf'),
      token: fieldOf(confirm.html, 'token'),
    });
    expect(consent.html).not.toContain('name="password"'); // no login form: the link signed the user in
    expect(consent.html).toContain('name="decision"');
    const done = await browser2.follow(actionOf(consent.html, h.url), {
      csrf: fieldOf(consent.html, 'csrf'),
      decision: 'allow',
    });
    const landed = done.url;
    expect(landed.startsWith(CB)).toBe(true);
    const back = new URL(landed);
    expect(back.searchParams.get('state')).toBe('s1');
    const tokens = await tokenRequest(
      h.url,
      {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: CB,
        code_verifier: verifier,
      },
      { basic: { id: linkClient.id, secret: linkClient.secret! } },
    );
    expect([tokens.status, tokens.body.error_description]).toEqual([200, undefined]);
    const payload = JSON.parse(
      Buffer.from(String(tokens.body.id_token).split('.')[1], 'base64url').toString(),
    );
    expect(payload.sub).toBe(user.id);
    // the link works once
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(400);

    // 4xx of link requests
    const bad = (extra: Record<string, unknown>, name = user.email) =>
      start(name, { options: link, ...extra }, linkClient);
    expect((await bad({ redirect_url: 'https://evil.test/', code_challenge: challenge })).status).toBe(400);
    // without a code_challenge a confidential client's link is served (seed-departures.spec.ts); a method other
    // than S256 is not
    expect(
      (await bad({ redirect_url: CB, code_challenge: challenge, code_challenge_method: 'plain' })).status,
    ).toBe(400);
    expect((await bad({ redirect_url: CB, code_challenge: challenge }, user.phone)).status).toBe(400);
  });
});
