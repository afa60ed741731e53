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
   * Failed authentications (a 401 to a request that presented credentials) allowed per source address and window,
   * over all endpoints; past it every request of that address that presents credentials is 429 before any of
   * them is checked (default: `points`).
   */
  authFailures?: number;
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
 * The caller a request's credentials claim to be: a hash of the bearer token or the client id of Basic
 * credentials (a token is hashed so the store never holds a credential); undefined without credentials.
 */
export function claimedCallerKey(req: Pick<KeyedRequest, 'headers'>): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const [scheme, value] = auth.trim().split(SPACES, 2);
    if (value && scheme.toLowerCase() === 'bearer') return hashedKey('bearer:', value);
    if (value && scheme.toLowerCase() === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const sep = decoded.indexOf(':');
      const id = sep >= 0 ? decoded.slice(0, sep) : decoded;
      if (id) return hashedKey('client:', id);
    }
  }
  return undefined;
}

/** Who is calling: the claimed caller of the credentials, else the source address. */
export function callerKey(req: KeyedRequest): string {
  return claimedCallerKey(req) ?? addressKey(req);
}

/** The key of the failed-authentication counter: one per source address, over every endpoint. */
const AUTH_FAILURES = 'auth-failures';

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

  /** Where `key` stands, without counting; undefined when it has no open window. */
  get(key: string, now = Date.now()): { consumed: number; msBeforeNext: number } | undefined {
    const w = this.windows.get(key);
    return w !== undefined && w.expiresAt > now
      ? { consumed: w.consumed, msBeforeNext: w.expiresAt - now }
      : undefined;
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
  private lastWarn = 0;

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
        connectTimeout: 2000,
        // ioredis keeps a timer of this length after disconnect() even when the socket is already gone.
        disconnectTimeout: 200,
        lazyConnect: true,
      });
      this.redis.on('error', (err: Error) =>
        this.warn('Redis for rate limits unavailable; counting in memory', err),
      );
    }
  }

  /** Connects to Redis (when configured), waiting at most `timeoutMs`; never throws. */
  async start(timeoutMs = 2000): Promise<void> {
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

  /** Where `caller` stands on `endpoint`, without counting (a request about to be counted: one more). */
  async peek(endpoint: string, caller: string, limit = this.limitFor(endpoint)): Promise<RateLimitDecision> {
    if (!this.redis) return this.peekInMemory(endpoint, caller, limit);
    try {
      const r = await this.limiter(limit).get(`${endpoint}|${caller}`);
      const consumed = r?.consumedPoints ?? 0;
      const msBeforeNext = r?.msBeforeNext ?? this.opts.durationSec * 1000;
      return {
        limit,
        remaining: Math.max(0, limit - consumed - 1),
        reset: Math.ceil((Date.now() + msBeforeNext) / 1000),
        allowed: consumed < limit,
        retryAfterSec: Math.max(1, Math.ceil(msBeforeNext / 1000)),
      };
    } catch (err) {
      this.warn('Rate limiter failed; request let through', err);
      return this.open(limit);
    }
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

  /** {@link peek} without Redis: synchronous. */
  private peekInMemory(endpoint: string, caller: string, limit: number): RateLimitDecision {
    const now = Date.now();
    const r = this.windows(limit).get(`${endpoint}|${caller}`, now);
    const consumed = r?.consumed ?? 0;
    const msBeforeNext = r?.msBeforeNext ?? this.opts.durationSec * 1000;
    return {
      limit,
      remaining: Math.max(0, limit - consumed - 1),
      reset: Math.ceil((now + msBeforeNext) / 1000),
      allowed: consumed < limit,
      retryAfterSec: Math.max(1, Math.ceil(msBeforeNext / 1000)),
    };
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

  private warn(msg: string, err: unknown) {
    const now = Date.now();
    if (now - this.lastWarn < 10_000) return;
    this.lastWarn = now;
    this.logger.warn({ err }, msg);
  }

  /**
   * Decides on one request and calls `done` with the decision: at once (synchronously) when the counts are in
   * memory, once Redis answered otherwise; `fail` on an unexpected error.
   * - Without credentials (`claimed` undefined) a request counts against its source address, at once.
   * - With credentials (Bearer, Basic) it counts against the caller they name, but only once the answer shows
   *   they were good: a 401 counts instead against the source address's failed authentications (over every
   *   endpoint), and past RATE_LIMIT_AUTH_FAILURES that address's credentialed requests are 429 before any of
   *   them is checked. So nobody spends another caller's budget by naming it, and random tokens cost their sender.
   */
  admit(
    endpoint: string,
    claimed: string | undefined,
    address: string,
    res: ServerResponse,
    done: (d: RateLimitDecision) => void,
    fail: (err: unknown) => void,
  ): void {
    if (!this.redis) {
      if (!claimed) return done(this.consumeInMemory(endpoint, address, this.limitFor(endpoint)));
      const failures = this.peekInMemory(AUTH_FAILURES, address, this.authFailureLimit);
      if (!failures.allowed) return done(failures);
      const own = this.peekInMemory(endpoint, claimed, this.limitFor(endpoint));
      if (own.allowed) {
        res.once('finish', () => {
          if (res.statusCode === 401) this.consumeInMemory(AUTH_FAILURES, address, this.authFailureLimit);
          else this.consumeInMemory(endpoint, claimed, this.limitFor(endpoint));
        });
      }
      return done(own);
    }
    if (!claimed) {
      this.consume(endpoint, address).then(done, fail);
      return;
    }
    Promise.all([
      this.peek(AUTH_FAILURES, address, this.authFailureLimit),
      this.peek(endpoint, claimed),
    ]).then(([failures, own]) => {
      if (!failures.allowed) return done(failures);
      if (own.allowed) {
        res.once('finish', () => {
          const counted =
            res.statusCode === 401
              ? this.consume(AUTH_FAILURES, address, this.authFailureLimit)
              : this.consume(endpoint, claimed);
          counted.catch(() => undefined);
        });
      }
      done(own);
    }, fail);
  }

  /** Express middleware: {@link admit}, the X-RateLimit-* headers on every response, 429 over the limit. */
  middleware(routes: RouteTable) {
    return (req: Request, res: Response, next: NextFunction) => {
      if (EXEMPT.has(req.path)) return next();
      this.admit(
        routeMatch(routes, req).endpoint,
        claimedCallerKey(req),
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
