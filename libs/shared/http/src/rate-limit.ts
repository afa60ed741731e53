import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { DomainError, ErrorCode } from '@gatehouse/errors';
import type { Logger } from 'pino';
import { routeMatch } from './metrics.js';
import { parseRouteSpec, type RouteTable } from './route-table.js';

export interface RateLimitOptions {
  /** Requests allowed per endpoint and caller in each window. */
  points: number;
  /** Window length in seconds. */
  durationSec: number;
  /** When set, counts live in Redis and are shared by every replica; else in process memory. */
  redisUrl?: string;
  /** Redis key prefix (default `gatehouse:rl:<serviceName>`); replicas of one service must share it. */
  keyPrefix?: string;
  /** Per-endpoint limits, keyed `'<METHOD> <pattern>'`, e.g. `{ 'POST /token': 30 }`. */
  overrides?: Record<string, number>;
  /**
   * Failed authentications (a 401 to a request that presented credentials) allowed per source address and
   * credential (the bearer token, or the client id and secret of Basic credentials) and window, over all
   * endpoints; past it that credential is 429 from that address before it is checked (default: `points`).
   */
  authFailures?: number;
  /**
   * Failed authentications allowed per source address and window over every credential (a second, larger line
   * against guessing with ever new credentials); past it only credentials that proved good in the window are
   * still checked from that address, anything else is 429 (default: 10 x `authFailures`).
   */
  authFailuresPerAddress?: number;
}

/**
 * Paths never counted and answered without rate-limit headers: probes and the scrape must keep working
 * when a client is throttled, and an orchestrator polling them must not eat anyone's budget.
 */
export const RATE_LIMIT_EXEMPT_PATHS: readonly string[] = ['/livez', '/readyz', '/metrics'];
const EXEMPT = new Set(RATE_LIMIT_EXEMPT_PATHS);

/** Credential hashes remembered (a client sends the same token many times) before the cache starts over. */
const HASH_CACHE_SIZE = 10_000;
const hashes = new Map<string, string>();
const digests = new Map<string, string>();

/**
 * SHA-256 of a bearer token, base64url, memoised (bounded): the one digest of a token per process, for the rate
 * limits' keys and the token validator's cache alike, so that a request with a cached token hashes nothing.
 */
export function tokenDigest(token: string): string {
  let digest = digests.get(token);
  if (digest === undefined) {
    digest = createHash('sha256').update(token).digest('base64url');
    if (digests.size >= HASH_CACHE_SIZE) digests.clear();
    digests.set(token, digest);
  }
  return digest;
}

/** `prefix` + the first 32 base64url chars of sha256(value), memoised (bounded). */
function hashedKey(prefix: string, value: string): string {
  const cacheKey = prefix + value;
  let key = hashes.get(cacheKey);
  if (key === undefined) {
    key = prefix + createHash('sha256').update(value).digest('base64url').slice(0, 32);
    if (hashes.size >= HASH_CACHE_SIZE) hashes.clear();
    hashes.set(cacheKey, key);
  }
  return key;
}

const SPACES = /\s+/;

export const TOO_MANY_REQUESTS_MESSAGE =
  'Rate limit exceeded; check the X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset headers and retry after the reset';

type KeyedRequest = Pick<Request, 'headers' | 'ip'> & { socket?: { remoteAddress?: string } };

/** The source address (Express's `req.ip`: the forwarded one only when `trust proxy` is set). */
export function addressKey(req: KeyedRequest): string {
  return `ip:${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`;
}

/**
 * A client id as one client: client ids are UUIDs, compared in their canonical lower-case form (a percent-encoded
 * Basic id decoded first, as the token server decodes it). Allocates nothing for an id already canonical.
 */
export function canonicalClientId(id: string): string {
  let out = id;
  if (out.indexOf('%') !== -1) {
    try {
      out = decodeURIComponent(out.replace(/\+/g, '%20'));
    } catch {
      // left as sent: the token server answers the malformed header itself
    }
  }
  return out.toLowerCase();
}

/** The credentials a request presents: who they name (its quota) and the credential itself (its failures). */
export interface PresentedCredential {
  /** The caller they name: `bearer:<hash of the token>` or `client:<hash of the canonical client id>`. */
  caller: string;
  /** The credential: the bearer token's hash, or `basic:<hash of canonical id and secret>`. */
  credential: string;
}

/**
 * The credentials of a request's Authorization header (Bearer, Basic), hashed so that the store never holds one;
 * undefined without credentials.
 */
export function presentedCredential(req: Pick<KeyedRequest, 'headers'>): PresentedCredential | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const [scheme, value] = auth.trim().split(SPACES, 2);
    if (value && scheme.toLowerCase() === 'bearer') {
      const key = `bearer:${tokenDigest(value).slice(0, 32)}`;
      return { caller: key, credential: key };
    }
    if (value && scheme.toLowerCase() === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const sep = decoded.indexOf(':');
      const id = canonicalClientId(sep >= 0 ? decoded.slice(0, sep) : decoded);
      if (id) {
        return {
          caller: hashedKey('client:', id),
          credential: hashedKey('basic:', sep >= 0 ? id + decoded.slice(sep) : id),
        };
      }
    }
  }
  return undefined;
}

/**
 * The caller a request's credentials claim to be: a hash of the bearer token or of the (canonical) client id of
 * Basic credentials; undefined without credentials.
 */
export function claimedCallerKey(req: Pick<KeyedRequest, 'headers'>): string | undefined {
  return presentedCredential(req)?.caller;
}

/** Who is calling: the claimed caller of the credentials, else the source address. */
export function callerKey(req: KeyedRequest): string {
  return claimedCallerKey(req) ?? addressKey(req);
}

/** The keys of the failed-authentication counters, over every endpoint: per address and credential, per address. */
const AUTH_FAILURES = 'auth-failures';
const ADDRESS_FAILURES = 'address-failures';
/** Credentials remembered as proven good (per process without Redis) before the set starts over. */
const GOOD_CACHE_SIZE = 100_000;

/**
 * Admission of a credentialed request in Redis, in one atomic step that both checks and charges, so that no
 * request on any replica is admitted on a count another one is about to change.
 * - A credential that proved good in the window (KEYS[3]) reserves no failure: a busy good client's concurrent
 *   requests never reach a failure budget. Otherwise one failure of (address, credential) is counted ahead of the
 *   check (refused past its limit), then one of the address (refused past its limit, the first given back).
 * - Then the caller's own quota (KEYS[4], ARGV[4] requests per window) is charged, unless it is used up: a refused
 *   request is not counted, and the failures reserved for it are given back. The window starts with the first
 *   charge and its expiry is set in the same step.
 * Answers {0 admitted | 1 credential | 2 address | 3 quota, ms left in the refusing (or, admitted, the quota's)
 * window, whether the failures were counted (0: proven good or refused), requests charged in the quota's window,
 * the end of that window in Redis's clock (epoch ms): the tag a refund must match}.
 */
const ADMIT_LUA = `
local counted = 0
if redis.call('EXISTS', KEYS[3]) == 0 then
  local c = redis.call('INCR', KEYS[1])
  if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
  if c > tonumber(ARGV[1]) then return {1, redis.call('PTTL', KEYS[1]), 0, 0, 0} end
  local a = redis.call('INCR', KEYS[2])
  if a == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
  if a > tonumber(ARGV[2]) then
    redis.call('DECR', KEYS[1])
    return {2, redis.call('PTTL', KEYS[2]), 0, 0, 0}
  end
  counted = 1
end
local q = tonumber(redis.call('GET', KEYS[4]) or '0')
if q >= tonumber(ARGV[4]) then
  local ttl = redis.call('PTTL', KEYS[4])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[4], ARGV[3])
    ttl = tonumber(ARGV[3])
  end
  if counted == 1 then
    redis.call('DECR', KEYS[1])
    redis.call('DECR', KEYS[2])
  end
  return {3, ttl, 0, q, 0}
end
q = redis.call('INCR', KEYS[4])
local ttl = redis.call('PTTL', KEYS[4])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[4], ARGV[3])
  ttl = tonumber(ARGV[3])
end
local t = redis.call('TIME')
return {0, ttl, counted, q, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl}`;

/**
 * Settles an admitted credentialed request once it is answered: with ARGV[1] = '1' the failures counted ahead
 * are given back; with ARGV[2] = '1' it proved good and is remembered so for the window (KEYS[3]); with
 * ARGV[2] = '-1' it was refused although remembered good (revoked meanwhile): forgotten, so that its next requests
 * count again. ARGV[4], unless '0', refunds the quota's charge (KEYS[4]), only into the window it was taken from
 * (its end, as ADMIT_LUA answered it, within half a window: a later window ends at least a whole one later).
 */
const RELEASE_LUA = `
if ARGV[1] == '1' then
  if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then redis.call('DECR', KEYS[1]) end
  if redis.call('EXISTS', KEYS[2]) == 1 and tonumber(redis.call('GET', KEYS[2])) > 0 then redis.call('DECR', KEYS[2]) end
end
if ARGV[2] == '1' then redis.call('SET', KEYS[3], '1', 'PX', ARGV[3]) end
if ARGV[2] == '-1' then redis.call('DEL', KEYS[3]) end
if ARGV[4] ~= '0' then
  local ttl = redis.call('PTTL', KEYS[4])
  if ttl > 0 then
    local t = redis.call('TIME')
    local ends = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl
    if math.abs(ends - tonumber(ARGV[4])) * 2 < tonumber(ARGV[3]) and tonumber(redis.call('GET', KEYS[4])) > 0 then
      redis.call('DECR', KEYS[4])
    end
  end
end
return 0`;

interface GatehouseRedis extends Redis {
  gatehouseAdmit(
    k1: string,
    k2: string,
    k3: string,
    k4: string,
    ...argv: (string | number)[]
  ): Promise<number[]>;
  gatehouseRelease(
    k1: string,
    k2: string,
    k3: string,
    k4: string,
    ...argv: (string | number)[]
  ): Promise<number>;
}

/** The endpoint key: `'<METHOD> <pattern>'`, or one shared key for every unknown route. */
export function endpointKey(routes: RouteTable, method: string, path: string): string {
  return routes.match(method, path).endpoint;
}

export interface RateLimitDecision {
  limit: number;
  remaining: number;
  /** Epoch seconds when the window resets. */
  reset: number;
  allowed: boolean;
  retryAfterSec: number;
}

/**
 * Fixed windows counted in process memory, synchronously: the semantics of rate-limiter-flexible's
 * RateLimiterMemory (a key's window starts at its first request and lasts `durationSec`; a refused request is
 * counted too), without a Promise per check nor a timer per key: expired windows are swept once per window.
 */
class MemoryWindows {
  private readonly windows = new Map<string, { consumed: number; expiresAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly durationMs: number) {
    this.sweeper = setInterval(() => this.sweep(), durationMs);
    this.sweeper.unref();
  }

  /** Counts one request of `key`: points consumed in its window so far (this one included), ms left. */
  incr(key: string, now = Date.now()): { consumed: number; msBeforeNext: number } {
    const w = this.windows.get(key);
    if (w !== undefined && w.expiresAt > now) {
      w.consumed++;
      return { consumed: w.consumed, msBeforeNext: w.expiresAt - now };
    }
    this.windows.set(key, { consumed: 1, expiresAt: now + this.durationMs });
    return { consumed: 1, msBeforeNext: this.durationMs };
  }

  /**
   * Charges one request of `key` unless `limit` are already charged in its window (a refused request is not
   * counted): what {@link incr} counts, checked and charged in one step. `expiresAt` tags the window for a refund.
   */
  take(
    key: string,
    limit: number,
    now = Date.now(),
  ): { allowed: boolean; consumed: number; msBeforeNext: number; expiresAt: number } {
    let w = this.windows.get(key);
    if (w === undefined || w.expiresAt <= now) {
      w = { consumed: 0, expiresAt: now + this.durationMs };
      this.windows.set(key, w);
    }
    const allowed = w.consumed < limit;
    if (allowed) w.consumed++;
    return { allowed, consumed: w.consumed, msBeforeNext: w.expiresAt - now, expiresAt: w.expiresAt };
  }

  /** Gives back a charge of {@link take}, only into the window it was taken from (`expiresAt`). */
  refund(key: string, expiresAt: number): void {
    const w = this.windows.get(key);
    if (w !== undefined && w.expiresAt === expiresAt && w.consumed > 0) w.consumed--;
  }

  /** Gives back one point of `key` counted in its current window (a reservation that was not needed). */
  release(key: string, now = Date.now()): void {
    const w = this.windows.get(key);
    if (w !== undefined && w.expiresAt > now && w.consumed > 0) w.consumed--;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, w] of this.windows) if (w.expiresAt <= now) this.windows.delete(key);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/** Sets the X-RateLimit-* headers of a decision (and Retry-After when refused); true when allowed. */
export function applyRateLimitHeaders(res: ServerResponse, d: RateLimitDecision): boolean {
  res.setHeader('X-RateLimit-Limit', String(d.limit));
  res.setHeader('X-RateLimit-Remaining', String(d.remaining));
  res.setHeader('X-RateLimit-Reset', String(d.reset));
  if (d.allowed) return true;
  res.setHeader('Retry-After', String(d.retryAfterSec));
  return false;
}

export class HttpRateLimiter {
  private readonly limiters = new Map<number, RateLimiterAbstract>();
  /** Without Redis: the counts, one set of windows per limit (as one RateLimiterMemory per limit was). */
  private readonly memory = new Map<number, MemoryWindows>();
  private readonly overrides = new Map<string, number>();
  private readonly redis?: Redis;
  private readonly keyPrefix: string;
  /** Without Redis (or while it is down): credentials that proved good, until the end of their window. */
  private readonly good = new Map<string, number>();
  private lastWarn = 0;
  /** Redis is configured and a warning said it failed: the next 'ready' says it answers again. */
  private degraded = false;
  /**
   * Decisions taken in this process's memory although Redis is configured (not ready, or failing under a request):
   * with several replicas, each counts those on its own. Read by /metrics (`gatehouse_rate_limit_local_total`).
   */
  localDecisions = 0;

  constructor(
    private readonly opts: RateLimitOptions,
    serviceName: string,
    private readonly logger: Logger,
  ) {
    if (!Number.isInteger(opts.points) || opts.points < 1)
      throw new Error('rateLimit.points must be an integer >= 1');
    if (!Number.isInteger(opts.durationSec) || opts.durationSec < 1)
      throw new Error('rateLimit.durationSec must be an integer >= 1');
    for (const [spec, points] of Object.entries(opts.overrides ?? {})) {
      const { method, pattern } = parseRouteSpec(spec);
      if (!Number.isInteger(points) || points < 1)
        throw new Error(`rateLimit.overrides["${spec}"] must be >= 1`);
      this.overrides.set(`${method} ${pattern}`, points);
    }
    this.keyPrefix = opts.keyPrefix ?? `gatehouse:rl:${serviceName}`;
    if (opts.redisUrl) {
      this.redis = new Redis(opts.redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        // A replica starting on a busy host (several starting at once, CPU-bound start-up) can take seconds to
        // complete a local connect; 2 s made it count in memory for no reason.
        connectTimeout: 5000,
        // ioredis keeps a timer of this length after disconnect() even when the socket is already gone.
        disconnectTimeout: 200,
        lazyConnect: true,
      });
      this.redis.defineCommand('gatehouseAdmit', { numberOfKeys: 4, lua: ADMIT_LUA });
      this.redis.defineCommand('gatehouseRelease', { numberOfKeys: 4, lua: RELEASE_LUA });
      this.redis.on('error', (err: Error) =>
        this.warn('Redis for rate limits unavailable; counting in memory', err),
      );
      this.redis.on('ready', () => {
        if (!this.degraded) return;
        this.degraded = false;
        this.logger.info('Redis for rate limits answers; counting shared again');
      });
    }
  }

  /** Whether the counts are shared: `undefined` without Redis, else whether Redis is ready now. */
  sharedStoreUp(): boolean | undefined {
    return this.redis ? this.redis.status === 'ready' : undefined;
  }

  /** Connects to Redis (when configured), waiting at most `timeoutMs`; never throws. */
  async start(timeoutMs = 5000): Promise<void> {
    if (!this.redis) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.redis.connect(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      this.warn('Redis for rate limits unavailable at start; counting in memory until it answers', err);
    } finally {
      clearTimeout(timer);
    }
  }

  private closed = false;

  /** Idempotent: Nest's shutdown hook and the service's own signal handler may both close the app. */
  async close(): Promise<void> {
    for (const m of this.memory.values()) m.close();
    if (!this.redis || this.closed) return;
    this.closed = true;
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  limitFor(endpoint: string): number {
    return this.overrides.get(endpoint) ?? this.opts.points;
  }

  private limiter(points: number): RateLimiterAbstract {
    let l = this.limiters.get(points);
    if (!l) {
      const base = { points, duration: this.opts.durationSec, keyPrefix: `${this.keyPrefix}:${points}` };
      l = this.redis
        ? new RateLimiterRedis({
            ...base,
            storeClient: this.redis,
            rejectIfRedisNotReady: true,
            // Redis down: each replica keeps counting on its own rather than letting everything through.
            insuranceLimiter: new RateLimiterMemory(base),
          })
        : new RateLimiterMemory(base);
      this.limiters.set(points, l);
    }
    return l;
  }

  private open(limit: number): RateLimitDecision {
    return {
      limit,
      remaining: limit,
      reset: Math.ceil(Date.now() / 1000 + this.opts.durationSec),
      allowed: true,
      retryAfterSec: 0,
    };
  }

  /** Counts one request of `caller` on `endpoint`. Fails open (allowed) when the store errors. */
  async consume(
    endpoint: string,
    caller: string,
    limit = this.limitFor(endpoint),
  ): Promise<RateLimitDecision> {
    if (!this.redis) return this.consumeInMemory(endpoint, caller, limit);
    // not ready: rate-limiter-flexible answers from its insurance limiter, in this process's memory
    if (this.redis.status !== 'ready') this.localDecisions++;
    try {
      return decision(limit, await this.limiter(limit).consume(`${endpoint}|${caller}`), true);
    } catch (err) {
      if (err instanceof RateLimiterRes) return decision(limit, err, false);
      this.warn('Rate limiter failed; request let through', err);
      return this.open(limit);
    }
  }

  private windows(limit: number): MemoryWindows {
    let m = this.memory.get(limit);
    if (m === undefined) {
      m = new MemoryWindows(this.opts.durationSec * 1000);
      this.memory.set(limit, m);
    }
    return m;
  }

  /** {@link consume} without Redis: synchronous. */
  private consumeInMemory(endpoint: string, caller: string, limit: number): RateLimitDecision {
    const now = Date.now();
    const r = this.windows(limit).incr(`${endpoint}|${caller}`, now);
    return {
      limit,
      remaining: Math.max(0, limit - r.consumed),
      reset: Math.ceil((now + r.msBeforeNext) / 1000),
      allowed: r.consumed <= limit,
      retryAfterSec: Math.max(1, Math.ceil(r.msBeforeNext / 1000)),
    };
  }

  private get authFailureLimit(): number {
    return this.opts.authFailures ?? this.opts.points;
  }

  private get addressFailureLimit(): number {
    return this.opts.authFailuresPerAddress ?? 10 * this.authFailureLimit;
  }

  private warn(msg: string, err: unknown) {
    this.degraded = true;
    const now = Date.now();
    if (now - this.lastWarn < 10_000) return;
    this.lastWarn = now;
    this.logger.warn({ err }, msg);
  }

  /** Whether the credential proved good in the current window (in process memory). */
  private provenGood(credential: string, now: number): boolean {
    const until = this.good.get(credential);
    return until !== undefined && until > now;
  }

  private markGood(credential: string, now: number): void {
    const windowMs = this.opts.durationSec * 1000;
    const until = this.good.get(credential);
    // A busy good client renews its mark once per half window, not at every request.
    if (until !== undefined && until - now > windowMs / 2) return;
    if (this.good.size >= GOOD_CACHE_SIZE) this.good.clear();
    this.good.set(credential, now + windowMs);
  }

  /** Whether a good credential's shared mark (Redis) is due for renewal: at most once per half window. */
  private renewDue(credential: string): boolean {
    const now = Date.now();
    const until = this.good.get(credential);
    if (until !== undefined && until - now > (this.opts.durationSec * 1000) / 2) return false;
    this.markGood(credential, now);
    return true;
  }

  private refused(limit: number, msBeforeNext: number, now = Date.now()): RateLimitDecision {
    return {
      limit,
      remaining: 0,
      reset: Math.ceil((now + msBeforeNext) / 1000),
      allowed: false,
      retryAfterSec: Math.max(1, Math.ceil(msBeforeNext / 1000)),
    };
  }

  /**
   * Decides on one request and calls `done` with the decision: at once (synchronously) when the counts are in
   * memory, once Redis answered otherwise; `fail` on an unexpected error.
   *
   * The rule: a request is charged to its quota atomically BEFORE it is handled, in the one step that checks it
   * (one Lua script in Redis, one synchronous step in memory), so that concurrent requests, on one replica or on
   * many sharing Redis, are admitted exactly up to the limit and never over it. The one refund: a 401.
   * - Without credentials (`presented` undefined) a request counts against its source address, at once (a refused
   *   one is counted too).
   * - A credential that proved good in the window reserves no failure: it is checked, and its own quota is charged
   *   for it; a 401 to it forgets that it was good (a token revoked meanwhile counts again from its next request).
   * - Any other credential (Bearer, Basic), before it is checked, reserves one failure (counted atomically) for
   *   the pair (source address, credential): past RATE_LIMIT_AUTH_FAILURES that credential is 429 from that
   *   address without being checked, and concurrent requests cannot all slip under the limit; and one failure for
   *   the address (a second, larger budget against ever new credentials): past it only credentials already
   *   proven good are checked from there. Then the quota of the caller the credentials name is charged, in the
   *   same step; used up, the request is 429 and its failures are given back.
   * - The answer settles it: a 401 keeps the failures and refunds the quota's charge (into the window it was taken
   *   from only), anything else gives the failures back and marks the credential as proven good. So nobody spends
   *   another caller's budget by naming it (a wrong secret holds a charge on the named client's quota only while
   *   its request is in flight, and the failure budgets bound how many are), random tokens cost their sender, and
   *   a good credential is served even from an address that many bad ones came from. A request whose client went
   *   away before the answer stays charged.
   */
  admit(
    endpoint: string,
    presented: PresentedCredential | undefined,
    address: string,
    res: ServerResponse,
    done: (d: RateLimitDecision) => void,
    fail: (err: unknown) => void,
  ): void {
    if (!presented) {
      if (!this.redis) return done(this.consumeInMemory(endpoint, address, this.limitFor(endpoint)));
      this.consume(endpoint, address).then(done, fail);
      return;
    }
    if (this.redis?.status === 'ready')
      return this.admitInRedis(endpoint, presented, address, res, done, fail);
    if (this.redis) this.localDecisions++;
    this.admitInMemory(endpoint, presented, address, res, done);
  }

  /** The decision on a request admitted by a quota with `consumed` charged and `msBeforeNext` left in its window. */
  private admitted(
    limit: number,
    consumed: number,
    msBeforeNext: number,
    now = Date.now(),
  ): RateLimitDecision {
    return {
      limit,
      remaining: Math.max(0, limit - consumed),
      reset: Math.ceil((now + msBeforeNext) / 1000),
      allowed: true,
      retryAfterSec: Math.max(1, Math.ceil(msBeforeNext / 1000)),
    };
  }

  private admitInMemory(
    endpoint: string,
    presented: PresentedCredential,
    address: string,
    res: ServerResponse,
    done: (d: RateLimitDecision) => void,
  ): void {
    const now = Date.now();
    const limit = this.limitFor(endpoint);
    const quota = this.windows(limit);
    const quotaKey = `${endpoint}|${presented.caller}`;
    // A credential proven good in the window reserves no failure (its concurrent requests never meet a failure
    // budget); a 401 to it forgets that, so a credential revoked meanwhile counts again from its next request.
    if (this.provenGood(presented.credential, now)) {
      const q = quota.take(quotaKey, limit, now);
      if (!q.allowed) return done(this.refused(limit, q.msBeforeNext, now));
      res.once('finish', () => {
        if (res.statusCode !== 401) return;
        this.good.delete(presented.credential);
        quota.refund(quotaKey, q.expiresAt);
      });
      return done(this.admitted(limit, q.consumed, q.msBeforeNext, now));
    }
    const credLimit = this.authFailureLimit;
    const credKey = `${AUTH_FAILURES}|${address}|${presented.credential}`;
    const credWindows = this.windows(credLimit);
    const cred = credWindows.incr(credKey, now);
    if (cred.consumed > credLimit) return done(this.refused(credLimit, cred.msBeforeNext, now));
    const addrLimit = this.addressFailureLimit;
    const addrWindows = this.windows(addrLimit);
    const addrKey = `${ADDRESS_FAILURES}|${address}`;
    const addr = addrWindows.incr(addrKey, now);
    if (addr.consumed > addrLimit) {
      credWindows.release(credKey, now);
      return done(this.refused(addrLimit, addr.msBeforeNext, now));
    }
    const release = (at?: number) => {
      credWindows.release(credKey, at);
      addrWindows.release(addrKey, at);
    };
    const q = quota.take(quotaKey, limit, now);
    if (!q.allowed) {
      release(now);
      return done(this.refused(limit, q.msBeforeNext, now));
    }
    res.once('finish', () => {
      if (res.statusCode === 401) return quota.refund(quotaKey, q.expiresAt);
      release();
      this.markGood(presented.credential, Date.now());
    });
    done(this.admitted(limit, q.consumed, q.msBeforeNext, now));
  }

  private admitInRedis(
    endpoint: string,
    presented: PresentedCredential,
    address: string,
    res: ServerResponse,
    done: (d: RateLimitDecision) => void,
    fail: (err: unknown) => void,
  ): void {
    const redis = this.redis as GatehouseRedis;
    const credLimit = this.authFailureLimit;
    const addrLimit = this.addressFailureLimit;
    const windowMs = this.opts.durationSec * 1000;
    const credKey = `${this.keyPrefix}:${AUTH_FAILURES}:${address}|${presented.credential}`;
    const addrKey = `${this.keyPrefix}:${ADDRESS_FAILURES}:${address}`;
    const goodKey = `${this.keyPrefix}:good:${presented.credential}`;
    const limit = this.limitFor(endpoint);
    // The key rate-limiter-flexible gives this quota (`<prefix>:<points>:<key>`), an integer with an expiry alike.
    const quotaKey = `${this.keyPrefix}:${limit}:${endpoint}|${presented.caller}`;
    redis.gatehouseAdmit(credKey, addrKey, goodKey, quotaKey, credLimit, addrLimit, windowMs, limit).then(
      ([verdict, ms, counted, consumed, windowEnd]) => {
        if (verdict === 1) return done(this.refused(credLimit, ms));
        if (verdict === 2) return done(this.refused(addrLimit, ms));
        if (verdict === 3) return done(this.refused(limit, ms));
        // giveBack: 1 the failures counted ahead are given back; good: 1 proved good, 0 nothing learnt, -1 refused
        // although remembered good (forget it); refund: the quota window's end to refund the charge into, or 0
        const settle = (giveBack: number, good: 1 | 0 | -1, refund: number) =>
          redis
            .gatehouseRelease(credKey, addrKey, goodKey, quotaKey, giveBack, good, windowMs, refund)
            .catch((err: unknown) => this.warn('Rate limiter failed to settle a request', err));
        res.once('finish', () => {
          // a 401 keeps the failures counted and gives the quota's charge back
          if (res.statusCode === 401) return void settle(0, counted === 0 ? -1 : 0, windowEnd);
          // a proven credential renews its mark at most once per half window, like the in-memory one
          if (counted === 1 || this.renewDue(presented.credential)) void settle(counted, 1, 0);
        });
        done(this.admitted(limit, consumed, ms));
      },
      (err: unknown) => {
        // Redis failed under this request: count it in this process, as the quota's insurance limiter does.
        this.warn('Rate limiter failed; counting in memory', err);
        this.localDecisions++;
        try {
          this.admitInMemory(endpoint, presented, address, res, done);
        } catch (e) {
          fail(e);
        }
      },
    );
  }

  /** Express middleware: {@link admit}, the X-RateLimit-* headers on every response, 429 over the limit. */
  middleware(routes: RouteTable) {
    return (req: Request, res: Response, next: NextFunction) => {
      if (EXEMPT.has(req.path)) return next();
      this.admit(
        routeMatch(routes, req).endpoint,
        presentedCredential(req),
        addressKey(req),
        res,
        (d) => {
          if (applyRateLimitHeaders(res, d)) return next();
          next(new DomainError(ErrorCode.TooManyRequests, TOO_MANY_REQUESTS_MESSAGE));
        },
        next,
      );
    };
  }
}

/** Probes and the scrape: never counted, no rate-limit headers. */
export function isRateLimitExempt(path: string): boolean {
  return EXEMPT.has(path);
}

function decision(limit: number, r: RateLimiterRes, allowed: boolean): RateLimitDecision {
  return {
    limit,
    remaining: Math.max(0, r.remainingPoints),
    reset: Math.ceil((Date.now() + r.msBeforeNext) / 1000),
    allowed,
    retryAfterSec: Math.max(1, Math.ceil(r.msBeforeNext / 1000)),
  };
}
