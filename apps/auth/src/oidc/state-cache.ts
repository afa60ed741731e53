import type { IdentityChange } from '@gatehouse/bearer';

/** What an entry depends on: a change of this client or of this user drops it. */
export interface StateTags {
  client?: string;
  user?: string;
}

interface Entry {
  value: unknown;
  expires: number;
  client?: string;
  user?: string;
}

export interface StateCacheOptions {
  /** Most entries kept; past it the least recently used go. 0 turns the cache off. */
  max: number;
  /** How long an entry is trusted without a change notification (the bound on staleness when the feed is down). */
  ttlMs: number;
  now?: () => number;
}

/**
 * The identity rows the token server reads on every token request and /tokeninfo call (a client with its decrypted
 * secret, its access to a resource, a user), kept in memory across requests (issue 16):
 * - bounded: at most `max` entries, least recently used first out (a Map in use order);
 * - dropped at once by the identity change feed (LISTEN/NOTIFY): `client:<id>` drops what that client's entries,
 *   `user:<id>` that user's, `all` (and a lost feed) everything;
 * - trusted for `ttlMs` at most, so that with the feed down a change counts after that long.
 * A read that started before a change is not stored after it (the generation check), so a change is never
 * overwritten by the stale row a concurrent request was reading.
 */
export class StateCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private readonly now: () => number;
  hits = 0;
  misses = 0;

  constructor(private readonly opts: StateCacheOptions) {
    this.now = opts.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.opts.max > 0 && this.opts.ttlMs > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value kept under `key`, or undefined (unknown or expired). */
  get<T>(key: string): T | undefined {
    const e = this.entries.get(key);
    if (!e) {
      this.misses++;
      return undefined;
    }
    if (e.expires <= this.now()) {
      this.entries.delete(key);
      this.misses++;
      return undefined;
    }
    // most recently used goes last
    this.entries.delete(key);
    this.entries.set(key, e);
    this.hits++;
    return e.value as T;
  }

  /**
   * `read()` once for `key`, kept when `keep(value)` (a missing row is not kept: it may be created any time) and no
   * change arrived while it was being read.
   */
  async through<T>(
    key: string,
    tags: (value: T) => StateTags,
    read: () => Promise<T>,
    keep: (value: T) => boolean,
  ): Promise<T> {
    const known = this.get<T>(key);
    if (known !== undefined) return known;
    const generation = this.snapshot();
    const value = await read();
    if (keep(value)) this.store(key, value, tags(value), generation);
    return value;
  }

  /** Taken before a read: `store` keeps its result only when no change arrived since. */
  snapshot(): number {
    return this.generation;
  }

  /** Keeps `value` under `key`, unless a change arrived since `snapshot` (then the value may be stale). */
  store(key: string, value: unknown, tags: StateTags, snapshot: number, expiresAt = Infinity): void {
    if (!this.enabled || snapshot !== this.generation) return;
    this.entries.delete(key);
    this.entries.set(key, {
      value,
      expires: Math.min(this.now() + this.opts.ttlMs, expiresAt),
      client: tags.client?.toLowerCase(),
      user: tags.user?.toLowerCase(),
    });
    while (this.entries.size > this.opts.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Drops what `change` makes stale. */
  forget(change: IdentityChange): void {
    this.generation++;
    if (change.kind === 'all') {
      this.entries.clear();
      return;
    }
    const field = change.kind;
    for (const [key, e] of this.entries) if (e[field] === change.id) this.entries.delete(key);
  }

  /** Drops one entry (a change this process made itself and knows exactly). */
  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  clear(): void {
    this.forget({ kind: 'all' });
  }
}
