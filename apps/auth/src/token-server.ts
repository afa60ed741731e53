import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { decodeJwt, type JSONWebKeySet } from 'jose';
import type Provider from 'oidc-provider';
import { pino, type Logger } from 'pino';
import type { TrustProxySetting } from '@gatehouse/config';
import type { FastLane } from '@gatehouse/http';
import { effectiveTrustProxy } from './config.js';
import { purgeExpiredPayloads } from './oidc/adapters/pg.adapter.js';
import type { Db, Sql } from '@gatehouse/db';
import { isStoreUnavailable, sendOAuthError } from './oidc/oauth-errors.js';
import { OidcData } from './oidc/oidc-data.js';
import { StateCache } from './oidc/state-cache.js';
import { CacheSubscriber, STALE_SUBSCRIBER_SEC } from '@gatehouse/changes';
import { PasswordLogin } from './oidc/password-login.js';
import { createProvider, ROUTES, type TokenLifetimes } from './oidc/provider.js';
import { BodyError, one, parseParams, readBody, replayAsForm, type Params } from './oidc/request-body.js';
import { normalizeTokenParams } from './oidc/token-params.js';
import { applyFields, rememberFields } from './oidc/fields.js';
import {
  purgeLoginFailures,
  purgeTickets,
  TICKET_KEY_PURPOSE,
  type SecretBox,
} from '@gatehouse/identity-data';
import { SigningKeys, type KeySet } from './keys/signing-keys.js';
import { FastClientCredentials } from './oidc/client-credentials.fast.js';
import { looksLikeJwt, TokenInfoService } from './tokeninfo/tokeninfo.service.js';
import { InteractionHandler } from './interaction/interaction.handler.js';
import { Delivery } from '@gatehouse/delivery';
import { OneTimeCodes, otpPolicyOf } from './passwordless/one-time-codes.js';
import {
  PASSWORDLESS_START_PATH,
  PASSWORDLESS_VERIFY_PATH,
  PasswordlessStart,
} from './passwordless/passwordless.js';
import { LinkPkceWaiver } from './passwordless/link-pkce.js';
import { EMAIL_VERIFICATION_PATH, handleSignup, Signup, SIGNUP_PATH } from './signup/signup.js';
import { SignupLimits } from './signup/signup-limits.js';
import { continueUrlOf, messagePage, pageHeaders, pickLocale } from './interaction/pages.js';
import { INTERACTION_PATH } from './interaction/pages.js';
import {
  handleIntrospection,
  handleTokenInfo,
  sendJsonText,
  TokenInfoAnswers,
} from './tokeninfo/tokeninfo.handler.js';
import { TICKET_EMAIL_PATH, TICKET_PASSWORD_PATH, TicketPages } from './tickets/tickets.js';
import { ForgotPassword } from './tickets/forgot-password.js';
import { outboundFetcherFromEnv, type OutboundEnv } from '@gatehouse/outbound';
import { UpstreamKeys } from './oidc/upstream-keys.js';
import { ApiUserinfo } from './oidc/api-userinfo.js';

export const TOKENINFO_PATH = '/tokeninfo';

/** A JWT whose claims name no grant (a client's own token): its /tokeninfo answer may be reused (tokenInfoRequest). */
function isGrantlessJwt(token: string): boolean {
  if (!looksLikeJwt(token)) return false;
  try {
    return decodeJwt(token).grant_id === undefined;
  } catch {
    return false;
  }
}

/** RFC 8628 polling interval of device codes, in seconds. */
export const DEVICE_POLL_INTERVAL_SEC = 5;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** Paths served by the token server's raw handlers (no Nest body parser may run in front of them), and methods. */
export const TOKEN_SERVER_ROUTES: Readonly<Record<string, readonly string[]>> = {
  // GET only: oidc-provider serves a POSTed authorization request only with SameSite=None session cookies
  // (`enableHttpPostMethods`), which would give up the cookies' CSRF protection; POST is 405 with `Allow: GET`.
  [ROUTES.authorization]: ['GET'],
  [ROUTES.device_authorization]: ['POST'],
  [PASSWORDLESS_START_PATH]: ['POST'],
  [SIGNUP_PATH]: ['POST'],
  [EMAIL_VERIFICATION_PATH]: ['GET'],
  [PASSWORDLESS_VERIFY_PATH]: ['GET', 'POST'],
  [ROUTES.code_verification]: ['GET', 'POST'],
  [ROUTES.token]: ['POST'],
  [ROUTES.revocation]: ['POST'],
  [ROUTES.introspection]: ['POST'],
  [ROUTES.userinfo]: ['GET', 'POST'],
  [ROUTES.jwks]: ['GET'],
  '/.well-known/openid-configuration': ['GET'],
  '/.well-known/oauth-authorization-server': ['GET'],
  [TOKENINFO_PATH]: ['POST'],
  [TICKET_PASSWORD_PATH]: ['GET', 'POST'],
  [TICKET_EMAIL_PATH]: ['GET', 'POST'],
};

/** The RP-initiated logout paths oidc-provider serves, with their methods. */
const LOGOUT_ROUTES: Readonly<Record<string, readonly string[]>> = {
  // GET only, as /authorize: oidc-provider serves a POSTed logout request only with SameSite=None cookies.
  [ROUTES.end_session]: ['GET'],
  [`${ROUTES.end_session}/confirm`]: ['POST'],
  [`${ROUTES.end_session}/success`]: ['GET'],
};

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

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The client id of a Basic Authorization header (URL-decoded, as OAuth requires), or undefined. */
function basicClientId(header: string | undefined): string | undefined {
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0) return undefined;
  try {
    return decodeURIComponent(decoded.slice(0, i).replace(/\+/g, '%20'));
  } catch {
    return undefined;
  }
}

/**
 * The token server: oidc-provider (rebuilt whenever the published signing keys change), our /tokeninfo, the
 * body handling in front of them (JSON and form alike), and the housekeeping timers (expired artifacts, keys).
 */
export class TokenServer {
  readonly issuer: string;
  readonly tokenInfo: TokenInfoService;
  /** The login and consent pages of the authorization endpoint. */
  private readonly interactions: InteractionHandler;
  /** Passwordless one-time codes, their delivery and POST /passwordless/start. */
  readonly codes: OneTimeCodes;
  /** Identity providers' key sets (token exchange), fetched under the outbound policy of OUTBOUND_*. */
  readonly upstreamKeys: UpstreamKeys;
  private readonly delivery: Delivery;
  private readonly passwordless: PasswordlessStart;
  /** The PKCE waiver of sign-in links asked for without a code_challenge (checked at /authorize). */
  private readonly linkPkce: LinkPkceWaiver;
  /** /userinfo for access tokens issued for an API (oidc-provider answers for the others). */
  private readonly apiUserinfo: ApiUserinfo;
  private readonly signup: Signup;
  /** The pages of tickets (password change, invitation, e-mail verification) made by the management API. */
  private readonly tickets: TicketPages;
  /** Plain client_credentials requests, answered without oidc-provider's pipeline (same answer). */
  readonly fastClientCredentials: FastClientCredentials;
  private provider!: Provider;
  private callback!: Handler;
  private keys!: KeySet;
  private publicJwks!: JSONWebKeySet;
  private readonly timers: NodeJS.Timeout[] = [];
  /**
   * The identity change feed that keeps `data.cache` in step and acknowledges identity's settle markers
   * (undefined when the cache is off).
   */
  feed?: CacheSubscriber;
  /** Last poll per device code (hashed), for slow_down. */
  private readonly lastPolls = new Map<string, number>();
  /** The clock device polls are timed by (tests move it instead of waiting). */
  pollClock: () => number = Date.now;
  private reloading?: Promise<boolean>;
  /** /tokeninfo answers about active tokens, reused while nothing they depend on changed. */
  private readonly tokenInfoAnswers = new TokenInfoAnswers();
  /** oidc-provider's answer to GET /jwks for the current key set (see serveJwks). */
  private jwksAnswer?: {
    keys: KeySet;
    body: Buffer;
    headers: (readonly [string, number | string | string[]])[];
  };
  /** Unknown kids recently looked up, so a flood of forged tokens cannot turn into a flood of key reloads. */
  private readonly unknownKids = new Map<string, number>();

  private constructor(
    private readonly opts: TokenServerOptions,
    private readonly sql: Sql,
    private readonly data: OidcData,
    private readonly signingKeys: SigningKeys,
    /** Resource-owner password logins (lockouts count by its `clock`). */
    readonly login: PasswordLogin,
    private readonly log: Logger,
    private readonly redis: Redis | undefined,
  ) {
    this.issuer = issuerOf(opts.env);
    this.tokenInfo = new TokenInfoService({
      provider: () => this.provider,
      publicJwks: () => this.publicJwks,
      reloadKeys: (kid) => this.reloadForKid(kid),
      data,
      issuer: this.issuer,
      defaultAccessTokenTtlSec: opts.env.AUTH_ACCESS_TOKEN_TTL_SEC,
    });
    this.fastClientCredentials = new FastClientCredentials({
      data,
      issuer: this.issuer,
      defaultTtlSec: opts.env.AUTH_ACCESS_TOKEN_TTL_SEC,
      providerAccepts: async (clientId) => {
        try {
          return (await this.provider.Client.find(clientId)) !== undefined;
        } catch {
          return false;
        }
      },
    });
    this.codes = new OneTimeCodes(sql, opts.box.derive('otp'), otpPolicyOf(opts.env));
    this.upstreamKeys = new UpstreamKeys({ fetcher: outboundFetcherFromEnv(opts.env), log });
    this.delivery = new Delivery(opts.env, log, sql, { queue: 'auth' });
    this.apiUserinfo = new ApiUserinfo({
      provider: () => this.provider,
      tokenInfo: this.tokenInfo,
      data,
      realm: this.issuer,
    });
    this.linkPkce = new LinkPkceWaiver(opts.box.derive('passwordless-link-pkce'));
    this.passwordless = new PasswordlessStart({
      data,
      sql,
      codes: this.codes,
      delivery: this.delivery,
      issuer: this.issuer,
      pkceWaiver: this.linkPkce,
    });
    this.signup = new Signup({
      sql,
      codes: this.codes,
      delivery: this.delivery,
      issuer: this.issuer,
      limits: new SignupLimits(sql, {
        perAddressPerHour: opts.env.SIGNUP_MAX_PER_ADDRESS_PER_HOUR ?? 10,
        perInstancePerMinute: opts.env.SIGNUP_MAX_PER_INSTANCE_PER_MINUTE ?? 100,
      }),
    });
    this.tickets = new TicketPages({
      sql,
      keys: opts.box.derive(TICKET_KEY_PURPOSE),
      forgetUser: (id) => data.cache.forget({ kind: 'user', id }),
    });
    this.interactions = new InteractionHandler({
      provider: () => this.provider,
      login,
      data,
      sql,
      log,
      signup: this.signup,
      passwordless: this.passwordless,
      codes: this.codes,
      forgot: new ForgotPassword({
        sql,
        data,
        codes: this.codes,
        delivery: this.delivery,
        issuer: this.issuer,
        ticketKeys: opts.box.derive(TICKET_KEY_PURPOSE),
      }),
    });
  }

  static async start(opts: TokenServerOptions): Promise<TokenServer> {
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
      (what, err) =>
        log.error({ err: (err as Error).message }, `${what}: a stored secret cannot be decrypted`),
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
    const login = new PasswordLogin(sql, data, {
      threshold: opts.env.AUTH_LOCKOUT_THRESHOLD,
      lockSeconds: opts.env.AUTH_LOCKOUT_SECONDS,
    });
    const redis = opts.env.REDIS_URL
      ? new Redis(opts.env.REDIS_URL, { maxRetriesPerRequest: 2, lazyConnect: false })
      : undefined;
    redis?.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
    const server = new TokenServer(opts, sql, data, signingKeys, login, log, redis);
    server.feed = feed;
    server.install(await signingKeys.load());
    // this process's delivery worker: the messages the token server queued (codes, links), sent after the answer
    server.delivery.start();

    const every = (sec: number, fn: () => Promise<unknown>) => {
      const t = setInterval(() => {
        fn().catch((err: unknown) =>
          log.warn({ err: (err as Error).message }, 'token server housekeeping failed'),
        );
      }, sec * 1000);
      t.unref();
      server.timers.push(t);
    };
    every(opts.env.AUTH_PURGE_INTERVAL_SEC, async () => {
      const n = await purgeExpiredPayloads(sql);
      if (n) log.debug({ removed: n }, 'expired oidc artifacts purged');
      await server.codes.purge();
      await server.signup.purgeCounters();
      await purgeTickets(sql);
      const f = await purgeLoginFailures(sql);
      if (f) log.debug({ removed: f }, 'stale login failure counts purged');
      // cache subscribers that stopped without deleting their row (a killed process)
      await sql.exec(`DELETE FROM cache_subscribers WHERE heartbeat_at < now() - make_interval(secs => $1)`, [
        STALE_SUBSCRIBER_SEC,
      ]);
    });
    every(opts.env.AUTH_KEY_REFRESH_SEC, () => server.reloadKeys(false));
    return server;
  }

  get currentProvider(): Provider {
    return this.provider;
  }

  get keySet(): KeySet {
    return this.keys;
  }

  /** A token names a key this process does not know: reload once, unless that kid was already tried recently. */
  private async reloadForKid(kid: string | undefined): Promise<boolean> {
    if (!kid || kid.length > 200) return false;
    const now = Date.now();
    const tried = this.unknownKids.get(kid);
    if (tried !== undefined && now - tried < 30_000) return false;
    if (this.unknownKids.size > 1000) this.unknownKids.clear();
    this.unknownKids.set(kid, now);
    return this.reloadKeys(false);
  }

  /** Reload the key set when it changed in the database; `force` skips the cheap fingerprint check. */
  async reloadKeys(force: boolean): Promise<boolean> {
    this.reloading ??= (async () => {
      try {
        if (!force && (await this.signingKeys.fingerprint()) === this.keys.fingerprint) return false;
        const keys = await this.signingKeys.load();
        if (keys.fingerprint === this.keys.fingerprint) return false;
        this.install(keys);
        this.log.info({ kids: keys.keys.map((k) => k.kid), active: keys.active }, 'signing keys reloaded');
        return true;
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  private install(keys: KeySet): void {
    const env = this.opts.env;
    const lifetimes: TokenLifetimes = {
      accessToken: env.AUTH_ACCESS_TOKEN_TTL_SEC,
      idToken: env.AUTH_ID_TOKEN_TTL_SEC,
      refreshToken: env.AUTH_REFRESH_TOKEN_TTL_SEC,
      grant: env.AUTH_GRANT_TTL_SEC,
      deviceCode: env.AUTH_DEVICE_CODE_TTL_SEC,
    };
    const provider = createProvider({
      issuer: this.issuer,
      sql: this.sql,
      data: this.data,
      keys,
      login: this.login,
      lifetimes,
      redis: this.redis,
      redisPrefix: this.opts.redisPrefix,
      // X-Forwarded-Proto/-Host are believed behind a trusted proxy; the client's address is the fast lane's
      // (clientAddress), computed with the trusted proxies as the rate limits do.
      proxy: effectiveTrustProxy(env) !== false,
      log: this.log,
      cookieKeys: this.opts.box.derive('cookies'),
      codes: this.codes,
      upstreamKeys: this.upstreamKeys,
    });
    // Discovery also names our /tokeninfo.
    provider.use(async (ctx, next) => {
      await next();
      // RFC 8628: the polling interval (oidc-provider leaves it out; clients then assume 5 s); before `fields`
      // picks from the answer, so that it can be picked
      if (
        ctx.status === 200 &&
        ctx.path === ROUTES.device_authorization &&
        ctx.body &&
        typeof ctx.body === 'object'
      ) {
        (ctx.body as Record<string, unknown>).interval ??= DEVICE_POLL_INTERVAL_SEC;
      }
      if (ctx.status === 200) ctx.body = applyFields(ctx.req, ctx.body);
      if (
        ctx.status === 200 &&
        ctx.path.startsWith('/.well-known/') &&
        ctx.body &&
        typeof ctx.body === 'object'
      ) {
        (ctx.body as Record<string, unknown>).tokeninfo_endpoint = `${this.issuer}${TOKENINFO_PATH}`;
      }
    });
    this.keys = keys;
    this.fastClientCredentials.install(keys);
    this.publicJwks = { keys: keys.keys.map((k) => k.publicJwk) } as JSONWebKeySet;
    this.provider = provider;
    this.callback = provider.callback() as unknown as Handler;
  }

  /**
   * Whether the token server serves `method path` (path without the query): exactly the requests
   * {@link serve} answers itself rather than passing on to `next`.
   */
  claims(method: string, path: string): boolean {
    return (
      path.startsWith(`${INTERACTION_PATH}/`) ||
      LOGOUT_ROUTES[path] !== undefined ||
      (path.startsWith(`${ROUTES.authorization}/`) && method === 'GET') ||
      path === ROUTES.end_session ||
      path.startsWith(`${ROUTES.end_session}/`) ||
      (path.startsWith(`${ROUTES.code_verification}/`) && path !== ROUTES.device_authorization) ||
      TOKEN_SERVER_ROUTES[path] !== undefined
    );
  }

  /** The foundation's fast lane: the token server on node's request, without Express (see createHttpApp). */
  lane(): FastLane {
    return {
      matches: (method, path) => this.claims(method, path),
      handle: (req, res, next) => this.serve(req, res, next),
    };
  }

  /** Serves what {@link claims}; passes anything else on to `next`. */
  serve(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void {
    const path = (req.url ?? '/').split('?')[0];
    if (path.startsWith(`${INTERACTION_PATH}/`)) {
      this.interactions.handle(req, res, path).catch((err: unknown) => this.fail(res, err));
      return;
    }
    // RP-initiated logout answers GET (its confirm step POST, its success step GET); any other method is a 405
    // like on every known path (oidc-provider itself answered 404; found by tools/reliability/fuzz.mjs).
    const logoutMethods = LOGOUT_ROUTES[path];
    const method = req.method ?? 'GET';
    const allowed = logoutMethods?.includes(method === 'HEAD' ? 'GET' : method) || method === 'OPTIONS';
    if (logoutMethods && !allowed) {
      sendOAuthError(res, 405, 'method_not_allowed', `${req.method} is not allowed on ${path}`, {
        Allow: logoutMethods.join(', '),
      });
      return;
    }
    // The authorization endpoint resumes there after an interaction (`/authorize/<uid>`); RP-initiated logout
    // (`/session/end`, its confirm and success steps) reads its own form bodies.
    if (
      (path.startsWith(`${ROUTES.authorization}/`) && req.method === 'GET') ||
      path === ROUTES.end_session ||
      path.startsWith(`${ROUTES.end_session}/`) ||
      (path.startsWith(`${ROUTES.code_verification}/`) && path !== ROUTES.device_authorization)
    ) {
      this.data.withRequestMemo(req, () => this.callback(req, res));
      return;
    }
    const methods = TOKEN_SERVER_ROUTES[path];
    if (!methods) return next();
    // The hot paths read through the state cache and need no per-request memo: GET /jwks, /tokeninfo, and /token up
    // to the point where oidc-provider takes the request (`toProvider`). On the others, what oidc-provider reads
    // while serving the request is memoised (our own code before it reads through the state cache, as /tokeninfo).
    if (path === ROUTES.jwks && method === 'GET' && this.serveJwks(req, res)) return;
    const hot = path === TOKENINFO_PATH || path === ROUTES.token;
    (hot
      ? this.dispatch(req, res, path, methods)
      : this.data.withRequestMemo(req, () => this.dispatch(req, res, path, methods))
    ).catch((err: unknown) => this.fail(res, err));
  }

  private async dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    methods: readonly string[],
  ) {
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS' && path !== TOKENINFO_PATH) return this.callback(req, res);
    if (!methods.includes(method)) {
      sendOAuthError(res, 405, 'method_not_allowed', `${method} is not allowed on ${path}`, {
        Allow: methods.join(', '),
      });
      return;
    }
    if (path === EMAIL_VERIFICATION_PATH) return this.verifyEmail(req, res);
    if (path === PASSWORDLESS_VERIFY_PATH) return this.passwordless.linkPage(req, res);
    if (path === TICKET_PASSWORD_PATH || path === TICKET_EMAIL_PATH)
      return this.tickets.handle(req, res, path);
    if (method !== 'POST') {
      // parsed once for both readers (an authorization request's query is long)
      const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
      const fieldsError = rememberFields(req, path, query.get('fields') ?? undefined);
      if (fieldsError) return sendOAuthError(res, 400, 'invalid_request', fieldsError);
      if (path === ROUTES.authorization) this.linkPkce.check(req, query);
      if (path === ROUTES.userinfo && (await this.apiUserinfo.handle(req, res))) return;
      return this.callback(req, res);
    }

    let params: Params;
    try {
      const raw = await readBody(req);
      if (path === TOKENINFO_PATH) return await this.tokenInfoRequest(req, res, raw);
      params = parseParams(req, raw);
      if (path === ROUTES.token || path === ROUTES.device_authorization)
        params = normalizeTokenParams(params);
    } catch (err) {
      if (err instanceof BodyError) return sendOAuthError(res, err.status, err.error, err.message);
      throw err;
    }
    if (path === PASSWORDLESS_START_PATH) return this.passwordless.handle(req, res, params);
    if (path === SIGNUP_PATH) return handleSignup(this.signup, this.data, res, req, params);
    if (path === ROUTES.introspection) {
      return handleIntrospection(this.tokenInfo, req, res, params, this.issuer);
    }
    if (
      path === ROUTES.token &&
      !(req.url ?? '').includes('?') &&
      (await this.fastClientCredentials.tryIssue(req, res, params))
    ) {
      return;
    }
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    const replay = replayAsForm(req, params);
    this.data.carryRequestMemo(req, replay);
    const fieldsError = rememberFields(
      replay,
      path,
      one(params, 'fields') ?? query.get('fields') ?? undefined,
    );
    if (fieldsError) return sendOAuthError(res, 400, 'invalid_request', fieldsError);
    if (path === ROUTES.token && one(params, 'grant_type') === DEVICE_GRANT) {
      const code = one(params, 'device_code');
      if (code && this.pollTooSoon(code)) {
        return sendOAuthError(
          res,
          400,
          'slow_down',
          `poll at most every ${DEVICE_POLL_INTERVAL_SEC} seconds (RFC 8628); wait ${DEVICE_POLL_INTERVAL_SEC} seconds more`,
        );
      }
    }
    if (path === ROUTES.token) {
      // oidc-provider's token endpoint reads the same rows several times: within one request memo.
      const clientId = basicClientId(req.headers.authorization) ?? one(params, 'client_id');
      const resource = params.resource;
      this.data.withRequestMemo(replay, () => {
        if (clientId && typeof resource === 'string')
          this.data.prefetchTokenRequest(replay, clientId, resource);
        this.callback(replay, res);
      });
      return;
    }
    if (path === ROUTES.userinfo && (await this.apiUserinfo.handle(replay, res, params))) return;
    this.callback(replay, res);
  }

  /**
   * POST /tokeninfo: an answer given before for the very same request while nothing it was computed from changed
   * (TokenInfoAnswers), else computed.
   */
  private async tokenInfoRequest(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    const key = this.tokenInfoAnswers.key(req, raw);
    // (what is stored is only ever the answer about JWTs: see below)
    const version = this.data.stateVersion();
    const keys = this.keys;
    const known = this.tokenInfoAnswers.get(key, version, keys);
    if (known !== undefined) return sendJsonText(res, known);
    const params = parseParams(req, raw);
    const answer = await handleTokenInfo(this.tokenInfo, req, res, params, this.issuer);
    // Only JWTs without a grant (the token asked about, and a Bearer caller's own token): everything that decides
    // their answer is in the state cache or the key set. An opaque token's row may be revoked or consumed, and a
    // grant may run out before the token, without a change of either.
    const bearer = /^bearer /i.test(req.headers.authorization ?? '')
      ? (req.headers.authorization ?? '').slice(7).trim()
      : undefined;
    const token = one(params, 'token') ?? '';
    if (answer && isGrantlessJwt(token) && (bearer === undefined || isGrantlessJwt(bearer))) {
      this.tokenInfoAnswers.set(key, answer.json, answer.until, version, keys);
    }
  }

  /**
   * GET /jwks: oidc-provider's own answer, kept from the first time it gave it (its headers and bytes) until the key
   * set changes, and replayed for a plain request (no query, no CORS, no conditional GET: those go to
   * oidc-provider, as the first request after a key change does).
   */
  private serveJwks(req: IncomingMessage, res: ServerResponse): boolean {
    const h = req.headers;
    const plain =
      !(req.url ?? '').includes('?') &&
      h.origin === undefined &&
      h['if-none-match'] === undefined &&
      h['if-modified-since'] === undefined;
    const known = this.jwksAnswer;
    if (plain && known && known.keys === this.keys) {
      res.statusCode = 200;
      for (const [name, value] of known.headers) res.setHeader(name, value);
      res.end(known.body);
      return true;
    }
    if (!plain) return false;
    const keys = this.keys;
    const before = new Set(res.getHeaderNames());
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    (res as { end: unknown }).end = (...args: unknown[]) => {
      const chunk = args[0];
      if (res.statusCode === 200 && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) {
        this.jwksAnswer = {
          keys,
          body: Buffer.from(chunk),
          headers: res
            .getHeaderNames()
            .filter((n) => !before.has(n))
            .map((n) => [n, res.getHeader(n)!] as const),
        };
      }
      return end(...args);
    };
    this.callback(req, res);
    return true;
  }

  /**
   * RFC 8628 slow_down: a device code polled again within the interval. Kept per process (a throttle, not a
   * record): behind several replicas a device may poll each once per interval.
   */
  private pollTooSoon(deviceCode: string): boolean {
    const key = createHash('sha256').update(deviceCode).digest('base64url');
    const now = this.pollClock();
    const last = this.lastPolls.get(key);
    this.lastPolls.delete(key);
    this.lastPolls.set(key, now);
    if (this.lastPolls.size > 10_000) this.lastPolls.delete(this.lastPolls.keys().next().value as string);
    return last !== undefined && now - last < DEVICE_POLL_INTERVAL_SEC * 1000;
  }

  /** GET /email-verification?token=...: the link of the sign-up e-mail, answered with a page. */
  private async verifyEmail(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('token') ?? '';
    const verified = await this.signup.verify(token);
    const client = verified ? await this.data.findClient(verified.clientId) : undefined;
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = verified ? 200 : 400;
    res.end(
      messagePage({
        locale: pickLocale(undefined, req.headers['accept-language']),
        nonce,
        message: verified ? 'verified' : 'verifyFailed',
        continueHref: client ? continueUrlOf(client.clientMetadata) : undefined,
      }),
    );
  }

  private fail(res: ServerResponse, err: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (isStoreUnavailable(err)) {
      this.log.warn({ err: (err as Error).message }, 'token server: data store unavailable');
      sendOAuthError(res, 503, 'temporarily_unavailable', 'a data store of the token server is unavailable', {
        'Retry-After': '5',
      });
      return;
    }
    this.log.error({ err }, 'token server error');
    sendOAuthError(res, 500, 'server_error', 'internal error');
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.delivery.close();
    this.timers.length = 0;
    await this.feed?.stop();
    await this.reloading?.catch(() => undefined);
    if (this.redis) await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}
