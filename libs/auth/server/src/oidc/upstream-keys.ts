import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { OutboundError, type OutboundFetcher } from '@gatehouse/outbound';

/**
 * The keys of an identity provider could not be had (refused by the outbound policy, unreachable, too large, not
 * JSON, no `jwks_uri`, ...). The message is the detail for the log: callers answer one generic error, so that the
 * answer tells nothing about what is behind a URL (no port-scanning oracle).
 */
export class UpstreamKeysError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamKeysError';
  }
}

/** Where the detail of a failed fetch goes (pino's signature). */
export interface UpstreamKeysLog {
  warn(obj: object, msg: string): void;
}

export interface UpstreamKeysOptions {
  /** Key sets (and discovered JWKS URIs) kept at most; the least recently used goes first. */
  maxEntries: number;
  /** A key set older than this is fetched again before use. */
  maxAgeMs: number;
  /** An unknown `kid` refetches a key set at most this often (a flood of forged kids costs one fetch per period). */
  minRefreshMs: number;
  /** The same unknown `kid` is not looked up again within this period. */
  kidRetryMs: number;
  /** A document that could not be fetched is not asked for again within this period (the same error is answered). */
  failureTtlMs: number;
}

const DEFAULTS: UpstreamKeysOptions = {
  maxEntries: 200,
  maxAgeMs: 10 * 60_000,
  minRefreshMs: 1_000,
  kidRetryMs: 30_000,
  failureTtlMs: 5_000,
};

interface KeySetEntry {
  verify: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
  /** Unknown kids looked up, and when. */
  tried: Map<string, number>;
}

/**
 * The signing keys of the identity providers token exchange trusts, per JWKS URI: fetched on first use, kept for
 * `maxAgeMs`, fetched again at once when a token names a `kid` the cached set lacks (the provider rotated its
 * keys), at most every `minRefreshMs` and once per unknown kid per `kidRetryMs`. Bounded (LRU), one fetch in
 * flight per URI. A provider without a configured JWKS URI is asked through its discovery document. Every fetch
 * goes through the outbound fetcher (its URL policy, pinned address, byte cap, timeouts and concurrency limits);
 * a failed one is remembered for `failureTtlMs`.
 */
export class UpstreamKeys {
  private readonly opts: UpstreamKeysOptions;
  private readonly fetcher: OutboundFetcher;
  private readonly log?: UpstreamKeysLog;
  private readonly sets = new Map<string, KeySetEntry>();
  private readonly discovered = new Map<string, { uri: string; at: number }>();
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly failures = new Map<string, { error: UpstreamKeysError; at: number }>();

  constructor(
    deps: { fetcher: OutboundFetcher; log?: UpstreamKeysLog },
    opts: Partial<UpstreamKeysOptions> = {},
  ) {
    this.fetcher = deps.fetcher;
    this.log = deps.log;
    this.opts = { ...DEFAULTS, ...opts };
  }

  /** The JWKS URI of a provider: its own, else the one its discovery document names. */
  async jwksUriOf(provider: { issuer: string; jwks_uri: string | null }): Promise<string> {
    if (provider.jwks_uri) return provider.jwks_uri;
    const issuer = provider.issuer.replace(/\/+$/, '');
    const known = this.discovered.get(issuer);
    if (known && Date.now() - known.at < this.opts.maxAgeMs)
      return this.touch(this.discovered, issuer, known).uri;
    const doc = await this.once(`discovery ${issuer}`, () =>
      this.fetchJson(`${issuer}/.well-known/openid-configuration`),
    );
    const uri = (doc as { jwks_uri?: unknown }).jwks_uri;
    if (typeof uri !== 'string' || !/^https?:\/\//.test(uri)) {
      throw this.logged(new UpstreamKeysError(`the discovery document of ${issuer} names no jwks_uri`));
    }
    this.remember(this.discovered, issuer, { uri, at: Date.now() });
    return uri;
  }

  /** A jose key resolver over the key set at `uri`. */
  resolver(uri: string): JWTVerifyGetKey {
    return async (header, token) => {
      let entry = await this.entry(uri, false);
      try {
        return await entry.verify(header, token);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey) || !this.mayRefresh(entry, header.kid)) throw err;
        entry = await this.entry(uri, true);
        return entry.verify(header, token);
      }
    };
  }

  /** Forget everything (tests). */
  clear(): void {
    this.sets.clear();
    this.discovered.clear();
    this.failures.clear();
  }

  private mayRefresh(entry: KeySetEntry, kid: string | undefined): boolean {
    const now = Date.now();
    if (now - entry.fetchedAt < this.opts.minRefreshMs) return false;
    const key = kid ?? '';
    const tried = entry.tried.get(key);
    if (tried !== undefined && now - tried < this.opts.kidRetryMs) return false;
    if (entry.tried.size >= 1000) entry.tried.clear();
    entry.tried.set(key, now);
    return true;
  }

  private async entry(uri: string, refresh: boolean): Promise<KeySetEntry> {
    const known = this.sets.get(uri);
    if (known && !refresh && Date.now() - known.fetchedAt < this.opts.maxAgeMs) {
      return this.touch(this.sets, uri, known);
    }
    return this.once(`jwks ${uri}`, async () => {
      const jwks = (await this.fetchJson(uri)) as unknown as JSONWebKeySet;
      if (!Array.isArray(jwks.keys)) {
        throw this.logged(new UpstreamKeysError(`${uri} is not a JSON Web Key Set`));
      }
      const fresh: KeySetEntry = {
        verify: createLocalJWKSet(jwks),
        fetchedAt: Date.now(),
        tried: known?.tried ?? new Map(),
      };
      this.remember(this.sets, uri, fresh);
      return fresh;
    });
  }

  /** One fetch per key at a time: concurrent callers share it. */
  private once<T>(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.inflight.get(key) as Promise<T> | undefined;
    if (running) return running;
    const p = work().finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  /** The JSON object at `url`; a failure is logged with its detail and remembered for `failureTtlMs`. */
  private async fetchJson(url: string): Promise<Record<string, unknown>> {
    const failed = this.failures.get(url);
    if (failed && Date.now() - failed.at < this.opts.failureTtlMs) throw failed.error;
    try {
      const body = await this.fetcher.getJson(url);
      this.failures.delete(url);
      return body;
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      const error = this.logged(new UpstreamKeysError(`${url}: ${err.message}`));
      this.remember(this.failures, url, { error, at: Date.now() });
      throw error;
    }
  }

  private logged(err: UpstreamKeysError): UpstreamKeysError {
    this.log?.warn({ err: err.message }, 'identity provider keys could not be fetched');
    return err;
  }

  private touch<V>(map: Map<string, V>, key: string, value: V): V {
    map.delete(key);
    map.set(key, value);
    return value;
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    while (map.size > this.opts.maxEntries) map.delete(map.keys().next().value as string);
  }
}
