import {
  authPort,
  consolePort,
  consoleUrl,
  databaseUrl,
  env,
  type TrustProxySetting,
} from '@gatehouse/config';
import { identityDataEnv } from '@gatehouse/identity-data';
import { deliveryEnv } from '@gatehouse/delivery';
import { outboundEnv } from '@gatehouse/outbound';

export const authEnv = {
  AUTH_PORT: authPort,
  CONSOLE_PORT: consolePort,
  CONSOLE_URL: consoleUrl,
  DATABASE_URL: databaseUrl,
  ...identityDataEnv,
  ISSUER: env.url({
    optional: true,
    description:
      "the token server's public URL and the iss of its tokens (default http://localhost:<AUTH_PORT>)",
  }),
  AUTH_LOCKOUT_THRESHOLD: env.int({
    default: 5,
    min: 1,
    max: 1000,
    description: 'consecutive failed password logins that lock a user account',
  }),
  AUTH_LOCKOUT_SECONDS: env.int({
    default: 900,
    min: 1,
    description: 'how long a locked account stays locked, in seconds',
  }),
  AUTH_ACCESS_TOKEN_TTL_SEC: env.int({
    default: 3600,
    min: 1,
    description:
      'lifetime of access tokens without an audience (userinfo only) and of resources without token_lifetime',
  }),
  AUTH_ID_TOKEN_TTL_SEC: env.int({
    default: 3600,
    min: 1,
    description: "ID token lifetime when the client's client_metadata.id_token sets none",
  }),
  AUTH_REFRESH_TOKEN_TTL_SEC: env.int({
    default: 2592000,
    min: 1,
    description:
      "refresh token lifetime (each rotation starts a new one) when the client's client_metadata sets none",
  }),
  AUTH_GRANT_TTL_SEC: env.int({
    default: 31536000,
    min: 1,
    description: 'longest life of a grant (a user login and the refresh tokens that follow it), in seconds',
  }),
  AUTH_DEVICE_CODE_TTL_SEC: env.int({
    default: 600,
    min: 1,
    max: 86400,
    description: 'how long a device code (RFC 8628) can be approved and polled, in seconds',
  }),
  AUTH_PURGE_INTERVAL_SEC: env.int({
    default: 300,
    min: 1,
    description: 'how often expired OAuth artifacts are deleted from oidc_payloads, in seconds',
  }),
  AUTH_KEY_REFRESH_SEC: env.int({
    default: 60,
    min: 1,
    description:
      'how often the token server checks signing_keys for a rotation made by another process, in seconds',
  }),
  AUTH_EVENTS: env.bool({
    default: true,
    description:
      "record the token server's audit events (sign-ins, tokens, codes, logouts...: docs/events.md); false: none, for a deployment whose trail is kept elsewhere (management writes are recorded by identity either way)",
  }),
  AUTH_EVENTS_FLUSH_MS: env.int({
    default: 200,
    min: 0,
    max: 60_000,
    description:
      'how long an audit event waits in memory before the batched writer stores it, in milliseconds (what a crash can lose); 0: one INSERT per event, not batched (slower, see docs/events.md)',
  }),
  AUTH_TRUST_PROXY: env.bool({
    default: false,
    description:
      'deprecated, use TRUST_PROXY: `true` stands for TRUST_PROXY=1 (one proxy in front) when TRUST_PROXY is unset or false',
  }),
  AUTH_STATE_CACHE_MAX: env.int({
    default: 10000,
    min: 0,
    description:
      'most client, client-resource and user rows the token server keeps in memory across requests (0: none)',
  }),
  AUTH_STATE_CACHE_TTL_MS: env.int({
    default: 5000,
    min: 0,
    max: 60000,
    description:
      'longest a cached identity row is kept, in milliseconds (invalidation is exact through the change feed and ' +
      'its settle protocol; this only bounds memory of unchanged rows); 0 turns the cache off',
  }),
  AUTH_OTP_MAX_FAILURES: env.int({
    default: 10,
    min: 1,
    max: 1000,
    description:
      'wrong one-time codes one account may be tried with, across all its codes, within AUTH_OTP_FAILURE_WINDOW_SEC ' +
      'before its passwordless sign-in is locked',
  }),
  AUTH_OTP_FAILURE_WINDOW_SEC: env.int({
    default: 900,
    min: 1,
    description:
      'the window, in seconds, in which AUTH_OTP_MAX_FAILURES wrong one-time codes lock an account',
  }),
  AUTH_OTP_LOCK_SECONDS: env.int({
    default: 900,
    min: 1,
    max: 86400,
    description:
      "first lock of an account's passwordless sign-in after too many wrong codes, in seconds; each following " +
      'lock lasts twice as long as the one before, at most a day',
  }),
  AUTH_OTP_SEND_INTERVAL_SEC: env.int({
    default: 60,
    min: 0,
    max: 3600,
    description:
      'least time, in seconds, between two one-time codes or sign-in links sent to one account or one address ' +
      '(requests in between get the same answer and send nothing)',
  }),
  AUTH_OTP_SENDS_PER_HOUR: env.int({
    default: 5,
    min: 1,
    max: 1000,
    description: 'most one-time codes or sign-in links sent to one account or one address in an hour',
  }),
  SIGNUP_MAX_PER_ADDRESS_PER_HOUR: env.int({
    default: 10,
    min: 0,
    description:
      'sign-ups (POST /signup and the sign-up page) accepted per source address and instance in one clock hour; more get 429 (0: no limit)',
  }),
  SIGNUP_MAX_PER_INSTANCE_PER_MINUTE: env.int({
    default: 100,
    min: 0,
    description:
      'sign-ups accepted per instance in one clock minute, whatever their source (a ceiling on the mail a crowd of addresses can cause); more get 429 (0: no limit)',
  }),
  ...deliveryEnv,
  // identity providers' discovery documents and key sets (token exchange) are fetched under this policy
  ...outboundEnv,
};

/**
 * The token server's trusted proxies: TRUST_PROXY; unset (false) with the deprecated AUTH_TRUST_PROXY=true, one
 * hop (the TLS-terminating proxy it was documented for), never "every hop", which would let any client name its
 * own address in X-Forwarded-For.
 */
export function effectiveTrustProxy(env: {
  TRUST_PROXY?: TrustProxySetting;
  AUTH_TRUST_PROXY?: boolean;
}): TrustProxySetting {
  const setting = env.TRUST_PROXY ?? false;
  return setting === false && env.AUTH_TRUST_PROXY ? 1 : setting;
}
