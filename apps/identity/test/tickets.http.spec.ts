import * as oidc from 'openid-client';
import { eventually } from '@gatehouse/testing';
import { verifyPassword } from '@gatehouse/identity-data';
import { Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';
import { oauthError, openTicket, passwordClient, submitTicket } from './ticket-pages.js';

/**
 * Tickets (POST /tickets/password-change, /tickets/email-verification) through both real services: the management
 * API makes the link, the token server's page uses it (single use, expiry, CSRF, password rules).
 */
let m: Management;
let writer: { token: string };

beforeAll(async () => {
  m = await Management.start();
  writer = await m.caller(['tickets:write']);
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
        { order: 2, validator: 'digit', description: 'At least one digit', rules: '\\d' },
      ]),
    ],
  );
});
afterAll(async () => {
  await m?.close();
});

const email = () => `${uniq('t')}@example.test`;

async function newUser(body: Record<string, unknown> = {}) {
  const mail = email();
  const u = (
    await m
      .call('post', '/api/v1/users')
      .send({ user_email: mail, ...body })
      .expect(201)
  ).body as {
    id: string;
  };
  return { id: u.id, email: mail };
}

const hashOf = async (id: string) =>
  (
    await m.ds.rows<{ password_hash: string | null }>(`SELECT password_hash FROM users WHERE id = $1`, [id])
  )[0].password_hash;

describe.each(VERSIONS)('Tickets under /api/%s', (v: Version) => {
  const base = `/api/${v}/tickets`;
  const ticket = (kind: string, body: Record<string, unknown>, token?: string) =>
    m.call('post', `${base}/${kind}`, token).send(body);

  it('password-change: 201 {ticket} on the token server; the page sets a password once, then the link is dead', async () => {
    const user = await newUser();
    const res = await ticket('password-change', { user_id: user.id }, writer.token).expect(201);
    expect(Object.keys(res.body)).toEqual(['ticket']);
    const url = res.body.ticket as string;
    expect(url).toMatch(new RegExp(`^${m.auth.url}/tickets/password-change\\?ticket=[\\w-]{43}$`));
    // only a keyed hash is kept
    const token = new URL(url).searchParams.get('ticket')!;
    const [row] = await m.ds.rows<{ token_hash: string; kind: string; expires_at: Date; created_by: string }>(
      `SELECT token_hash, kind, expires_at, created_by FROM tickets WHERE user_id = $1`,
      [user.id],
    );
    expect(row.kind).toBe('password_change');
    expect(row.token_hash).not.toContain(token);
    expect(JSON.stringify(await m.ds.rows(`SELECT * FROM tickets`))).not.toContain(token);
    // default life: 1 day
    expect(Math.abs(row.expires_at.getTime() - Date.now() - 86_400_000)).toBeLessThan(60_000);

    const page = await openTicket(url);
    expect(page.status).toBe(200);
    expect(page.html).toContain('name="password"');
    expect(page.html).toContain('<button type="submit">');
    expect(page.html).toContain(user.email);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.cookie).toMatch(/^gh\.ticket\.csrf=/);

    // the instance's rules: the form again (400) naming them; the ticket still works
    const weak = await submitTicket(m.auth.url, page, { password: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.html).toContain('At least 10 characters');
    expect(weak.html).toContain('At least one digit');
    expect(await hashOf(user.id)).toBeNull();

    const done = await submitTicket(m.auth.url, page, { password: 'a-good-password-1' });
    expect(done.status).toBe(200);
    expect(done.html).toContain('role="status"');
    const hash = await hashOf(user.id);
    expect(hash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(hash!, 'a-good-password-1')).toBe(true);
    // not asked to: the e-mail stays unverified
    expect((await m.call('get', `/api/${v}/users/${user.id}`).expect(200)).body.user_email_verified).toBe(
      false,
    );

    // single use: the page and the form both refuse it now
    const again = await submitTicket(m.auth.url, page, { password: 'another-password-2' });
    expect(again.status).toBe(400);
    expect(again.html).toContain('role="alert"');
    expect((await openTicket(url)).status).toBe(400);
    expect(await verifyPassword((await hashOf(user.id))!, 'a-good-password-1')).toBe(true);
  });

  it('the new password signs in; the grants made with the old one are revoked; mark_email_as_verified', async () => {
    const client = await passwordClient(m);
    const user = await newUser({ password: 'the-old-password-1' });
    const before = await client.login(user.email, 'the-old-password-1');
    const url = (
      await ticket('password-change', { user_id: user.id, mark_email_as_verified: true }).expect(201)
    ).body.ticket as string;
    const page = await openTicket(url, { 'accept-language': 'mn-MN,mn;q=0.9' });
    expect(page.html).toContain('<html lang="mn">');
    // the answer speaks the page's language, whatever the form post's Accept-Language
    const done = await submitTicket(m.auth.url, page, { password: 'the-new-password-2' });
    expect(done.status).toBe(200);
    expect(done.html).toContain('<html lang="mn">');
    const after = await client.login(user.email, 'the-new-password-2');
    expect(after.access_token).toEqual(expect.any(String));
    expect((await oauthError(client.login(user.email, 'the-old-password-1'))).error).toBe('invalid_grant');
    expect((await oauthError(oauthRefresh(client, before.refresh_token!))).error).toBe('invalid_grant');
    expect(await m.tokenInfo(before.access_token)).toEqual({ active: false });
    expect((await m.call('get', `/api/${v}/users/${user.id}`).expect(200)).body.user_email_verified).toBe(
      true,
    );
  });

  it('result_url: success redirects there (303), and the form may post to reach it (CSP form-action)', async () => {
    const user = await newUser();
    const url = (
      await ticket('password-change', {
        user_id: user.id,
        result_url: 'https://app.example.test/welcome?x=1',
      }).expect(201)
    ).body.ticket as string;
    const page = await openTicket(url);
    expect(page.headers.get('content-security-policy')).toContain(
      "form-action 'self' https://app.example.test",
    );
    const done = await submitTicket(m.auth.url, page, { password: 'a-good-password-3' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('https://app.example.test/welcome?x=1');
  });

  it('expires after ttl_sec: the page shows an error (400) and the form does nothing', async () => {
    const user = await newUser();
    const url = (await ticket('password-change', { user_id: user.id, ttl_sec: 1 }).expect(201)).body
      .ticket as string;
    const page = await openTicket(url);
    expect(page.status).toBe(200);
    await eventually(async () => (await openTicket(url)).status === 400, {
      timeoutMs: 5000,
      what: 'the ticket expiring',
    });
    const late = await submitTicket(m.auth.url, page, { password: 'a-good-password-4' });
    expect(late.status).toBe(400);
    expect(await hashOf(user.id)).toBeNull();
  });

  it('unknown or malformed links and a form without its CSRF cookie are refused', async () => {
    const user = await newUser();
    const url = (await ticket('password-change', { user_id: user.id }).expect(201)).body.ticket as string;
    for (const bad of ['x', 'A'.repeat(43), '', `${new URL(url).searchParams.get('ticket')}x`]) {
      const p = await openTicket(`${m.auth.url}/tickets/password-change?ticket=${encodeURIComponent(bad)}`);
      expect(p.status).toBe(400);
      expect(p.html).toContain('role="alert"');
    }
    // an e-mail verification page does not take a password-change ticket
    expect((await openTicket(url.replace('password-change', 'email-verification'))).status).toBe(400);
    const page = await openTicket(url);
    const forged = await submitTicket(
      m.auth.url,
      page,
      { password: 'a-good-password-5' },
      { cookie: 'gh.ticket.csrf=other' },
    );
    expect(forged.status).toBe(403);
    const noCookie = await submitTicket(
      m.auth.url,
      { ...page, cookie: undefined },
      { password: 'a-good-password-5' },
    );
    expect(noCookie.status).toBe(403);
    expect(await hashOf(user.id)).toBeNull();
  });

  it('email-verification: a page with a button, the POST verifies the e-mail once (5 days by default)', async () => {
    const user = await newUser();
    const url = (await ticket('email-verification', { user_id: user.id }, writer.token).expect(201)).body
      .ticket as string;
    expect(url).toMatch(new RegExp(`^${m.auth.url}/tickets/email-verification\\?ticket=`));
    const [row] = await m.ds.rows<{ expires_at: Date }>(
      `SELECT expires_at FROM tickets WHERE user_id = $1 AND kind = 'email_verification'`,
      [user.id],
    );
    expect(Math.abs(row.expires_at.getTime() - Date.now() - 432_000_000)).toBeLessThan(60_000);
    const page = await openTicket(url);
    expect(page.status).toBe(200);
    expect(page.html).toContain(user.email);
    expect(page.html).not.toContain('name="password"');
    // opening the link verifies nothing (a mail scanner may fetch it)
    expect((await m.call('get', `/api/${v}/users/${user.id}`).expect(200)).body.user_email_verified).toBe(
      false,
    );
    const done = await submitTicket(m.auth.url, page, {});
    expect(done.status).toBe(200);
    expect((await m.call('get', `/api/${v}/users/${user.id}`).expect(200)).body.user_email_verified).toBe(
      true,
    );
    expect((await submitTicket(m.auth.url, page, {})).status).toBe(400);
  });

  it('email-verification with result_url redirects; a user without an e-mail is 409', async () => {
    const user = await newUser();
    const url = (
      await ticket('email-verification', {
        user_id: user.id,
        result_url: 'http://localhost:8080/done',
      }).expect(201)
    ).body.ticket as string;
    const page = await openTicket(url);
    const done = await submitTicket(m.auth.url, page, {});
    expect(done.status).toBe(303);
    expect(done.location).toBe('http://localhost:8080/done');
    const noMail = (
      await m
        .call('post', '/api/v1/users')
        .send({ user_name: uniq('nomail') })
        .expect(201)
    ).body;
    const res = await ticket('email-verification', { user_id: noMail.id }).expect(409);
    expect(res.body.code).toBe('conflict');
  });

  it('a ticket verifies only the address it was made for: after a change of e-mail it verifies nothing', async () => {
    const user = await newUser();
    const url = (await ticket('email-verification', { user_id: user.id }).expect(201)).body.ticket as string;
    const marking = (
      await ticket('password-change', { user_id: user.id, mark_email_as_verified: true }).expect(201)
    ).body.ticket as string;
    const page = await openTicket(url);
    const passwordPage = await openTicket(marking);
    await m.call('patch', `/api/${v}/users/${user.id}`).send({ user_email: email() }).expect(200);
    expect((await submitTicket(m.auth.url, page, {})).status).toBe(400);
    expect((await openTicket(url)).status).toBe(400);
    // the password is still set, the new address stays unverified
    expect((await submitTicket(m.auth.url, passwordPage, { password: 'a-good-password-7' })).status).toBe(
      200,
    );
    expect(await hashOf(user.id)).toMatch(/^\$argon2id\$/);
    expect((await m.call('get', `/api/${v}/users/${user.id}`).expect(200)).body.user_email_verified).toBe(
      false,
    );
  });

  it('two submissions of one link at once: exactly one sets the password', async () => {
    const user = await newUser();
    const url = (await ticket('password-change', { user_id: user.id }).expect(201)).body.ticket as string;
    const page = await openTicket(url);
    const results = await Promise.all(
      ['racing-password-1', 'racing-password-2', 'racing-password-3'].map((password) =>
        submitTicket(m.auth.url, page, { password }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    const winner = ['racing-password-1', 'racing-password-2', 'racing-password-3'][
      results.findIndex((r) => r.status === 200)
    ];
    expect(await verifyPassword((await hashOf(user.id))!, winner)).toBe(true);
  });

  it('400 for bad bodies, 404 for unknown users and clients, 403 without tickets:write, 401 without a token; nothing written', async () => {
    const user = await newUser();
    const bad: Record<string, unknown>[] = [
      {},
      { user_id: 'not-a-uuid' },
      { user_id: user.id, extra: 1 },
      { user_id: user.id, result_url: '/relative' },
      { user_id: user.id, result_url: 'ftp://files.example.test/x' },
      { user_id: user.id, result_url: 'javascript:alert(1)' },
      { user_id: user.id, result_url: 'not a url' },
      { user_id: user.id, ttl_sec: 0 },
      { user_id: user.id, ttl_sec: 2_592_001 },
      { user_id: user.id, ttl_sec: 1.5 },
      { user_id: user.id, ttl_sec: '60' },
      { user_id: user.id, client_id: 'nope' },
    ];
    for (const kind of ['password-change', 'email-verification']) {
      for (const body of bad) {
        const res = await ticket(kind, body);
        expect([kind, body, res.status]).toEqual([kind, body, 400]);
        expect(res.body.code).toBe('invalid_request');
      }
      expect((await ticket(kind, { user_id: missingId() }).expect(404)).body.code).toBe('not_found');
      await ticket(kind, { user_id: user.id, client_id: missingId() }).expect(404);
      const reader = await m.caller(['users:write', 'users:read']);
      await ticket(kind, { user_id: user.id }, reader.token).expect(403);
      await ticket(kind, { user_id: user.id }, '').expect(401);
    }
    // mark_email_as_verified belongs to password changes only
    await ticket('email-verification', { user_id: user.id, mark_email_as_verified: true }).expect(400);
    await ticket('password-change', { user_id: user.id, mark_email_as_verified: 'yes' }).expect(400);
    expect(await m.ds.rows(`SELECT 1 FROM tickets WHERE user_id = $1`, [user.id])).toHaveLength(0);
  });

  it('405 for another method on a ticket path (Allow names POST)', async () => {
    for (const method of ['get', 'put', 'delete'] as const) {
      const res = await m.call(method, `${base}/password-change`);
      expect([method, res.status]).toEqual([method, 405]);
      expect(res.headers.allow).toContain('POST');
    }
  });

  it("a tenant-bound caller makes tickets for its tenant's users only (others: 404)", async () => {
    const tenant = await m.tenant();
    const other = await m.tenant();
    const caller = await m.caller(['tickets:write'], { tenantId: tenant, isGlobal: false });
    const mine = await newUser({ tenant_id: tenant });
    const theirs = await newUser({ tenant_id: other });
    const global = await newUser();
    const ok = await ticket('password-change', { user_id: mine.id }, caller.token).expect(201);
    expect(ok.body.ticket).toContain('/tickets/password-change?ticket=');
    await ticket('password-change', { user_id: theirs.id }, caller.token).expect(404);
    await ticket('email-verification', { user_id: global.id }, caller.token).expect(404);
    // a client of another tenant is out of reach too
    const foreignClient = (
      await m
        .call('post', '/api/v1/clients')
        .send({ client_name: uniq('c'), tenant_id: other, is_global: false })
        .expect(201)
    ).body.id as string;
    await ticket('password-change', { user_id: mine.id, client_id: foreignClient }, caller.token).expect(404);
  });
});

/** A refresh_token grant of the password client. */
const oauthRefresh = (client: Awaited<ReturnType<typeof passwordClient>>, refreshToken: string) =>
  oidc.refreshTokenGrant(client.config, refreshToken);
