import { TaggedCache } from './tagged-cache.js';

describe('TaggedCache', () => {
  let now = 0;
  const cache = (max = 3, touch = false) => new TaggedCache<string>({ max, touch, now: () => now });

  it('serves an entry until it expires, then drops it', () => {
    now = 0;
    const c = cache();
    c.set('a', 'A', 100, ['client:x']);
    expect(c.get('a')).toBe('A');
    now = 100;
    expect(c.get('a')).toBeUndefined();
    expect(c.size).toBe(0);
    expect(c.indexed('client:x')).toBe(0);
  });

  it('drops by tag, by change, by predicate, by key and everything', () => {
    now = 0;
    const c = cache(10);
    c.set('a', 'A', 1000, ['client:x', 'user:u']);
    c.set('b', 'B', 1000, ['client:x']);
    c.set('c', 'C', 1000, ['user:v']);
    c.set('d', 'D', 1000);
    expect(c.invalidate('client:x')).toBe(2);
    expect(c.indexed('user:u')).toBe(0);
    expect(c.get('c')).toBe('C');
    c.forget({ kind: 'user', id: 'V' });
    expect(c.get('c')).toBeUndefined();
    expect(c.forgetWhere((v) => v === 'D')).toBe(1);
    c.set('e', 'E', 1000, ['client:y']);
    expect(c.delete('e')).toBe(true);
    expect(c.indexed('client:y')).toBe(0);
    c.set('f', 'F', 1000, ['client:y']);
    c.forget({ kind: 'all' });
    expect(c.size).toBe(0);
    expect(c.indexed('client:y')).toBe(0);
  });

  it('past max: the first stored goes first, or the least recently used with touch', () => {
    now = 0;
    const fifo = cache(2);
    fifo.set('a', 'A', 1000);
    fifo.set('b', 'B', 1000);
    fifo.get('a');
    fifo.set('c', 'C', 1000);
    expect([fifo.get('a'), fifo.get('b'), fifo.get('c')]).toEqual([undefined, 'B', 'C']);
    const lru = cache(2, true);
    lru.set('a', 'A', 1000);
    lru.set('b', 'B', 1000);
    lru.get('a');
    lru.set('c', 'C', 1000);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual(['A', undefined, 'C']);
  });
});
