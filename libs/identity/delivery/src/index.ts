// Messages to people: e-mail through SMTP_URL, text messages through SMS_WEBHOOK_URL, else DATA_DIR/outbox/ (apps/auth
// sends one-time codes and verification links with it, apps/identity invitations).
export * from './delivery.js';
export * from './env.js';
