import { StateCache } from './state-cache.js';

describe('StateCache', () => {
  let now = 0;
  const cache = (max = 3, ttlMs = 1000) => new StateCache({ max, ttlMs, now: () => now });
  const keep = <T>(c: StateCache, key: string, value: T, tags = {}) =>
    c.through(
      key,
      () => tags,
      () => Promise.resolve(value),
      () => true,
    );

  beforeEach(() => {
    now = 0;
  });

  it('keeps at most `max` entries, least recently used out first', async () => {
    const c = cache(3);
    await keep(c, 'a', 1);
    await keep(c, 'b', 2);
    await keep(c, 'c', 3);
    expect(c.get('a')).toBe(1); // a is now the most recently used
    await keep(c, 'd', 4);
    expect(c.size).toBe(3);
    expect(c.get('b')).toBeUndefined();
    expect([c.get('a'), c.get('c'), c.get('d')]).toEqual([1, 3, 4]);
  });

  it('trusts an entry for ttlMs only', async () => {
    const c = cache(3, 1000);
    await keep(c, 'a', 1);
    now = 999;
    expect(c.get('a')).toBe(1);
    now = 1000;
    expect(c.get('a')).toBeUndefined();
  });

  it('drops by client, by user, or everything', async () => {
    const c = cache(10);
    await keep(c, 'c1', 1, { client: 'AAA' });
    await keep(c, 'c2', 2, { client: 'bbb' });
    await keep(c, 'u1', 3, { user: 'uuu' });
    c.forget({ kind: 'client', id: 'aaa' });
    expect([c.get('c1'), c.get('c2'), c.get('u1')]).toEqual([undefined, 2, 3]);
    c.forget({ kind: 'user', id: 'uuu' });
    expect([c.get('c2'), c.get('u1')]).toEqual([2, undefined]);
    c.forget({ kind: 'all' });
    expect(c.size).toBe(0);
  });

  it('does not keep a read that overlapped a change, nor a missing row, nor anything when off', async () => {
    const c = cache(10);
    let release!: (v: number) => void;
    const pending = c.through(
      'a',
      () => ({ client: 'x' }),
      () => new Promise<number>((r) => (release = r)),
      () => true,
    );
    c.forget({ kind: 'client', id: 'other' });
    release(1);
    expect(await pending).toBe(1);
    expect(c.get('a')).toBeUndefined();

    await c.through(
      'b',
      () => ({}),
      () => Promise.resolve(undefined),
      (v) => v !== undefined,
    );
    expect(c.size).toBe(0);

    const off = new StateCache({ max: 10, ttlMs: 0 });
    await keep(off, 'a', 1);
    expect(off.size).toBe(0);
  });

  it('drops by tag through its index, without touching other entries; evicted entries leave the index', async () => {
    const c = cache(3);
    await keep(c, 'c1', 1, { client: 'A' });
    await keep(c, 'a1', 2, { client: 'a' });
    await keep(c, 'g1', 3, { client: 'a', user: 'u' });
    expect(c.indexed('client:a')).toBe(3);
    expect(c.indexed('user:u')).toBe(1);
    c.forget({ kind: 'user', id: 'U' });
    expect(c.indexed('client:a')).toBe(2);
    expect(c.indexed('user:u')).toBe(0);
    await keep(c, 'x', 4, { user: 'v' });
    await keep(c, 'y', 5, { user: 'w' });
    // c1 was the least recently used: evicted, and gone from the index
    expect(c.get('c1')).toBeUndefined();
    expect(c.indexed('client:a')).toBe(1);
    c.delete('a1');
    expect(c.indexed('client:a')).toBe(0);
    expect(c.size).toBe(2);
  });

  it('a change between snapshot and store keeps the stale read out, whatever its tag', async () => {
    const c = cache(10);
    const before = c.snapshot();
    c.forget({ kind: 'user', id: 'someone-else' });
    c.store('k', 1, { client: 'x' }, before);
    expect(c.get('k')).toBeUndefined();
    c.store('k', 1, { client: 'x' }, c.snapshot());
    expect(c.get('k')).toBe(1);
  });

  it('untrusted: answers nothing, stores nothing, drops what it held; trusted again it fills anew', async () => {
    let trusted = true;
    const c = new StateCache({ max: 10, ttlMs: 1000, now: () => now, trusted: () => trusted });
    await keep(c, 'a', 1, { client: 'x' });
    expect(c.get('a')).toBe(1);
    trusted = false;
    expect(c.get('a')).toBeUndefined();
    expect(c.size).toBe(0);
    expect(c.indexed('client:x')).toBe(0);
    let reads = 0;
    const read = () =>
      c.through(
        'a',
        () => ({}),
        () => Promise.resolve(++reads),
        () => true,
      );
    expect(await read()).toBe(1);
    expect(await read()).toBe(2);
    expect(c.size).toBe(0);
    trusted = true;
    expect(await read()).toBe(3);
    expect(await read()).toBe(3);
  });
});
