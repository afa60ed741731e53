import type { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { eventually, getFreePort, smtpSink, type SunkMail } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { BrowserAgent } from './support/browser-agent.js';
import { Fixtures, type TestClient } from './support/fixtures.js';

/** Sign-up: POST /signup, the e-mail verification link, and the sign-up page of /authorize. */
const mails: SunkMail[] = [];
const smtp = smtpSink(mails, { refuse: /^bounce/ });
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

  it('the verification e-mail is sent after the answer: a refused recipient is 201, its outbox row failed', async () => {
    const email = `bounce-${Date.now()}@example.test`;
    const res = await signup({ client_id: open.id, email, password: 'long-enough-1' });
    expect(res.status).toBe(201);
    expect(await users(email)).toBe(1);
    // a permanent SMTP refusal is not retried; the row keeps no body (the link)
    await eventually(
      async () =>
        (await fx.ds.one(`SELECT status FROM delivery_outbox WHERE recipient = $1`, [email]))?.status ===
        'failed',
      { what: 'the refused mail given up' },
    );
    const row = await fx.ds.one(`SELECT kind, payload, attempts FROM delivery_outbox WHERE recipient = $1`, [
      email,
    ]);
    expect(row).toEqual({ kind: 'signup-verification', payload: null, attempts: 1 });
  });

  it('the sign-up page of /authorize creates the account; the sign-in form follows, then consent', async () => {
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
    // the same answer as for a taken address (no account oracle): the sign-in form, the address filled in
    const signIn = await go(new URL(href, h.url).toString(), { csrf, email, password: 'long-enough-1' });
    expect(signIn.html).toContain('id="login-notice"');
    expect(await users(email)).toBe(1);
    const action = /<form method="post" action="([^"]+)"/.exec(signIn.html)![1];
    const consent = await go(new URL(action, h.url).toString(), {
      csrf,
      username: email,
      password: 'long-enough-1',
    });
    expect(consent.html).toContain('name="decision"');

    const noSignup = await go(url.toString().replace(open.id, closed.id));
    expect(noSignup.html).not.toContain('/signup"');
  });
});

describe('hole 9: mail and SMS as a relay', () => {
  // A token server of its own: low sign-up limits, a fast retry, and an SMTP server that this block stops and
  // starts (a new smtp-server each time, on the same port). Behind a trusted proxy, each test signs up from its own
  // forwarded address.
  const relayed: SunkMail[] = [];
  const relayServer = () => smtpSink(relayed);
  let relay: SMTPServer | undefined;
  let port: number;
  let h2: AuthHarness;
  let fx2: Fixtures;
  let client: TestClient;
  const LIMIT = 4;

  const startRelay = async () => {
    relay = relayServer();
    await new Promise<void>((r) => relay!.listen(port, '127.0.0.1', () => r()));
  };
  const stopRelay = async () => {
    await new Promise<void>((r) => relay!.close(() => r()));
    relay = undefined;
  };
  const signupFrom = (from: string, body: Record<string, string>) =>
    fetch(`${h2.url}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

  beforeAll(async () => {
    port = await getFreePort();
    await startRelay();
    h2 = await startAuth({
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      AUTH_TRUST_PROXY: 'true',
      SIGNUP_MAX_PER_ADDRESS_PER_HOUR: String(LIMIT),
      SIGNUP_MAX_PER_INSTANCE_PER_MINUTE: '1000',
      DELIVERY_RETRY_BASE_MS: '200',
      DELIVERY_POLL_MS: '100',
    });
    fx2 = new Fixtures(h2);
    client = await fx2.client({
      grantTypes: ['authorization_code'],
      metadata: { oauth: { allow_signup: true }, urls: { callbacks: [CALLBACK] } },
    });
  });
  afterAll(async () => {
    await h2?.close();
    if (relay) await stopRelay();
  });

  it('a burst of sign-ups from one address: at most the limit accepted (429 after), at most the limit of mails', async () => {
    const run = Date.now();
    const addresses = Array.from({ length: 12 }, (_, i) => `burst-${run}-${i}@example.test`);
    const answers = await Promise.all(
      addresses.map((email) =>
        signupFrom('203.0.113.7', { client_id: client.id, email, password: 'long-enough-1' }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 201);
    expect(accepted).toHaveLength(LIMIT);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a).toEqual({
        status: 429,
        body: expect.objectContaining({ error: 'too_many_requests', code: 'too_many_requests' }),
      });
    }
    const ours = () => relayed.filter((m) => m.to.startsWith(`burst-${run}-`));
    await eventually(() => ours().length === LIMIT, { timeoutMs: 10_000, what: 'the accepted mails' });
    // Every message is queued before its sign-up is answered and reaches the relay before its row is marked sent:
    // with no row of this burst left pending, no further mail can come of it.
    await eventually(
      async () =>
        (
          await fx2.ds.rows(
            `SELECT 1 FROM delivery_outbox WHERE recipient LIKE $1 AND status = 'pending' LIMIT 1`,
            [`burst-${run}-%`],
          )
        ).length === 0,
      { what: 'every row of the burst sent' },
    );
    expect(ours()).toHaveLength(LIMIT);
    // another address is not blocked by this one
    const other = await signupFrom('203.0.113.8', {
      client_id: client.id,
      email: `burst-other-${run}@example.test`,
      password: 'long-enough-1',
    });
    expect(other.status).toBe(201);
  }, 30_000);

  it('an X-Forwarded-For entry written by the client in front of the proxy’s own gets no budget of its own', async () => {
    const run = Date.now();
    const answers: { status: number }[] = [];
    // one trusted hop: the proxy appends the real address (203.0.113.9); what the client put before it is its own
    for (let i = 0; i < LIMIT + 3; i++)
      answers.push(
        await signupFrom(`198.51.100.${i + 1}, 203.0.113.9`, {
          client_id: client.id,
          email: `spoof-${run}-${i}@example.test`,
          password: 'long-enough-1',
        }),
      );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(LIMIT);
    expect(answers.slice(LIMIT).map((a) => a.status)).toEqual([429, 429, 429]);
  }, 30_000);

  it('a client name with CR/LF and <script> arrives escaped and trimmed', async () => {
    const evil = await fx2.client({
      grantTypes: ['authorization_code'],
      metadata: { oauth: { allow_signup: true }, urls: { callbacks: [CALLBACK] } },
    });
    await fx2.ds.rows(`UPDATE clients SET client_name = $2 WHERE id = $1`, [
      evil.id,
      `Evil App\r\nBcc: victim@example.test\r\n\r\n<script>alert(1)</script>${'x'.repeat(200)}`,
    ]);
    const email = `names-${Date.now()}@example.test`;
    const res = await signupFrom('203.0.113.20', { client_id: evil.id, email, password: 'long-enough-1' });
    expect(res.status).toBe(201);
    await eventually(() => relayed.some((m) => m.to === email), { what: 'the verification mail' });
    const body = relayed.find((m) => m.to === email)!.body.replace(/=\r?\n/g, '');
    const headers = body.slice(0, body.indexOf('\r\n\r\n'));
    expect(headers).not.toMatch(/^Bcc:/im);
    expect(relayed.some((m) => m.to.includes('victim@'))).toBe(false);
    // the HTML part carries the name escaped (the text part is not markup)
    const html = body.slice(body.indexOf('Content-Type: text/html'));
    expect(html).toContain('&lt;script&gt;');
    expect(html).not.toContain('<script>');

    expect(body).not.toContain('x'.repeat(80));
  });

  it('SMTP server down: sign-up answers 201 fast; the mail arrives once the server is up, exactly once', async () => {
    await stopRelay();
    const email = `down-${Date.now()}@example.test`;
    const t0 = Date.now();
    const res = await signupFrom('203.0.113.30', { client_id: client.id, email, password: 'long-enough-1' });
    expect(res.status).toBe(201);
    expect(Date.now() - t0).toBeLessThan(2000);
    const outbox = () =>
      fx2.ds.rows<{ status: string; last_error: string | null }>(
        `SELECT status, last_error FROM delivery_outbox WHERE recipient = $1`,
        [email],
      );
    await eventually(async () => !!(await outbox())[0]?.last_error, { what: 'a failed attempt while down' });
    expect(relayed.some((m) => m.to === email)).toBe(false);
    await startRelay();
    await eventually(() => relayed.some((m) => m.to === email), {
      timeoutMs: 15_000,
      what: 'the mail after the SMTP server came back',
    });
    // Once its row is marked sent no worker claims it again: exactly one mail by then.
    await eventually(async () => (await outbox())[0]?.status === 'sent', { what: 'the row marked sent' });
    expect(relayed.filter((m) => m.to === email)).toHaveLength(1);
    expect(relayed.find((m) => m.to === email)!.body).toMatch(/email-verification/);
  }, 30_000);
});
