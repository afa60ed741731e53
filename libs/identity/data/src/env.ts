import { env } from '@gatehouse/config';

const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const BASE64_32 = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * Environment variables of the identity data lib: secrets at rest and the one-time bootstrap. Apps that use the
 * identity tables (auth, identity) spread this into their env schema: `{ ...identityDataEnv, ... }`.
 */
export const identityDataEnv = {
  SECRET_ENCRYPTION_KEY: env.str({
    optional: true,
    secret: true,
    pattern: BASE64_32,
    description:
      'base64 of 32 random bytes (`openssl rand -base64 32`), the AES-256-GCM key for client secrets and signing keys at rest; unset: generated into DATA_DIR/secret.key on first start (development)',
  }),
  SECRET_ENCRYPTION_PREVIOUS_KEYS: env.str({
    optional: true,
    secret: true,
    pattern: /^[A-Za-z0-9+/_=,\s-]+$/,
    description:
      'comma-separated earlier SECRET_ENCRYPTION_KEY values, still accepted for decryption after a key rotation',
  }),
  BOOTSTRAP_CLIENT_ID: env.str({
    optional: true,
    pattern: UUID_PATTERN,
    description:
      'id (a UUID) of the default client created on first start; unset: generated and printed once',
  }),
  BOOTSTRAP_CLIENT_SECRET: env.str({
    optional: true,
    secret: true,
    minLength: 16,
    description:
      'secret of the default client created on first start (at least 16 characters); unset: generated and printed once',
  }),
  BOOTSTRAP_ADMIN_EMAIL: env.str({
    optional: true,
    pattern: /^[^\s@]+@[^\s@]+$/,
    description: 'e-mail of the admin user created on first start (default admin@gatehouse.local)',
  }),
  BOOTSTRAP_SECRETS_FILE: env.str({
    optional: true,
    description:
      'file (relative: in DATA_DIR) that gets the credentials generated on first start, mode 0600, printing only its path; unset: standard output (npm start: bootstrap-secrets.txt)',
  }),
  BOOTSTRAP_ADMIN_PASSWORD: env.str({
    optional: true,
    secret: true,
    minLength: 8,
    description:
      'password of the admin user created on first start (at least 8 characters); unset: generated and printed once',
  }),
};
