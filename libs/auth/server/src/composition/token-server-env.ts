import type { Logger } from 'pino';
import type { TrustProxySetting } from '@gatehouse/config';
import type { Db } from '@gatehouse/db';
import type { SecretBox } from '@gatehouse/identity-data';
import type { OutboundEnv } from '@gatehouse/outbound';

export interface TokenServerEnv extends OutboundEnv {
  AUTH_PORT: number;
  ISSUER?: string;
  REDIS_URL?: string;
  LOG_LEVEL?: string;
  AUTH_LOCKOUT_THRESHOLD: number;
  AUTH_LOCKOUT_SECONDS: number;
  AUTH_OTP_MAX_FAILURES?: number;
  AUTH_OTP_FAILURE_WINDOW_SEC?: number;
  AUTH_OTP_LOCK_SECONDS?: number;
  AUTH_OTP_SEND_INTERVAL_SEC?: number;
  AUTH_OTP_SENDS_PER_HOUR?: number;
  AUTH_ACCESS_TOKEN_TTL_SEC: number;
  AUTH_ID_TOKEN_TTL_SEC: number;
  AUTH_REFRESH_TOKEN_TTL_SEC: number;
  AUTH_GRANT_TTL_SEC: number;
  AUTH_DEVICE_CODE_TTL_SEC: number;
  AUTH_PURGE_INTERVAL_SEC: number;
  AUTH_KEY_REFRESH_SEC: number;
  /** false: the token server records no audit events (default true). */
  AUTH_EVENTS?: boolean;
  /** How long an audit event waits in memory before it is written (default 200 ms): what a crash can lose. */
  AUTH_EVENTS_FLUSH_MS?: number;
  AUTH_TRUST_PROXY: boolean;
  /** Common to every service (libs/shared/config); absent in some tests: no proxy trusted. */
  TRUST_PROXY?: TrustProxySetting;
  AUTH_STATE_CACHE_MAX: number;
  AUTH_STATE_CACHE_TTL_MS: number;
  DATA_DIR: string;
  SMTP_URL?: string;
  SMTP_FROM: string;
  SMS_WEBHOOK_URL?: string;
  DELIVERY_MAX_ATTEMPTS?: number;
  DELIVERY_RETRY_BASE_MS?: number;
  DELIVERY_POLL_MS?: number;
  DELIVERY_RETENTION_DAYS?: number;
  SIGNUP_MAX_PER_ADDRESS_PER_HOUR?: number;
  SIGNUP_MAX_PER_INSTANCE_PER_MINUTE?: number;
}

export interface TokenServerOptions {
  env: TokenServerEnv;
  db: Db;
  box: SecretBox;
  log?: Logger;
  /** Key prefix of the Redis artifacts (tests use their own). */
  redisPrefix?: string;
}

export const issuerOf = (env: Pick<TokenServerEnv, 'ISSUER' | 'AUTH_PORT'>) =>
  (env.ISSUER ?? `http://localhost:${env.AUTH_PORT}`).replace(/\/+$/, '');
