// Messages to people through the delivery outbox (a table): queued in the caller's transaction, delivered by a
// worker of the sending service by e-mail (SMTP_URL), text message (SMS_WEBHOOK_URL) or, in development, into
// DATA_DIR/outbox/ (apps/auth sends one-time codes and verification links with it, apps/identity invitations).
export * from './delivery.js';
export * from './env.js';
