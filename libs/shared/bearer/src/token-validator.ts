import { decodeJwt } from 'jose';
import { changeTag, TaggedCache, type IdentityChange } from '@gatehouse/changes';
import { tokenDigest } from '@gatehouse/http';

/** The authenticated caller of a request, from the token server's /tokeninfo. */
export interface CallerInfo {
  /** Client the token was issued to. */
  clientId: string;
  /** Subject: the user id for user tokens, the client id for client-credentials tokens. */
  sub: string;
  /** Granted scopes. */
  scopes: string[];
  /** Audiences (resource identifiers) the token is for. */
  audience: string[];
  tenantId?: string;
  /**
   * A user token of the management API acting in one tenant (`acting_tenant_id` of /tokeninfo): the caller reaches
   * that tenant only, as a client that is not global does.
   */
  actingTenantId?: string;
  /** Instance of the token's client (`instance_id` of /tokeninfo); absent when the token server did not say it. */
  instanceId?: string;
  /** Whether that instance is the default one (`default_instance` of /tokeninfo); absent when not said. */
  defaultInstance?: boolean;
  /** Login of the user (user tokens). */
  username?: string;
  tokenType?: string;
  /** Expiry of the token, when the token server told it. */
  expiresAt?: Date;
}

export interface TokenValidatorOptions {
  /** Base URL of the token server (AUTH_URL); /tokeninfo is called under it. */
  authUrl: string;
  /** Longest time an active result is cached (it is never kept past the token's exp). 0 disables caching. */
  cacheTtlSec: number;
  /** How long an inactive result is cached. */
  negativeTtlSec: number;
  /** Timeout of one /tokeninfo call (default 3000 ms). */
  timeoutMs?: number;
  /** Most entries in the cache (default 10 000). */
  maxEntries?: number;
  /** Clock, for tests (default Date.now). */
  now?: () => number;
}

/** The token server could not be reached, timed out, or answered with an error of its own (5xx, 429, not JSON). */
export class TokenServerUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenServerUnavailableError';
  }
}

interface Entry {
  caller: CallerInfo | null;
  until: number;
}

/** RFC 6750 token68 characters; anything else is not a bearer token and never reaches the token server. */
const TOKEN_RE = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_LENGTH = 8192;

export interface TokenValidatorStats {
  /** Answers served from the cache. */
  hits: number;
  /** Calls made to /tokeninfo. */
  remoteCalls: number;
  /** Look-ups that joined a call already in flight for the same token. */
  joined: number;
}

/**
 * Validates access tokens through the token server's `POST /tokeninfo` (the token is sent as the form field and as
 * its own Bearer credential). Active results are cached until the earlier of the token's expiry and `cacheTtlSec`;
 * inactive results for `negativeTtlSec`; concurrent look-ups of one token share one call. Cache keys are SHA-256
 * digests (`tokenDigest`, the one the rate limits key on, memoised per process for the tokens seen last, so a request
 * hashes its token once at most). Failures to reach the token server are never cached. An active result is tagged
 * with its client and subject (`forget` drops it when the change channel announces either); the oldest stored goes
 * first past `maxEntries`.
 */
export class TokenValidator {
  private readonly cache: TaggedCache<CallerInfo | null>;
  private readonly inflight = new Map<string, Promise<Entry>>();
  private readonly endpoint: string;
  private readonly now: () => number;
  readonly stats: TokenValidatorStats = { hits: 0, remoteCalls: 0, joined: 0 };

  constructor(private readonly opts: TokenValidatorOptions) {
    this.endpoint = new URL(
      'tokeninfo',
      opts.authUrl.endsWith('/') ? opts.authUrl : `${opts.authUrl}/`,
    ).toString();
    this.now = opts.now ?? Date.now;
    // (at least one entry: the latest result was always kept)
    this.cache = new TaggedCache({ max: Math.max(1, opts.maxEntries ?? 10_000), now: this.now });
  }

  /** The caller of an active token, or null for an inactive or malformed one. Throws TokenServerUnavailableError. */
  async validate(token: string): Promise<CallerInfo | null> {
    const known = this.cached(token);
    if (known !== undefined) return known;
    const key = tokenDigest(token);
    let pending = this.inflight.get(key);
    if (pending) {
      this.stats.joined++;
    } else {
      pending = this.lookup(token)
        .then((entry) => {
          this.remember(key, entry);
          return entry;
        })
        .finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return (await pending).caller;
  }

  /**
   * What `validate` would answer without asking the token server, synchronously: the cached caller of an active
   * token, null for a malformed token or a cached inactive one, undefined when the token server must be asked.
   */
  cached(token: string): CallerInfo | null | undefined {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !TOKEN_RE.test(token)) return null;
    const caller = this.cache.get(tokenDigest(token));
    if (caller !== undefined) this.stats.hits++;
    return caller;
  }

  /** Forget every cached result (e.g. after a known revocation). */
  clear(): void {
    this.cache.clear();
  }

  /**
   * Forget the cached results of the tokens whose caller matches (a scan); returns how many were dropped. A look-up
   * in flight is left to finish.
   */
  forgetWhere(matches: (caller: CallerInfo) => boolean): number {
    return this.cache.forgetWhere((caller) => caller !== null && matches(caller));
  }

  /**
   * Forget the cached results an announced change makes stale: of the tokens of a changed client (`client:<id>`),
   * of a changed user's tokens (`user:<id>`, their subject), every one for `all`. Through the tags, no scan.
   */
  forget(change: IdentityChange): void {
    this.cache.forget(change);
  }

  get size(): number {
    return this.cache.size;
  }

  private remember(key: string, entry: Entry): void {
    if (entry.until <= this.now()) return;
    const c = entry.caller;
    this.cache.set(
      key,
      c,
      entry.until,
      c === null ? undefined : [changeTag('client', c.clientId), changeTag('user', c.sub)],
    );
  }

  /** POST /tokeninfo; a pooled keep-alive connection the server had closed is retried once on a new one. */
  private async post(token: string): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetch(this.endpoint, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body: new URLSearchParams({ token }).toString(),
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 3000),
          redirect: 'error',
        });
      } catch (err) {
        const e = err as Error & { cause?: { code?: string } };
        const code = e.cause?.code;
        if (attempt === 1 && (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET')) continue;
        const why = e.name === 'TimeoutError' ? 'timed out' : (code ?? e.name);
        throw new TokenServerUnavailableError(`token server unreachable (${why})`);
      }
    }
  }

  private async lookup(token: string): Promise<Entry> {
    this.stats.remoteCalls++;
    const res = await this.post(token);
    if (res.status >= 500 || res.status === 429) {
      await res.body?.cancel().catch(() => undefined);
      throw new TokenServerUnavailableError(`token server answered ${res.status}`);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new TokenServerUnavailableError(`token server answered ${res.status} without JSON`);
    }
    const now = this.now();
    const negative = { caller: null, until: now + this.opts.negativeTtlSec * 1000 };
    // 400/401: the token server refused this token itself (malformed, not active): inactive.
    if (!res.ok) return negative;
    if (!body || typeof body !== 'object' || typeof (body as { active?: unknown }).active !== 'boolean') {
      throw new TokenServerUnavailableError('token server answered an unexpected body');
    }
    const caller = toCaller(body as Record<string, unknown>, token);
    if (!caller) return negative;
    const exp = caller.expiresAt?.getTime();
    if (exp !== undefined && exp <= now) return negative;
    const ttlUntil = now + this.opts.cacheTtlSec * 1000;
    return { caller, until: exp !== undefined ? Math.min(exp, ttlUntil) : ttlUntil };
  }
}

function parseDate(v: unknown): Date | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return new Date(v * 1000); // RFC 7662 seconds
  if (typeof v === 'string' && v) {
    const d = new Date(/^\d+$/.test(v) ? Number(v) * 1000 : v);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
}

function audienceOf(info: Record<string, unknown>, token: string): string[] {
  const list = (v: unknown) =>
    typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  const aud = list(info.aud);
  if (aud.length || !token.includes('.')) return aud;
  // /tokeninfo vouched for the token; a JWT's own aud claim may fill in what it did not say.
  try {
    return list(decodeJwt(token).aud);
  } catch {
    return [];
  }
}

/**
 * Map a /tokeninfo body (document 1 fields plus `aud`, `sub`, `tenant_id`, `instance_id`, `default_instance`) to the
 * caller; null when inactive.
 */
function toCaller(info: Record<string, unknown>, token: string): CallerInfo | null {
  if (info.active !== true) return null;
  // Only access tokens call APIs: a refresh token is a credential for the token endpoint alone.
  if (info.token_type !== undefined && info.token_type !== 'Bearer') return null;
  const clientId = typeof info.client_id === 'string' ? info.client_id : undefined;
  const sub =
    typeof info.sub === 'string' ? info.sub : typeof info.subject === 'string' ? info.subject : clientId;
  if (!clientId || !sub) return null;
  const scope = typeof info.scope === 'string' ? info.scope : '';
  return {
    clientId,
    sub,
    scopes: scope.split(' ').filter(Boolean),
    audience: audienceOf(info, token),
    ...(typeof info.tenant_id === 'string' ? { tenantId: info.tenant_id } : {}),
    ...(typeof info.acting_tenant_id === 'string' && info.acting_tenant_id
      ? { actingTenantId: info.acting_tenant_id }
      : {}),
    ...(typeof info.instance_id === 'string' && info.instance_id ? { instanceId: info.instance_id } : {}),
    ...(typeof info.default_instance === 'boolean' ? { defaultInstance: info.default_instance } : {}),
    ...(typeof info.username === 'string' ? { username: info.username } : {}),
    ...(typeof info.token_type === 'string' ? { tokenType: info.token_type } : {}),
    ...(parseDate(info.exp) ? { expiresAt: parseDate(info.exp) } : {}),
  };
}
