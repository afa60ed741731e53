import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';

export interface DeliveryEnv {
  SMTP_URL?: string;
  SMTP_FROM: string;
  SMS_WEBHOOK_URL?: string;
  DATA_DIR: string;
}

/** A message could not be delivered (the caller answers 503 and keeps nothing of the request). */
export class DeliveryError extends Error {}

/**
 * Sends e-mails through SMTP_URL (nodemailer) and text messages as JSON `{"to", "text"}` POSTed to SMS_WEBHOOK_URL.
 * Without them a message is written to DATA_DIR/outbox/ (one JSON file each) and logged, so a developer can read it.
 */
export class Delivery {
  private readonly transport;

  constructor(
    private readonly env: DeliveryEnv,
    private readonly log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void },
  ) {
    this.transport = env.SMTP_URL ? nodemailer.createTransport(env.SMTP_URL) : undefined;
  }

  async email(to: string, subject: string, text: string): Promise<void> {
    if (!this.transport) return this.outbox({ channel: 'email', to, subject, text });
    try {
      await this.transport.sendMail({ from: this.env.SMTP_FROM, to, subject, text });
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'e-mail delivery failed');
      throw new DeliveryError('the e-mail could not be sent');
    }
  }

  async sms(to: string, text: string): Promise<void> {
    if (!this.env.SMS_WEBHOOK_URL) return this.outbox({ channel: 'sms', to, text });
    let status = 0;
    try {
      const res = await fetch(this.env.SMS_WEBHOOK_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to, text }),
        signal: AbortSignal.timeout(10_000),
      });
      status = res.status;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'text message delivery failed');
    }
    if (status < 200 || status >= 300) throw new DeliveryError('the text message could not be sent');
  }

  private outbox(message: { channel: string; to: string; subject?: string; text: string }): void {
    const dir = path.join(this.env.DATA_DIR, 'outbox');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${Date.now()}-${randomBytes(4).toString('hex')}.json`);
    writeFileSync(file, JSON.stringify({ ...message, at: new Date().toISOString() }, null, 2), {
      mode: 0o600,
    });
    // only without a delivery configured (development): the developer reads the code here
    this.log.info(
      { file, channel: message.channel, to: message.to, text: message.text },
      'no delivery configured: message written to the outbox',
    );
  }

  close(): void {
    this.transport?.close();
  }
}
