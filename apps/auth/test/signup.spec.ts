import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { SMTPServer } from 'smtp-server';
import { eventually } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { BrowserAgent } from './support/browser-agent.js';
import { Fixtures, type TestClient } from './support/fixtures.js';

/** Sign-up: POST /signup, the e-mail verification link, and the sign-up page of /authorize (issue 14). */
const mails: { to: string; body: string }[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onRcptTo(address, _session, done) {
    if (address.address.startsWith('bounce')) return done(new Error('mailbox unavailable'));
    done();
  },
  onData(stream, session, done) {
    let body = '';
    stream.on('data', (d: Buffer) => (body += d.toString('utf8')));
    stream.on('end', () => {
      mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), body });
      done();
    });
  },
});
const CALLBACK = 'https://rp.example.test/cb';

let h: AuthHarness;
let fx: Fixtures;
let open: TestClient;
let closed: TestClient;

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  h = await startAuth({ SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}` });
  fx = new Fixtures(h);
  open = await fx.client({
    grantTypes: ['authorization_code'],
    metadata: { oauth: { allow_signup: true }, urls: { callbacks: [CALLBACK] } },
  });
  closed = await fx.client({
    grantTypes: ['authorization_code'],
    metadata: { urls: { callbacks: [CALLBACK] } },
  });
});
afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
});

const signup = (body: Record<string, string>, json = true) =>
  fetch(`${h.url}/signup`, {
    method: 'POST',
    headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
    body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

const users = async (email: string) =>
  (await fx.ds.rows(`SELECT id, email_verified, password_hash FROM users WHERE user_email = $1`, [email]))
    .length;

describe('sign-up', () => {
  it('POST /signup: 201 without secrets, a verification link by e-mail that works once', async () => {
    const email = `new-${Date.now()}@example.test`;
    const res = await signup({ client_id: open.id, email, password: 'long-enough-1', name: 'New Person' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      email,
      phone_number: null,
      email_verified: false,
      phone_verified: false,
    });
    await eventually(() => mails.some((m) => m.to === email), { what: 'the verification e-mail' });
    const link = /(http:\/\/127\.0\.0\.1:\d+\/email-verification\?token=[\w-]+)/.exec(
      // quoted-printable: soft line breaks, and = written as =3D
      mails
        .find((m) => m.to === email)!
        .body.replace(/=\r?\n/g, '')
        .replace(/=3D/g, '='),
    )![1];
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const [row] = await fx.ds.rows(`SELECT email_verified FROM users WHERE id = $1`, [res.body.id]);
    expect(row.email_verified).toBe(true);
    expect((await fetch(link)).status).toBe(400);
  });

  it('4xx: a client without sign-up 403, a taken e-mail 409, a short password or no e-mail/phone 400; a phone signs up (form body)', async () => {
    const email = `dup-${Date.now()}@example.test`;
    expect((await signup({ client_id: closed.id, email, password: 'long-enough-1' })).status).toBe(403);
    expect((await signup({ client_id: open.id, email, password: 'long-enough-1' })).status).toBe(201);
    const dup = await signup({ client_id: open.id, email: email.toUpperCase(), password: 'long-enough-1' });
    expect([dup.status, dup.body.error]).toEqual([409, 'conflict']);
    expect((await signup({ client_id: open.id, email: `x${email}`, password: 'short' })).status).toBe(400);
    expect((await signup({ client_id: open.id, password: 'long-enough-1' })).status).toBe(400);
    expect((await signup({ client_id: 'nope', email: `y${email}`, password: 'long-enough-1' })).status).toBe(
      400,
    );
    const phone = await signup(
      { client_id: open.id, phone: '+976 8811 2233', password: 'long-enough-1' },
      false,
    );
    expect(phone).toMatchObject({ status: 201, body: { phone_number: '+97688112233' } });
  });

  it('an e-mail that cannot be delivered is a 503 and no account is left', async () => {
    const email = `bounce-${Date.now()}@example.test`;
    const res = await signup({ client_id: open.id, email, password: 'long-enough-1' });
    expect([res.status, res.body.error]).toEqual([503, 'temporarily_unavailable']);
    expect(await users(email)).toBe(0);
  });

  it('the sign-up page of /authorize creates the account and signs it in', async () => {
    const browser = new BrowserAgent(h.url);
    const go = (url: string, form?: Record<string, string>) => browser.follow(url, form);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = new URL(`${h.url}/authorize`);
    for (const [k, v] of Object.entries({
      client_id: open.id,
      response_type: 'code',
      redirect_uri: CALLBACK,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const login = await go(url.toString());
    const href = /<a href="([^"]+\/signup)">/.exec(login.html)![1];
    const page = await go(new URL(href, h.url).toString());
    expect(page.html).toMatch(/<label for="email">[\s\S]*name="email"[\s\S]*name="password"/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1];
    const email = `page-${Date.now()}@example.test`;
    const weak = await go(new URL(href, h.url).toString(), { csrf, email, password: 'short' });
    expect(weak.res.status).toBe(400);
    expect(weak.html).toContain('role="alert"');
    const consent = await go(new URL(href, h.url).toString(), { csrf, email, password: 'long-enough-1' });
    expect(consent.html).toContain('name="decision"');
    expect(await users(email)).toBe(1);

    const noSignup = await go(url.toString().replace(open.id, closed.id));
    expect(noSignup.html).not.toContain('/signup"');
  });
});
