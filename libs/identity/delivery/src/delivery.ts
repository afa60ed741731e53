import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Sql } from '@gatehouse/db';

export interface DeliveryEnv {
  SMTP_URL?: string;
  SMTP_FROM: string;
  SMS_WEBHOOK_URL?: string;
  DATA_DIR: string;
  /** Tries of one message before it is marked failed (default 10). */
  DELIVERY_MAX_ATTEMPTS?: number;
  /** Wait before the second try, doubled at each further one (default 5000 ms, at most an hour). */
  DELIVERY_RETRY_BASE_MS?: number;
  /** How often an idle worker looks for due messages (default 1000 ms). */
  DELIVERY_POLL_MS?: number;
  /** Days a delivered or failed row is kept (its body is dropped at once) before it is deleted (default 7). */
  DELIVERY_RETENTION_DAYS?: number;
}

export interface DeliveryLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Options of one message. */
export interface MessageOptions {
  /** Queue it in this transaction: it exists (and is sent) only if the transaction commits. */
  tx?: Sql;
  /** What the message is, for the log and the outbox row (e.g. `signup-verification`, `invitation`). */
  kind?: string;
  /** An HTML alternative of an e-mail's text; its variable parts must be escaped with {@link escapeHtml}. */
  html?: string;
}

/** A message could not be delivered; `permanent`: trying again cannot help (a refused recipient). */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent = false,
    /** A short reason without the message or the full address (an SMTP code, an HTTP status, an errno). */
    readonly reason = 'error',
  ) {
    super(message);
  }
}

interface QueuedMessage {
  id: string;
  channel: 'email' | 'sms';
  kind: string;
  recipient: string;
  payload: { subject?: string; text: string; html?: string } | null;
  attempts: number;
}

/** Control characters (C0, C1, DEL), format characters (bidi overrides, zero-width) and line/paragraph separators. */
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]+/gu;
const SUBJECT_MAX = 200;
const NAME_MAX = 64;

/** Text that stays on one line: unsafe characters and runs of blanks become one space, trimmed, cut to `max`. */
function oneLine(value: string, max: number): string {
  const flat = value.replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length <= max
    ? flat
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

/**
 * A name chosen by someone else (a client's name, a tenant's) as it may appear in a message: one line without
 * control or format characters, at most `max` characters. Escape it again for HTML ({@link escapeHtml}).
 */
export function displayName(name: string | null | undefined, max = NAME_MAX): string {
  return oneLine(name ?? '', max);
}

/** `& < > " '` as HTML entities. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** An address as the log may show it: `j***@example.com`, `+976*****33`. */
export function maskAddress(to: string): string {
  const at = to.lastIndexOf('@');
  if (at > 0) return `${to[0]}***${to.slice(at)}`;
  if (to.length <= 4) return '***';
  return `${to.slice(0, to.startsWith('+') ? 4 : 1)}${'*'.repeat(Math.max(3, to.length - 6))}${to.slice(-2)}`;
}

const LEASE_SEC = 120;
const BATCH = 10;
const MAX_DELAY_MS = 3_600_000;
const PURGE_EVERY_MS = 3_600_000;

/**
 * Messages to people through a durable outbox (the `delivery_outbox` table): {@link email} and {@link sms} queue a
 * row, in the caller's transaction when it passes one, and return at once; the worker ({@link start}) of each
 * service that sends delivers them: e-mail through SMTP_URL (nodemailer), text messages as JSON `{"to", "text"}`
 * POSTed to SMS_WEBHOOK_URL, and without them into DATA_DIR/outbox/ (one JSON file each, for a developer).
 *
 * Workers claim due rows with `FOR UPDATE SKIP LOCKED` and a lease, so replicas never send one message twice
 * (unless a process dies between a send and its bookkeeping: at-least-once). A failed try is retried with
 * exponential back-off up to DELIVERY_MAX_ATTEMPTS, then the row is marked failed; a refusal that cannot change (an
 * SMTP 5xx, an HTTP 4xx) fails at once. The body of a row is dropped once it is delivered or given up, and the row
 * is deleted after DELIVERY_RETENTION_DAYS. The log names a message by id, kind and masked address, never its
 * subject, text or link.
 */
export class Delivery {
  private readonly transport;
  private readonly queue: string;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly pollMs: number;
  private readonly retentionDays: number;
  private running = false;
  private timer?: NodeJS.Timeout;
  private round?: Promise<unknown>;
  private fastUntil = 0;
  private lastPurge = 0;

  constructor(
    private readonly env: DeliveryEnv,
    private readonly log: DeliveryLog,
    private readonly sql: Sql,
    opts: {
      /**
       * The queue of this service: its workers deliver only its messages, with its own SMTP and SMS settings
       * (replicas of one service share it).
       */
      queue?: string;
    } = {},
  ) {
    this.transport = env.SMTP_URL
      ? nodemailer.createTransport(env.SMTP_URL, {
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000,
        })
      : undefined;
    this.queue = opts.queue ?? 'default';
    this.maxAttempts = Math.max(1, env.DELIVERY_MAX_ATTEMPTS ?? 10);
    this.retryBaseMs = Math.max(1, env.DELIVERY_RETRY_BASE_MS ?? 5000);
    this.pollMs = Math.max(10, env.DELIVERY_POLL_MS ?? 1000);
    this.retentionDays = Math.max(0, env.DELIVERY_RETENTION_DAYS ?? 7);
  }

  /** Queues an e-mail (the subject is kept to one line of at most 200 characters). */
  async email(to: string, subject: string, text: string, opts: MessageOptions = {}): Promise<void> {
    await this.enqueue('email', to, { subject: oneLine(subject, SUBJECT_MAX), text, html: opts.html }, opts);
  }

  /** Queues a text message. */
  async sms(to: string, text: string, opts: MessageOptions = {}): Promise<void> {
    await this.enqueue('sms', to, { text }, opts);
  }

  private async enqueue(
    channel: 'email' | 'sms',
    to: string,
    payload: QueuedMessage['payload'],
    opts: MessageOptions,
  ): Promise<void> {
    const kind = opts.kind ?? channel;
    const [row] = await (opts.tx ?? this.sql).rows<{ id: string }>(
      `INSERT INTO delivery_outbox (queue, channel, kind, recipient, payload) VALUES ($1, $2, $3, $4, $5::jsonb)
       RETURNING id`,
      [this.queue, channel, kind, to, JSON.stringify(payload)],
    );
    this.log.info({ message_id: row.id, kind, channel, to: maskAddress(to) }, 'message queued');
    this.wake();
  }

  /** Starts this process's worker (idempotent). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops the worker, waiting for the round under way. */
  async close(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.round?.catch(() => undefined);
    this.transport?.close();
  }

  /**
   * A new message may be due soon (its transaction may commit after this call): look often for a short while
   * instead of waiting for the next poll.
   */
  private wake(): void {
    if (!this.running) return;
    this.fastUntil = Date.now() + 2000;
    if (!this.round) this.schedule(20);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (!this.running || this.round) return;
    let claimed = 0;
    const round = (async () => {
      if (Date.now() - this.lastPurge > PURGE_EVERY_MS) {
        this.lastPurge = Date.now();
        await this.purge();
      }
      claimed = await this.deliverDue();
    })();
    this.round = round;
    try {
      await round;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'outbox: a delivery round failed');
    } finally {
      this.round = undefined;
    }
    if (!this.running) return;
    this.schedule(claimed > 0 ? 0 : Date.now() < this.fastUntil ? 50 : this.pollMs);
  }

  /** Claims the due messages of this queue (a batch) and tries each once; the number claimed. */
  async deliverDue(): Promise<number> {
    const due = await this.sql.rows<QueuedMessage>(
      `UPDATE delivery_outbox o
          SET attempts = o.attempts + 1, next_attempt_at = now() + make_interval(secs => $3)
         FROM (SELECT id FROM delivery_outbox
                WHERE queue = $1 AND status = 'pending' AND next_attempt_at <= now()
                ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
        WHERE o.id = d.id
       RETURNING o.id, o.channel, o.kind, o.recipient, o.payload, o.attempts`,
      [this.queue, BATCH, LEASE_SEC],
    );
    await Promise.all(due.map((m) => this.attempt(m)));
    return due.length;
  }

  private async attempt(m: QueuedMessage): Promise<void> {
    const fields = { message_id: m.id, kind: m.kind, channel: m.channel, to: maskAddress(m.recipient) };
    let failure: DeliveryError | undefined;
    let file: string | undefined;
    try {
      if (!m.payload) throw new DeliveryError('the message has no body', true, 'no body');
      file = await this.send(m.channel, m.recipient, m.payload);
    } catch (err) {
      failure =
        err instanceof DeliveryError ? err : new DeliveryError((err as Error).message, false, 'error');
    }
    if (!failure) {
      await this.sql.exec(
        `UPDATE delivery_outbox SET status = 'sent', payload = NULL, last_error = NULL, finished_at = now()
          WHERE id = $1 AND status = 'pending'`,
        [m.id],
      );
      // the development drop's file (the developer reads the message there, not in the log)
      this.log.info({ ...fields, attempts: m.attempts, ...(file ? { file } : {}) }, 'message delivered');
      return;
    }
    if (failure.permanent || m.attempts >= this.maxAttempts) {
      await this.sql.exec(
        `UPDATE delivery_outbox SET status = 'failed', payload = NULL, last_error = $2, finished_at = now()
          WHERE id = $1 AND status = 'pending'`,
        [m.id, failure.reason],
      );
      this.log.warn(
        { ...fields, attempts: m.attempts, reason: failure.reason },
        'message not delivered: given up',
      );
      return;
    }
    const backoff = Math.min(this.retryBaseMs * 2 ** (m.attempts - 1), MAX_DELAY_MS);
    const delayMs = Math.round(backoff * (1 + Math.random() * 0.2));
    await this.sql.exec(
      `UPDATE delivery_outbox SET next_attempt_at = now() + make_interval(secs => $2), last_error = $3
        WHERE id = $1 AND status = 'pending'`,
      [m.id, delayMs / 1000, failure.reason],
    );
    this.log.warn(
      { ...fields, attempts: m.attempts, reason: failure.reason, retry_in_ms: delayMs },
      'message not delivered: will retry',
    );
  }

  /** Deletes delivered and failed rows older than DELIVERY_RETENTION_DAYS; the number deleted. */
  async purge(): Promise<number> {
    return this.sql.exec(
      `DELETE FROM delivery_outbox
        WHERE status <> 'pending' AND finished_at < now() - make_interval(days => $1)`,
      [this.retentionDays],
    );
  }

  private async send(
    channel: 'email' | 'sms',
    to: string,
    p: NonNullable<QueuedMessage['payload']>,
  ): Promise<string | undefined> {
    if (channel === 'email') {
      if (!this.transport) return this.drop({ channel, to, subject: p.subject, text: p.text, html: p.html });
      try {
        await this.transport.sendMail({
          from: this.env.SMTP_FROM,
          to,
          subject: p.subject,
          text: p.text,
          ...(p.html ? { html: p.html } : {}),
        });
      } catch (err) {
        const e = err as { responseCode?: number; code?: string };
        const smtp = e.responseCode;
        throw new DeliveryError(
          'the e-mail could not be sent',
          smtp !== undefined && smtp >= 500 && smtp < 600,
          smtp ? `smtp ${smtp}` : (e.code ?? 'error'),
        );
      }
      return undefined;
    }
    if (!this.env.SMS_WEBHOOK_URL) return this.drop({ channel, to, text: p.text });
    let status = 0;
    let code = 'error';
    try {
      const res = await fetch(this.env.SMS_WEBHOOK_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to, text: p.text }),
        signal: AbortSignal.timeout(10_000),
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
    } catch (err) {
      code = ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name) || 'error';
    }
    if (status >= 200 && status < 300) return undefined;
    // a 4xx other than 408 and 429 is the gateway refusing this message: trying again cannot help
    const permanent = status >= 400 && status < 500 && status !== 408 && status !== 429;
    throw new DeliveryError(
      'the text message could not be sent',
      permanent,
      status ? `http ${status}` : code,
    );
  }

  /** Development without SMTP_URL / SMS_WEBHOOK_URL: the message as a JSON file in DATA_DIR/outbox/ (0600). */
  private drop(message: {
    channel: string;
    to: string;
    subject?: string;
    text: string;
    html?: string;
  }): string {
    const dir = path.join(this.env.DATA_DIR, 'outbox');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${Date.now()}-${randomBytes(4).toString('hex')}.json`);
    writeFileSync(file, JSON.stringify({ ...message, at: new Date().toISOString() }, null, 2), {
      mode: 0o600,
    });
    return file;
  }
}
