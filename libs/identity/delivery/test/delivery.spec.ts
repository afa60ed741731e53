import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { Delivery, DeliveryError } from '../src/index.js';

/** Delivery against a real local SMTP server (smtp-server), a real HTTP sink for SMS, and the outbox folder. */
const mails: { from: string; to: string; body: string }[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onRcptTo(address, _session, done) {
    done(address.address.startsWith('refused') ? new Error('mailbox unavailable') : undefined);
  },
  onData(stream, session, done) {
    let body = '';
    stream.on('data', (d: Buffer) => (body += d.toString('utf8')));
    stream.on('end', () => {
      mails.push({
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        to: session.envelope.rcptTo.map((r) => r.address).join(','),
        body,
      });
      done();
    });
  },
});
const texts: unknown[] = [];
let smsStatus = 200;
const sink = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString('utf8')));
  req.on('end', () => {
    texts.push(JSON.parse(body));
    res.writeHead(smsStatus).end();
  });
});

const logged: string[] = [];
const log = {
  info: (_obj: object, msg: string) => logged.push(`info: ${msg}`),
  warn: (_obj: object, msg: string) => logged.push(`warn: ${msg}`),
};
let dataDir: string;
let smtpUrl: string;
let smsUrl: string;

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
  smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  smsUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/sms`;
  dataDir = mkdtempSync(path.join(tmpdir(), 'gh-delivery-'));
});
afterAll(async () => {
  await new Promise<void>((r) => smtp.close(() => r()));
  await new Promise<void>((r) => sink.close(() => r()));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('Delivery', () => {
  it('sends e-mail through SMTP_URL from SMTP_FROM; a refused recipient is a DeliveryError', async () => {
    const d = new Delivery(
      { SMTP_URL: smtpUrl, SMTP_FROM: 'Gatehouse <from@example.test>', DATA_DIR: dataDir },
      log,
    );
    await d.email('to@example.test', 'Hello', 'The text');
    expect(mails).toEqual([
      { from: 'from@example.test', to: 'to@example.test', body: expect.stringContaining('The text') },
    ]);
    expect(mails[0].body).toContain('Subject: Hello');
    await expect(d.email('refused@example.test', 'Hello', 'x')).rejects.toBeInstanceOf(DeliveryError);
    d.close();
  });

  it('POSTs text messages as JSON to SMS_WEBHOOK_URL; a non-2xx answer is a DeliveryError', async () => {
    const d = new Delivery({ SMS_WEBHOOK_URL: smsUrl, SMTP_FROM: 'x@example.test', DATA_DIR: dataDir }, log);
    await d.sms('+97699112233', 'code 123456');
    expect(texts).toEqual([{ to: '+97699112233', text: 'code 123456' }]);
    smsStatus = 500;
    await expect(d.sms('+97699112233', 'again')).rejects.toBeInstanceOf(DeliveryError);
    smsStatus = 200;
  });

  it('without either, writes each message to DATA_DIR/outbox/ and logs it', async () => {
    const d = new Delivery({ SMTP_FROM: 'x@example.test', DATA_DIR: dataDir }, log);
    await d.email('dev@example.test', 'Subject', 'the link');
    await d.sms('+97688112233', 'the code');
    const files = readdirSync(path.join(dataDir, 'outbox'));
    const messages = files.map((f) => JSON.parse(readFileSync(path.join(dataDir, 'outbox', f), 'utf8')));
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel: 'email',
          to: 'dev@example.test',
          subject: 'Subject',
          text: 'the link',
        }),
        expect.objectContaining({ channel: 'sms', to: '+97688112233', text: 'the code' }),
      ]),
    );
    expect(logged.filter((l) => l.startsWith('info: no delivery configured'))).toHaveLength(2);
  });
});
