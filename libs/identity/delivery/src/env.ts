import { env } from '@gatehouse/config';

/**
 * Environment variables of message delivery. Apps that send messages (auth, identity) spread this into their env
 * schema: `{ ...deliveryEnv, ... }` (DATA_DIR, the outbox's parent, is a common variable).
 */
export const deliveryEnv = {
  SMTP_URL: env.url({
    optional: true,
    secret: true,
    description:
      'SMTP server of the e-mails Gatehouse sends (one-time codes, verification, invitations), e.g. smtp://user:pass@host:587; unset: messages go to DATA_DIR/outbox/ and the log',
  }),
  SMTP_FROM: env.str({
    default: 'Gatehouse <no-reply@gatehouse.local>',
    description: 'From address of those e-mails',
  }),
  SMS_WEBHOOK_URL: env.url({
    optional: true,
    secret: true,
    description:
      'URL text messages are POSTed to as JSON {"to", "text"} (an SMS gateway); unset: DATA_DIR/outbox/ and the log',
  }),
};
