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
});
