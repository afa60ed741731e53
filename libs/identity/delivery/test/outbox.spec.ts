import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Db, migrateDatabase } from '@gatehouse/db';
import { identityEntities, identityMigrations } from '@gatehouse/identity-data';
import {
  createTestDatabase,
  eventually,
  getFreePort,
  smtpSink,
  type SunkMail,
  type TestDatabase,
} from '@gatehouse/testing';
import { Delivery, displayName, escapeHtml, type DeliveryEnv } from '../src/index.js';

/**
 * The delivery outbox against real parts: PostgreSQL (a database of this file), a real local SMTP server
 * (smtp-server) that can be down, and a real HTTP sink for text messages.
 */
const mails: SunkMail[] = [];
function smtpServer() {
  return smtpSink(mails, { refuse: /^refused/ });
}
const texts: { to: string; text: string }[] = [];
let smsStatus = 500;
const sink = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString('utf8')));
  req.on('end', () => {
    texts.push(JSON.parse(body) as { to: string; text: string });
    res.writeHead(smsStatus).end();
  });
});

/** Everything the deliveries log, serialized (fields and message). */
const logged: string[] = [];
const log = {
  info: (obj: object, msg: string) => logged.push(JSON.stringify({ ...obj, msg })),
  warn: (obj: object, msg: string) => logged.push(JSON.stringify({ ...obj, msg })),
};

let tdb: TestDatabase;
let db: Db;
let dataDir: string;
let smsUrl: string;
const open: Delivery[] = [];

function delivery(env: Partial<DeliveryEnv>): Delivery {
  const d = new Delivery(
    {
      SMTP_FROM: 'Gatehouse <from@example.test>',
      DATA_DIR: dataDir,
      DELIVERY_RETRY_BASE_MS: 100,
      DELIVERY_POLL_MS: 50,
      DELIVERY_MAX_ATTEMPTS: 50,
      DELIVERY_RETENTION_DAYS: 7,
      ...env,
    },
    log,
    db,
  );
  open.push(d);
  return d;
}

beforeAll(async () => {
  tdb = await createTestDatabase({
    template: 'delivery_outbox',
    migrate: async (url) => {
      await migrateDatabase({ url, entities: identityEntities, migrations: identityMigrations });
    },
  });
  db = new Db({ url: tdb.url, poolMax: 6 });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
  smsUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/sms`;
  dataDir = mkdtempSync(path.join(tmpdir(), 'gh-outbox-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});
afterAll(async () => {
  await new Promise<void>((r) => sink.close(() => r()));
  await db?.pool.end();
  await tdb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const rows = (recipient: string) =>
  db.rows<{ status: string; attempts: number; payload: unknown; kind: string }>(
    `SELECT status, attempts, payload, kind FROM delivery_outbox WHERE recipient = $1`,
    [recipient],
  );

describe('Delivery', () => {
  it('sends e-mail through SMTP_URL from SMTP_FROM, text messages as JSON to SMS_WEBHOOK_URL', async () => {
    const smtp = smtpServer();
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    try {
      smsStatus = 200;
      const d = delivery({
        SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
        SMS_WEBHOOK_URL: smsUrl,
      });
      const to = `to-${Date.now()}@example.test`;
      const phone = `+9769${String(Date.now()).slice(-7)}`;
      await d.email(to, 'Hello', 'The text');
      await d.sms(phone, 'code 123456');
      d.start();
      await eventually(() => mails.some((m) => m.to === to) && texts.some((t) => t.to === phone), {
        what: 'both messages',
      });
      const mail = mails.find((m) => m.to === to)!;
      expect(mail.from).toBe('from@example.test');
      expect(mail.body).toContain('Subject: Hello');
      expect(mail.body).toContain('The text');
      expect(texts.filter((t) => t.to === phone)).toEqual([{ to: phone, text: 'code 123456' }]);
    } finally {
      smsStatus = 500;
      await Promise.all(open.splice(0).map((d) => d.close()));
      await new Promise<void>((r) => smtp.close(() => r()));
    }
  });

  it('without SMTP_URL and SMS_WEBHOOK_URL, writes each message to DATA_DIR/outbox/ (0600)', async () => {
    const d = delivery({});
    const to = `dev-${Date.now()}@example.test`;
    await d.email(to, 'Subject', 'the link');
    d.start();
    const dir = path.join(dataDir, 'outbox');
    const find = () => {
      try {
        return readdirSync(dir)
          .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Record<string, unknown>)
          .find((m) => m.to === to);
      } catch {
        return undefined;
      }
    };
    await eventually(() => find() !== undefined, { what: 'the dropped message' });
    expect(find()).toMatchObject({ channel: 'email', to, subject: 'Subject', text: 'the link' });
  });
});

describe('hole 9: mail and SMS as a relay', () => {
  it('SMTP server down: a send is queued at once; the mail goes out once the server is up, exactly once with two workers', async () => {
    const port = await getFreePort();
    const env = { SMTP_URL: `smtp://127.0.0.1:${port}` };
    const a = delivery(env);
    const b = delivery(env);
    const to = Array.from({ length: 6 }, (_, i) => `down-${i}-${Date.now()}@example.test`);
    const t0 = Date.now();
    // one inside a caller's transaction (sent only if that commits), the others on their own
    await db.transaction((tx) => a.email(to[0], 'Hello', 'the text 0', { tx, kind: 'test' }));
    for (const [i, addr] of to.slice(1).entries()) await a.email(addr, 'Hello', `the text ${i + 1}`);
    expect(Date.now() - t0).toBeLessThan(1000);
    // a rolled-back transaction leaves no message
    const ghost = `ghost-${Date.now()}@example.test`;
    await db
      .transaction(async (tx) => {
        await a.email(ghost, 'Hello', 'never', { tx });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    a.start();
    b.start();
    await eventually(async () => (await rows(to[0]))[0]?.attempts >= 2, {
      what: 'retries while the server is down',
    });
    expect(mails.filter((m) => to.includes(m.to))).toHaveLength(0);
    const smtp = smtpServer();
    await new Promise<void>((r) => smtp.listen(port, '127.0.0.1', () => r()));
    try {
      await eventually(() => to.every((addr) => mails.some((m) => m.to === addr)), {
        timeoutMs: 15_000,
        what: 'every mail once the server is up',
      });
      // Once every row is marked sent, no worker can claim it again: then each address must have had one mail.
      await eventually(async () => (await Promise.all(to.map(rows))).every((r) => r[0]?.status === 'sent'), {
        what: 'every row marked sent',
      });
      for (const addr of to) expect(mails.filter((m) => m.to === addr)).toHaveLength(1);
      expect(mails.some((m) => m.to === ghost)).toBe(false);
      for (const addr of to) {
        // delivered: the body (a code, a link) is not kept
        expect(await rows(addr)).toEqual([expect.objectContaining({ status: 'sent', payload: null })]);
      }
      expect(await rows(ghost)).toEqual([]);
    } finally {
      await Promise.all(open.splice(0).map((d) => d.close()));
      await new Promise<void>((r) => smtp.close(() => r()));
    }
  }, 30_000);

  it('gives up after DELIVERY_MAX_ATTEMPTS (SMS gateway failing), and at once on a permanent SMTP refusal', async () => {
    const smtp = smtpServer();
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    try {
      const d = delivery({
        SMS_WEBHOOK_URL: smsUrl,
        SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
        DELIVERY_MAX_ATTEMPTS: 3,
      });
      const phone = `+9768${String(Date.now()).slice(-7)}`;
      smsStatus = 500;
      await d.sms(phone, '123456 is your code');
      const refused = `refused-${Date.now()}@example.test`;
      await d.email(refused, 'Hello', 'x');
      d.start();
      await eventually(async () => (await rows(phone))[0]?.status === 'failed', {
        timeoutMs: 10_000,
        what: 'the text message given up',
      });
      expect(await rows(phone)).toEqual([
        expect.objectContaining({ status: 'failed', attempts: 3, payload: null }),
      ]);
      expect(texts.filter((t) => t.to === phone)).toHaveLength(3);
      await eventually(async () => (await rows(refused))[0]?.status === 'failed', { what: 'refused' });
      expect((await rows(refused))[0].attempts).toBe(1);
    } finally {
      smsStatus = 200;
      await Promise.all(open.splice(0).map((d) => d.close()));
      await new Promise<void>((r) => smtp.close(() => r()));
    }
  });

  it('subjects lose CR/LF and control characters and are cut; names are escaped for HTML and cut', async () => {
    const smtp = smtpServer();
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    try {
      const d = delivery({ SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}` });
      const to = `names-${Date.now()}@example.test`;
      const evil = `Evil\r\nBcc: victim@example.test\u0000\u202e<script>alert(1)</script>${'x'.repeat(300)}`;
      const name = displayName(evil);
      for (const c of ['\r', '\n', '\u0000', '\u202e']) expect(name).not.toContain(c);
      expect(name.length).toBeLessThanOrEqual(64);
      expect(escapeHtml(name)).toContain('&lt;script&gt;');
      await d.email(to, `Welcome to ${evil}`, `Welcome to ${name}`, {
        html: `<p>Welcome to ${escapeHtml(name)}</p>`,
      });
      d.start();
      await eventually(() => mails.some((m) => m.to === to), { what: 'the mail' });
      const body = mails.find((m) => m.to === to)!.body;
      const headers = body.slice(0, body.indexOf('\r\n\r\n'));
      expect(headers).not.toMatch(/^Bcc:/im);
      const subject = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(headers)![1];
      expect(subject.length).toBeLessThan(400);

      // the HTML part carries the name escaped (the text part is not markup)
      const html = body.slice(body.indexOf('Content-Type: text/html'));
      expect(html).toContain('&lt;script&gt;');
      expect(html).not.toContain('<script>');
    } finally {
      await new Promise<void>((r) => smtp.close(() => r()));
    }
  });

  it('no one-time code, link or message body in the log: only the message id, kind and a masked address', async () => {
    logged.length = 0;
    const port = await getFreePort();
    const down = delivery({ SMTP_URL: `smtp://127.0.0.1:${port}`, DELIVERY_MAX_ATTEMPTS: 2 });
    const dev = delivery({});
    const code = '493817';
    const link = 'https://auth.example.test/passwordless/verify?token=SECRET-LINK-TOKEN';
    // (one worker at a time: any worker delivers any queued message)
    await down.email('jane.doe@example.test', `Your code ${code}`, `code ${code} ${link}`, { kind: 'otp' });
    down.start();
    await eventually(async () => (await rows('jane.doe@example.test'))[0]?.status === 'failed', {
      what: 'the failing mail given up',
    });
    await down.close();
    await dev.email('jane.dev@example.test', 'Your sign-in link', `Open ${link}`, { kind: 'signin-link' });
    await dev.sms('+97699112233', `${code} is your sign-in code`, { kind: 'otp' });
    dev.start();
    await eventually(async () => (await rows('+97699112233'))[0]?.status === 'sent', {
      what: 'the development drop',
    });
    // the development drop still writes the message to DATA_DIR/outbox/ for the developer
    const dropped = readdirSync(path.join(dataDir, 'outbox')).map((f) =>
      readFileSync(path.join(dataDir, 'outbox', f), 'utf8'),
    );
    expect(dropped.some((f) => f.includes(link))).toBe(true);
    const all = logged.join('\n');
    expect(all).not.toContain(code);
    expect(all).not.toContain('SECRET-LINK-TOKEN');
    expect(all).not.toContain('Open ');
    expect(all).not.toContain('jane.doe@example.test');
    expect(all).not.toContain('+97699112233');
    expect(all).toMatch(/"kind":"signin-link"/);
    expect(all).toMatch(/"message_id":"[0-9a-f-]{36}"/);
    expect(all).toMatch(/j\*+@example\.test/);
  });

  it('purges delivered and failed rows older than DELIVERY_RETENTION_DAYS, never pending ones', async () => {
    const d = delivery({ DELIVERY_RETENTION_DAYS: 1 });
    const old = `old-${Date.now()}@example.test`;
    const pending = `pending-${Date.now()}@example.test`;
    await d.email(old, 'a', 'b');
    await d.email(pending, 'a', 'b');
    await db.exec(
      `UPDATE delivery_outbox SET status = 'sent', payload = NULL, finished_at = now() - interval '2 days'
        WHERE recipient = $1`,
      [old],
    );
    await db.exec(`UPDATE delivery_outbox SET created_at = now() - interval '3 days' WHERE recipient = $1`, [
      pending,
    ]);
    expect(await d.purge()).toBeGreaterThanOrEqual(1);
    expect(await rows(old)).toEqual([]);
    expect(await rows(pending)).toHaveLength(1);
  });
});
