import { hasMoreFrom, pickFields, takePage, toEnvelope } from './envelope.js';

describe('toEnvelope', () => {
  const items = [{ id: 'a' }, { id: 'b' }];

  it('builds the v1 envelope without total_count unless asked', () => {
    const env = toEnvelope(items, { offset: 20, limit: 2, hasMore: true }, 'v1');
    expect(env).toStrictEqual({ count: 2, has_more: true, limit: 2, offset: 20, items });
    expect(Object.keys(env)).toEqual(['count', 'has_more', 'limit', 'offset', 'items']);
    expect(JSON.parse(JSON.stringify(env))).not.toHaveProperty('total_count');
  });

  it('builds the v1 envelope with total_count first when asked, including a total of 0', () => {
    const env = toEnvelope([], { offset: 0, limit: 10, total: 0, hasMore: false }, 'v1');
    expect(env).toStrictEqual({ total_count: 0, count: 0, has_more: false, limit: 10, offset: 0, items: [] });
    expect(Object.keys(env)[0]).toBe('total_count');
  });

  it('builds the v2 envelope in camelCase', () => {
    expect(toEnvelope(items, { offset: 0, limit: 10, hasMore: false }, 'v2')).toStrictEqual({
      count: 2,
      hasMore: false,
      limit: 10,
      offset: 0,
      items,
    });
    expect(toEnvelope(items, { offset: 0, limit: 10, total: 57, hasMore: true }, 'v2')).toStrictEqual({
      totalCount: 57,
      count: 2,
      hasMore: true,
      limit: 10,
      offset: 0,
      items,
    });
  });
});

describe('fetch-limit+1 helpers', () => {
  it('hasMoreFrom compares the rows fetched with the page size', () => {
    expect(hasMoreFrom(11, 10)).toBe(true);
    expect(hasMoreFrom(10, 10)).toBe(false);
    expect(hasMoreFrom([1, 2, 3], 2)).toBe(true);
    expect(hasMoreFrom([], 1)).toBe(false);
  });

  it('takePage trims the extra row', () => {
    expect(takePage([1, 2, 3], 2)).toEqual({ items: [1, 2], hasMore: true });
    expect(takePage([1, 2], 2)).toEqual({ items: [1, 2], hasMore: false });
  });
});

describe('pickFields', () => {
  const record = { id: '1', client_name: 'n', client_type: 'spa', links: { resources: '/x' } };

  it('keeps only the requested top-level fields, in record order', () => {
    expect(pickFields(record, ['client_type', 'id'])).toStrictEqual({ id: '1', client_type: 'spa' });
    expect(pickFields(record, ['links'])).toStrictEqual({ links: { resources: '/x' } });
    expect(pickFields(record, [])).toStrictEqual({});
  });

  it('returns the record unchanged without fields', () => {
    expect(pickFields(record)).toBe(record);
  });
});
