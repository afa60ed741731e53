import { changeTag, TaggedCache, type IdentityChange } from '@gatehouse/changes';

/** What an entry depends on: a change of this client or of this user drops it. */
export interface StateTags {
  client?: string;
  user?: string;
}

export interface StateCacheOptions {
  /** Most entries kept; past it the least recently used go. 0 turns the cache off. */
  max: number;
  /** How long an entry is kept at most (a bound on memory of rows nobody changes; invalidation is exact). */
  ttlMs: number;
  now?: () => number;
  /**
   * Whether the cache may be used now (the change feed's trust window, see CacheSubscriber). While it is not,
   * nothing is answered from the cache or stored in it, and what it held is dropped.
   */
  trusted?: () => boolean;
}

const tagKeys = (tags: StateTags): string[] => {
  const keys: string[] = [];
  if (tags.client) keys.push(changeTag('client', tags.client));
  if (tags.user) keys.push(changeTag('user', tags.user));
  return keys;
};

/**
 * The identity rows the token server reads on every token request and /tokeninfo call (a client with its decrypted
 * secret, its access to a resource, a user, a live grant), kept in memory across requests:
 * - bounded: at most `max` entries, least recently used first out (a TaggedCache that moves a hit last);
 * - dropped by the identity change feed (LISTEN/NOTIFY): `client:<id>` drops that client's entries, `user:<id>`
 *   that user's (through the TaggedCache's tag -> keys index, no scan), `all` (and a lost feed) everything; the
 *   feed's settle protocol makes this exact (@gatehouse/changes settle.ts);
 * - used only while `trusted()` (the subscriber's heartbeat is recent);
 * - kept `ttlMs` at most.
 * A read that started before a change is not stored after it (the generation check), so a change is never
 * overwritten by the stale row a concurrent request was reading.
 */
export class StateCache {
  private readonly entries: TaggedCache<unknown>;
  private generation = 0;
  private readonly now: () => number;
  private readonly trustedNow: () => boolean;
  hits = 0;
  misses = 0;

  constructor(private readonly opts: StateCacheOptions) {
    this.now = opts.now ?? Date.now;
    this.trustedNow = opts.trusted ?? (() => true);
    this.entries = new TaggedCache({ max: opts.max, touch: true, now: this.now });
  }

  get enabled(): boolean {
    return this.opts.max > 0 && this.opts.ttlMs > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Keys indexed under a tag (for tests). */
  indexed(tag: string): number {
    return this.entries.indexed(tag);
  }

  /** Whether the cache may be used now; when not, it is emptied (and a read in flight will not be stored). */
  private trusted(): boolean {
    if (this.trustedNow()) return true;
    if (this.entries.size) this.clear();
    return false;
  }

  /** The value kept under `key`, or undefined (unknown, expired, or the cache is not trusted now). */
  get<T>(key: string): T | undefined {
    // (no value kept is undefined: see `through`)
    const value = this.entries.get(key);
    if (value === undefined || !this.trusted()) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    return value as T;
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

  /**
   * A number that changes with every change the cache hears of (and whenever it stops being trusted); undefined
   * while the cache is off or not trusted. An answer computed from cached rows stays right while it is unchanged.
   */
  version(): number | undefined {
    return this.enabled && this.trusted() ? this.generation : undefined;
  }

  /** Taken before a read: `store` keeps its result only when no change arrived since. */
  snapshot(): number {
    return this.generation;
  }

  /**
   * Keeps `value` under `key`, unless a change arrived since `snapshot` (then the value may be stale) or the cache
   * is not trusted now.
   */
  store(key: string, value: unknown, tags: StateTags, snapshot: number, expiresAt = Infinity): void {
    if (!this.enabled || snapshot !== this.generation || !this.trusted()) return;
    this.entries.set(key, value, Math.min(this.now() + this.opts.ttlMs, expiresAt), tagKeys(tags));
  }

  /** Drops what `change` makes stale. */
  forget(change: IdentityChange): void {
    this.generation++;
    this.entries.forget(change);
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
