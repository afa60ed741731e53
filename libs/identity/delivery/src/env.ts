import { env } from '@gatehouse/config';

/**
 * Environment variables of message delivery. Apps that send messages (auth, identity) spread this into their env
 * schema: `{ ...deliveryEnv, ... }` (DATA_DIR, the development drop's parent, is a common variable).
 */
export const deliveryEnv = {
  SMTP_URL: env.url({
    optional: true,
    secret: true,
    description:
      'SMTP server of the e-mails Gatehouse sends (one-time codes, verification, invitations), e.g. smtp://user:pass@host:587; unset: messages go to DATA_DIR/outbox/ (development; the log names them without their content)',
  }),
  SMTP_FROM: env.str({
    default: 'Gatehouse <no-reply@gatehouse.local>',
    description: 'From address of those e-mails',
  }),
  SMS_WEBHOOK_URL: env.url({
    optional: true,
    secret: true,
    description:
      'URL text messages are POSTed to as JSON {"to", "text"} (an SMS gateway); unset: DATA_DIR/outbox/ (development)',
  }),
  DELIVERY_MAX_ATTEMPTS: env.int({
    default: 10,
    min: 1,
    max: 100,
    description:
      'tries of one queued e-mail or text message (the delivery outbox) before it is marked failed; a permanent refusal (SMTP 5xx, HTTP 4xx) fails at once',
  }),
  DELIVERY_RETRY_BASE_MS: env.int({
    default: 5000,
    min: 10,
    max: 3600000,
    description:
      'wait before the second try of a message, in milliseconds; doubled at each further try (at most an hour)',
  }),
  DELIVERY_POLL_MS: env.int({
    default: 1000,
    min: 10,
    max: 60000,
    description:
      'how often an idle delivery worker looks for due messages, in milliseconds (a message queued by the same process is looked for at once)',
  }),
  DELIVERY_RETENTION_DAYS: env.int({
    default: 7,
    min: 0,
    max: 365,
    description:
      'days a delivered or failed outbox row is kept (its body, with codes and links, is dropped at once) before it is deleted',
  }),
};
