import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { eventually, getFreePort, smtpSink, type SunkMail } from '@gatehouse/testing';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';
import { openTicket, passwordClient, submitTicket } from './ticket-pages.js';

/**
 * User Registration (POST /users/invite): the invited user, its invitation e-mail through a real local SMTP server
 * (smtp-server), and the link of that e-mail opened on the token server.
 */
const mails: SunkMail[] = [];
/** Recipients the SMTP server refuses (a delivery failure). */
const REFUSED = /^refused-/;

const smtp = smtpSink(mails, { refuse: REFUSED });

let m: Management;

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const port = (smtp.server.address() as AddressInfo).port;
  m = await Management.start({
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    SMTP_FROM: 'Gatehouse <invite@example.test>',
  });
});
afterAll(async () => {
  await m?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
});

const email = (prefix = 'inv') => `${uniq(prefix)}@example.test`;

/** The mail sent to `to`, its link unwrapped (quoted-printable soft breaks joined). */
async function mailTo(to: string): Promise<{ body: string; link: string }> {
  await eventually(() => mails.some((x) => x.to === to), { what: `a mail to ${to}` });
  const body = mails
    .find((x) => x.to === to)!
    .body.replace(/=\r?\n/g, '')
    .replace(/=3D/g, '=');
  const link = /(http:\/\/\S+\/tickets\/password-change\?ticket=[\w-]{43})/.exec(body)?.[1];
  if (!link) throw new Error(`no ticket link in the mail to ${to}`);
  return { body, link };
}

describe.each(VERSIONS)('POST /api/%s/users/invite', (v: Version) => {
  const base = `/api/${v}/users`;
  const invite = (body: Record<string, unknown>, token?: string) =>
    m.call('post', `${base}/invite`, token).send(body);

  it('201 with the invited User; the e-mail carries a single-use link that sets the password and verifies the e-mail', async () => {
    const client = await passwordClient(m);
    const mail = email();
    const res = await invite({
      user_email: mail,
      user_fullName: 'Bat Invited',
      user_metadata: { team: 'blue' },
      client_id: client.id,
    }).expect(201);
    const u = res.body;
    expect(u).toMatchObject({
      user_email: mail,
      user_fullName: 'Bat Invited',
      user_email_verified: false,
      is_invited: true,
      invited_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      user_metadata: { team: 'blue' },
      created_by: m.auth.clientId,
    });
    expect(u[ENVELOPE[v].aggregations]).toMatchObject({ user_id: u.id });
    expect(u.links).toBeDefined();
    const [row] = await m.ds.rows<{ password_hash: string | null }>(
      `SELECT password_hash FROM users WHERE id = $1`,
      [u.id],
    );
    expect(row.password_hash).toBeNull();

    const { body, link } = await mailTo(mail);
    expect(body).toContain('From: Gatehouse <invite@example.test>');
    expect(body).toMatch(/Subject: You are invited to /);
    expect(link.startsWith(`${m.auth.url}/tickets/password-change?ticket=`)).toBe(true);
    // an invitation lives 5 days by default, and only its keyed hash is kept
    const [t] = await m.ds.rows<{ expires_at: Date; token_hash: string; client_id: string }>(
      `SELECT expires_at, token_hash, client_id FROM tickets WHERE user_id = $1`,
      [u.id],
    );
    expect(Math.abs(t.expires_at.getTime() - Date.now() - 432_000_000)).toBeLessThan(60_000);
    expect(t.client_id).toBe(client.id);
    expect(link).not.toContain(t.token_hash);

    // no password yet: no sign-in
    await expect(client.login(mail, 'chosen-password-1')).rejects.toBeDefined();
    const page = await openTicket(link);
    expect(page.status).toBe(200);
    const done = await submitTicket(m.auth.url, page, { password: 'chosen-password-1' });
    expect(done.status).toBe(200);
    const signedIn = await client.login(mail, 'chosen-password-1');
    expect(signedIn.access_token).toEqual(expect.any(String));
    const after = (await m.call('get', `${base}/${u.id}`).expect(200)).body;
    // the e-mailed link proved the address; is_invited stays as history
    expect(after).toMatchObject({ user_email_verified: true, is_invited: true, invited_at: u.invited_at });
    expect((await openTicket(link)).status).toBe(400);
  });

  it('result_url, ttl_sec and fields: the link redirects where asked and lives as long as asked', async () => {
    const mail = email();
    const res = await invite({
      user_email: mail,
      user_name: uniq('login'),
      result_url: 'https://app.example.test/welcome',
      ttl_sec: 3600,
    })
      .query({ fields: 'id,is_invited,invited_at' })
      .expect(201);
    expect(Object.keys(res.body).sort()).toEqual(['id', 'invited_at', 'is_invited']);
    const [t] = await m.ds.rows<{ expires_at: Date }>(`SELECT expires_at FROM tickets WHERE user_id = $1`, [
      res.body.id,
    ]);
    expect(Math.abs(t.expires_at.getTime() - Date.now() - 3_600_000)).toBeLessThan(60_000);
    const { link } = await mailTo(mail);
    const done = await submitTicket(m.auth.url, await openTicket(link), { password: 'chosen-password-2' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('https://app.example.test/welcome');
  });

  it('the e-mail is sent after the answer: a refused recipient is 201, its outbox row failed without its body', async () => {
    const mail = email('refused');
    const res = await invite({ user_email: mail }).expect(201);
    expect(res.body.user_email).toBe(mail);
    const row = () =>
      m.ds.one(`SELECT status, kind, payload, attempts FROM delivery_outbox WHERE recipient = $1`, [mail]);
    // a permanent SMTP refusal is not retried; the row keeps no body (the ticket link)
    await eventually(async () => (await row())?.status === 'failed', { what: 'the refused mail given up' });
    expect(await row()).toEqual({ status: 'failed', kind: 'invitation', payload: null, attempts: 1 });
  });

  it('400 for bad bodies (password, verified flag, missing e-mail), 409 for a taken login, 404 for an unknown client; nothing written', async () => {
    const mail = email();
    const bad: Record<string, unknown>[] = [
      {},
      { user_name: uniq('x') },
      { user_email: 'not-an-email' },
      { user_email: mail, password: 'a-password-1234' },
      { user_email: mail, user_email_verified: true },
      { user_email: mail, unknown_field: 1 },
      { user_email: mail, result_url: 'mailto:x@example.test' },
      { user_email: mail, ttl_sec: 0 },
      { user_email: mail, ttl_sec: 2_592_001 },
      { user_email: mail, client_id: 'nope' },
      { user_email: mail, tenant_id: missingId() },
      { user_email: mail, user_phone: '12345' },
    ];
    for (const body of bad) {
      const res = await invite(body);
      expect([body, res.status]).toEqual([body, 400]);
      expect(res.body.code).toBe('invalid_request');
    }
    await invite({ user_email: mail, client_id: missingId() }).expect(404);
    expect(await m.ds.rows(`SELECT 1 FROM users WHERE lower(user_email) = lower($1)`, [mail])).toHaveLength(
      0,
    );
    expect(mails.some((x) => x.to === mail)).toBe(false);

    const taken = email();
    await m.call('post', '/api/v1/users').send({ user_email: taken }).expect(201);
    const dup = await invite({ user_email: taken.toUpperCase() }).expect(409);
    expect(dup.body.code).toBe('conflict');
    expect(mails.some((x) => x.to.toLowerCase() === taken.toLowerCase())).toBe(false);
  });

  it('403 without users:write, 401 without a token; a tenant-bound caller invites into its own tenant only', async () => {
    const reader = await m.caller(['users:read', 'tickets:write']);
    await invite({ user_email: email() }, reader.token).expect(403);
    await invite({ user_email: email() }, '').expect(401);
    const tenant = await m.tenant();
    const other = await m.tenant();
    const caller = await m.caller(['users:write', 'users:read'], { tenantId: tenant, isGlobal: false });
    const mine = await invite({ user_email: email() }, caller.token).expect(201);
    const [row] = await m.ds.rows<{ tenant_id: string }>(`SELECT tenant_id FROM users WHERE id = $1`, [
      mine.body.id,
    ]);
    expect(row.tenant_id).toBe(tenant);
    await invite({ user_email: email(), tenant_id: other }, caller.token).expect(403);
    const foreignClient = (
      await m
        .call('post', '/api/v1/clients')
        .send({ client_name: uniq('c'), tenant_id: other, is_global: false })
        .expect(201)
    ).body.id as string;
    await invite({ user_email: email(), client_id: foreignClient }, caller.token).expect(404);
  });

  it('does not collide with the Users routes: GET /users/invite is not an operation', async () => {
    const res = await m.call('get', `${base}/invite`);
    expect([400, 404, 405]).toContain(res.status);
  });
});

describe('without SMTP_URL', () => {
  let dev: Management;
  beforeAll(async () => {
    dev = await Management.start();
  });
  afterAll(async () => {
    await dev?.close();
  });

  it('the invitation goes to DATA_DIR/outbox/ (development), its link usable', async () => {
    const mail = email('outbox');
    await dev.call('post', '/api/v1/users/invite').send({ user_email: mail }).expect(201);
    const dir = path.join(dev.dataDir, 'outbox');
    const dropped = () => {
      try {
        return readdirSync(dir)
          .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { to: string; text: string })
          .find((x) => x.to === mail);
      } catch {
        return undefined;
      }
    };
    // delivered by the outbox worker, after the answer
    await eventually(() => dropped() !== undefined, { what: 'the invitation in DATA_DIR/outbox/' });
    const found = dropped();
    const link = /(http:\/\/\S+\/tickets\/password-change\?ticket=[\w-]{43})/.exec(found!.text)![1];
    expect(link.startsWith(dev.auth.url)).toBe(true);
    const done = await submitTicket(dev.auth.url, await openTicket(link), { password: 'outbox-password-1' });
    expect(done.status).toBe(200);
  });
});

describe('hole 9: mail and SMS as a relay', () => {
  it('a client name with CR/LF and <script> arrives escaped and trimmed in the invitation', async () => {
    const client = await passwordClient(m);
    await m.ds.exec(`UPDATE clients SET client_name = $2 WHERE id = $1`, [
      client.id,
      `Evil App\r\nBcc: victim@example.test\r\n\r\n<script>alert(1)</script>${'x'.repeat(200)}`,
    ]);
    const mail = email('names');
    await m.call('post', '/api/v1/users/invite').send({ user_email: mail, client_id: client.id }).expect(201);
    await eventually(() => mails.some((x) => x.to === mail), { what: 'the invitation' });
    const body = mails.find((x) => x.to === mail)!.body.replace(/=\r?\n/g, '');
    const headers = body.slice(0, body.indexOf('\r\n\r\n'));
    expect(headers).not.toMatch(/^Bcc:/im);
    expect(mails.some((x) => x.to.includes('victim@'))).toBe(false);
    // the HTML part carries the name escaped (the text part is not markup)
    const html = body.slice(body.indexOf('Content-Type: text/html'));
    expect(html).toContain('&lt;script&gt;');
    expect(html).not.toContain('<script>');

    expect(body).not.toContain('x'.repeat(80));
  });

  describe('SMTP server down', () => {
    const late: SunkMail[] = [];
    let port: number;
    let down: Management;
    beforeAll(async () => {
      port = await getFreePort();
      down = await Management.start({
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        DELIVERY_RETRY_BASE_MS: '200',
        DELIVERY_POLL_MS: '100',
      });
    });
    afterAll(async () => {
      await down?.close();
    });

    it('the invitation answers 201 fast; its mail arrives once the SMTP server is up, exactly once', async () => {
      const mail = email('down');
      const t0 = Date.now();
      await down.call('post', '/api/v1/users/invite').send({ user_email: mail }).expect(201);
      expect(Date.now() - t0).toBeLessThan(2000);
      const outbox = () =>
        down.ds.rows<{ status: string; attempts: number }>(
          `SELECT status, attempts FROM delivery_outbox WHERE recipient = $1`,
          [mail],
        );
      await eventually(async () => (await outbox())[0]?.attempts >= 1, {
        what: 'a failed attempt while down',
      });
      const server = smtpSink(late);
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
      try {
        await eventually(() => late.some((x) => x.to === mail), {
          timeoutMs: 15_000,
          what: 'the invitation after the SMTP server came back',
        });
        // Once its row is marked sent no worker claims it again: exactly one mail by then.
        await eventually(async () => (await outbox())[0]?.status === 'sent', { what: 'the row marked sent' });
        expect(late.filter((x) => x.to === mail)).toHaveLength(1);
        expect(late[0].body.replace(/=\r?\n/g, '').replace(/=3D/g, '=')).toMatch(
          /\/tickets\/password-change\?ticket=/,
        );
      } finally {
        await new Promise<void>((r) => server.close(() => r()));
      }
    }, 30_000);
  });
});
