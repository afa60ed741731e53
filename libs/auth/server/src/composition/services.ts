import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { CacheSubscriber } from '@gatehouse/changes';
import type { Sql } from '@gatehouse/db';
import { Delivery } from '@gatehouse/delivery';
import { TICKET_KEY_PURPOSE } from '@gatehouse/identity-data';
import { outboundFetcherFromEnv } from '@gatehouse/outbound';
import { OidcData } from '../oidc/oidc-data.js';
import { StateCache } from '../oidc/state-cache.js';
import { PasswordLogin } from '../oidc/password-login.js';
import { FastClientCredentials } from '../oidc/client-credentials.fast.js';
import { UpstreamKeys } from '../oidc/upstream-keys.js';
import { ApiUserinfo } from '../oidc/api-userinfo.js';
import { SigningKeys } from '../keys/signing-keys.js';
import { TokenInfoService } from '../tokeninfo/tokeninfo.service.js';
import { TokenInfoAnswers } from '../tokeninfo/tokeninfo.handler.js';
import { InteractionHandler } from '../interaction/interaction.handler.js';
import { OneTimeCodes, otpPolicyOf } from '../passwordless/one-time-codes.js';
import { PasswordlessStart } from '../passwordless/passwordless.js';
import { LinkPkceWaiver } from '../passwordless/link-pkce.js';
import { Signup } from '../signup/signup.js';
import { SignupLimits } from '../signup/signup-limits.js';
import { TicketPages } from '../tickets/tickets.js';
import { AccountPages } from '../account/account.js';
import { ForgotPassword } from '../tickets/forgot-password.js';
import type { EndpointContext } from '../endpoints/context.js';
import { DevicePollThrottle } from '../endpoints/device-throttle.js';
import { JwksReplay } from '../endpoints/jwks-replay.js';
import { DEFAULT_REDIS_PREFIX } from '../oidc/adapters/redis.adapter.js';
import { ProviderHost } from './provider-host.js';
import { AuthEvents } from '../events/auth-events.js';
import { SecondFactors } from '../mfa/second-factors.js';
import { Passkeys } from '../mfa/passkeys.js';
import { issuerOf, type TokenServerOptions } from './token-server-env.js';

/** The token server's state: the database, the state cache and its change feed, the keys, Redis. */
export interface TokenServerState {
  opts: TokenServerOptions;
  log: Logger;
  sql: Sql;
  data: OidcData;
  /**
   * The identity change feed that keeps `data.cache` in step and acknowledges identity's settle markers
   * (undefined when the cache is off).
   */
  feed: CacheSubscriber | undefined;
  signingKeys: SigningKeys;
  /** Resource-owner password logins (lockouts count by its `clock`). */
  login: PasswordLogin;
  redis: Redis | undefined;
  /** The audit trail's one batched writer (closed, everything queued written, at shutdown). */
  events: AuthEvents;
}

/** Everything the token server is made of: its state, oidc-provider, and the services its endpoints call. */
export interface TokenServerParts extends TokenServerState {
  host: ProviderHost;
  endpoints: EndpointContext;
  /** Passwordless one-time codes, their delivery and POST /passwordless/start. */
  codes: OneTimeCodes;
  /** Identity providers' key sets (token exchange), fetched under the outbound policy of OUTBOUND_*. */
  upstreamKeys: UpstreamKeys;
  delivery: Delivery;
  /** Second factors (TOTP, recovery codes), their policy and failure budget. */
  mfa: SecondFactors;
  /** WebAuthn passkeys (RP ID: the issuer's host name), checked under the same budget. */
  passkeys: Passkeys;
}

/**
 * The composition root: the state opened (the change feed started), then every service built; oidc-provider is
 * built once the first key set is installed (`host.install`).
 */
export async function composeTokenServer(opts: TokenServerOptions): Promise<TokenServerParts> {
  const state = await openState(opts);
  const { log, sql, data } = state;
  const issuer = issuerOf(opts.env);
  const codes = new OneTimeCodes(sql, opts.box.derive('otp'), otpPolicyOf(opts.env));
  const mfa = new SecondFactors(sql, opts.box, new URL(issuer).host);
  const passkeys = new Passkeys(sql, issuer, mfa);
  const upstreamKeys = new UpstreamKeys({ fetcher: outboundFetcherFromEnv(opts.env), log });
  const delivery = new Delivery(opts.env, log, sql, { queue: 'auth' });
  const fastClientCredentials = new FastClientCredentials({
    data,
    issuer,
    events: state.events,
    defaultTtlSec: opts.env.AUTH_ACCESS_TOKEN_TTL_SEC,
    providerAccepts: async (clientId) => {
      try {
        const client = await host.provider.Client.find(clientId);
        return client !== undefined && !client.scope;
      } catch {
        return false;
      }
    },
  });
  const host: ProviderHost = new ProviderHost({
    ...state,
    env: opts.env,
    issuer,
    redisPrefix: opts.redisPrefix,
    box: opts.box,
    codes,
    mfa,
    upstreamKeys,
    onInstall: (keys, provider) => fastClientCredentials.install(keys, provider),
  });
  const endpoints = endpointContext(state, {
    issuer,
    host,
    codes,
    delivery,
    fastClientCredentials,
    mfa,
    passkeys,
  });
  return { ...state, host, endpoints, codes, upstreamKeys, delivery, mfa, passkeys };
}

async function openState(opts: TokenServerOptions): Promise<TokenServerState> {
  const log = opts.log ?? pino({ level: opts.env.LOG_LEVEL ?? 'info', base: { service: 'auth' } });
  const sql = opts.db;
  const cache: StateCache = new StateCache({
    max: opts.env.AUTH_STATE_CACHE_MAX,
    ttlMs: opts.env.AUTH_STATE_CACHE_TTL_MS,
    // used only while the feed's last heartbeat is recent (see CacheSubscriber)
    // (`feed` is set below, before any request)
    trusted: () => feed?.trusted() ?? false,
  });
  const data = new OidcData(
    sql,
    opts.box,
    (what, err) => log.error({ err: (err as Error).message }, `${what}: a stored secret cannot be decrypted`),
    cache,
  );
  // The identity change feed drops cached rows (a lost feed or a late heartbeat drops everything); identity's
  // settle waits for this subscriber's acknowledgement before it answers a change (exact invalidation).
  const feed = cache.enabled
    ? new CacheSubscriber({
        url: sql.url,
        applicationName: 'gatehouse-auth-changes',
        service: 'auth',
        onChange: (change) => cache.forget(change),
        log: { warn: (message) => log.warn(message) },
      })
    : undefined;
  await feed?.start();
  const signingKeys = new SigningKeys(sql, opts.box);
  const events = new AuthEvents(sql, {
    enabled: opts.env.AUTH_EVENTS ?? true,
    flushMs: opts.env.AUTH_EVENTS_FLUSH_MS,
    onError: (err, dropped) =>
      log.error({ err: (err as Error).message, dropped }, 'audit events could not be written'),
  });
  const login = new PasswordLogin(
    sql,
    data,
    {
      threshold: opts.env.AUTH_LOCKOUT_THRESHOLD,
      lockSeconds: opts.env.AUTH_LOCKOUT_SECONDS,
    },
    events,
  );
  const redis = opts.env.REDIS_URL
    ? new Redis(opts.env.REDIS_URL, { maxRetriesPerRequest: 2, lazyConnect: false })
    : undefined;
  redis?.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
  return { opts, log, sql, data, feed, signingKeys, login, redis, events };
}

/** The services the endpoints call, around oidc-provider (`host`). */
function endpointContext(
  { opts, log, sql, data, login, redis, events }: TokenServerState,
  built: Pick<EndpointContext, 'issuer' | 'fastClientCredentials'> & {
    host: ProviderHost;
    codes: OneTimeCodes;
    delivery: Delivery;
    mfa: SecondFactors;
    passkeys: Passkeys;
  },
): EndpointContext {
  const { issuer, host, codes, delivery, mfa, passkeys } = built;
  const tokenInfo = new TokenInfoService({
    provider: () => host.provider,
    publicJwks: () => host.publicJwks,
    reloadKeys: (kid) => host.reloadForKid(kid),
    data,
    issuer,
    defaultAccessTokenTtlSec: opts.env.AUTH_ACCESS_TOKEN_TTL_SEC,
  });
  const linkPkce = new LinkPkceWaiver(opts.box.derive('passwordless-link-pkce'));
  const passwordless = new PasswordlessStart({
    data,
    sql,
    codes,
    delivery,
    issuer,
    pkceWaiver: linkPkce,
    events,
  });
  const signup = new Signup({
    sql,
    codes,
    delivery,
    issuer,
    events,
    limits: new SignupLimits(sql, {
      perAddressPerHour: opts.env.SIGNUP_MAX_PER_ADDRESS_PER_HOUR ?? 10,
      perInstancePerMinute: opts.env.SIGNUP_MAX_PER_INSTANCE_PER_MINUTE ?? 100,
    }),
  });
  const forgot = new ForgotPassword({
    sql,
    data,
    codes,
    delivery,
    issuer,
    ticketKeys: opts.box.derive(TICKET_KEY_PURPOSE),
  });
  return {
    issuer,
    log,
    data,
    oidc: host,
    tokenInfo,
    tokenInfoAnswers: new TokenInfoAnswers(),
    fastClientCredentials: built.fastClientCredentials,
    apiUserinfo: new ApiUserinfo({ provider: () => host.provider, tokenInfo, data, realm: issuer }),
    linkPkce,
    passwordless,
    signup,
    tickets: new TicketPages({
      sql,
      keys: opts.box.derive(TICKET_KEY_PURPOSE),
      forgetUser: (id) => data.cache.forget({ kind: 'user', id }),
    }),
    account: new AccountPages({
      provider: () => host.provider,
      sql,
      data,
      login,
      mfa,
      passkeys,
      delivery,
      codes,
      issuer,
      events,
      ticketKeys: opts.box.derive(TICKET_KEY_PURPOSE),
      forgetUser: (id) => data.cache.forget({ kind: 'user', id }),
    }),
    interactions: new InteractionHandler({
      provider: () => host.provider,
      login,
      data,
      sql,
      log,
      signup,
      passwordless,
      codes,
      forgot,
      events,
      mfa,
      passkeys,
    }),
    // with Redis, slow_down holds across replicas (the same key prefix as oidc-provider's artifacts)
    deviceThrottle: new DevicePollThrottle(
      redis ? { redis, prefix: opts.redisPrefix ?? DEFAULT_REDIS_PREFIX, log } : undefined,
    ),
    jwks: new JwksReplay(),
  };
}
