import { changePayload, type IdentityChange } from './channel.js';

interface Entry<V> {
  value: V;
  /** Time (of the cache's clock) from which the entry is no longer served. */
  expires: number;
  /** What it depends on: the change payloads that drop it (`client:<id>`, `user:<id>`; see changeTag). */
  tags: readonly string[];
}

export interface TaggedCacheOptions {
  /** Most entries kept; past it the first in order goes. */
  max: number;
  /**
   * A hit moves the entry last, so the least recently used goes first (a Map delete and set per hit). Without it
   * the first stored goes first, and a hit is one Map get.
   */
  touch?: boolean;
  /** Clock of `expires` (default Date.now). */
  now?: () => number;
}

const NO_TAGS: readonly string[] = [];

/**
 * A bounded in-memory cache whose entries are tagged by what they depend on, and dropped by tag when the change
 * channel announces a change of it (`forget`): a tag -> keys index, so a change drops its entries without a scan.
 * A hit is a Map get and a comparison with the clock (plus the move of `touch`): no allocation. Tags cost on
 * `set` only.
 */
export class TaggedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** tag -> the keys of the entries tagged so. */
  private readonly index = new Map<string, Set<string>>();
  private readonly now: () => number;
  private readonly touch: boolean;

  constructor(private readonly opts: TaggedCacheOptions) {
    this.now = opts.now ?? Date.now;
    this.touch = opts.touch ?? false;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Keys indexed under a tag (for tests). */
  indexed(tag: string): number {
    return this.index.get(tag)?.size ?? 0;
  }

  /** The value kept under `key`, or undefined (unknown or expired: an expired entry is dropped). */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.expires <= this.now()) {
      this.remove(key);
      return undefined;
    }
    if (this.touch) {
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e.value;
  }

  /** Keeps `value` under `key` until `expires`, tagged with `tags`; past `max` entries the first in order go. */
  set(key: string, value: V, expires: number, tags: readonly string[] = NO_TAGS): void {
    this.remove(key);
    this.entries.set(key, { value, expires, tags });
    for (const t of tags) {
      let keys = this.index.get(t);
      if (keys === undefined) this.index.set(t, (keys = new Set()));
      keys.add(key);
    }
    while (this.entries.size > this.opts.max) this.remove(this.entries.keys().next().value as string);
  }

  /** Drops the entries tagged `tag`; returns how many. */
  invalidate(tag: string): number {
    const keys = this.index.get(tag);
    if (keys === undefined) return 0;
    let dropped = 0;
    for (const key of [...keys]) if (this.remove(key)) dropped++;
    return dropped;
  }

  /** Drops what an announced change makes stale: the entries tagged with it, everything for `all`. */
  forget(change: IdentityChange): void {
    if (change.kind === 'all') this.clear();
    else this.invalidate(changePayload(change));
  }

  /** Drops the entries whose value matches (a scan: for what tags do not say); returns how many. */
  forgetWhere(matches: (value: V) => boolean): number {
    let dropped = 0;
    for (const [key, e] of this.entries) {
      if (matches(e.value) && this.remove(key)) dropped++;
    }
    return dropped;
  }

  /** Drops one entry; whether it was there. */
  delete(key: string): boolean {
    return this.remove(key);
  }

  clear(): void {
    this.entries.clear();
    this.index.clear();
  }

  private remove(key: string): boolean {
    const e = this.entries.get(key);
    if (e === undefined) return false;
    this.entries.delete(key);
    for (const t of e.tags) {
      const keys = this.index.get(t);
      if (keys === undefined) continue;
      keys.delete(key);
      if (!keys.size) this.index.delete(t);
    }
    return true;
  }
}
