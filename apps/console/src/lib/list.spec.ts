import { listQuery, nextSort, pageRange, searchClause } from './list';

describe('list queries', () => {
  it('searches every field, a quote escaped', () => {
    expect(searchClause(['client_name', 'client_description'], " o'k ")).toBe(
      "client_name ilike '%o''k%' or client_description ilike '%o''k%'",
    );
    expect(searchClause(['a'], '  ')).toBeUndefined();
  });

  it('makes the list parameters, id always among the fields', () => {
    expect(
      listQuery(
        {
          search: 'x',
          sort: { field: 'client_name', dir: 'desc' },
          offset: 20,
          limit: 10,
          fields: ['client_name'],
        },
        ['client_name'],
      ),
    ).toEqual({
      q: "client_name ilike '%x%'",
      sort: 'client_name:desc',
      offset: 20,
      limit: 10,
      total_count: true,
      fields: 'id,client_name',
    });
    expect(listQuery({ search: '', offset: 0, limit: 10, fields: [] }, ['a'])).toEqual({
      offset: 0,
      limit: 10,
      total_count: true,
    });
  });

  it('cycles a column: ascending, descending, none', () => {
    expect(nextSort(undefined, 'a')).toEqual({ field: 'a', dir: 'asc' });
    expect(nextSort({ field: 'a', dir: 'asc' }, 'a')).toEqual({ field: 'a', dir: 'desc' });
    expect(nextSort({ field: 'a', dir: 'desc' }, 'a')).toBeUndefined();
    expect(nextSort({ field: 'a', dir: 'desc' }, 'b')).toEqual({ field: 'b', dir: 'asc' });
  });

  it('numbers a page', () => {
    expect(pageRange(20, 10, 95)).toEqual({ from: 21, to: 30, total: 95 });
    expect(pageRange(0, 0, 0)).toEqual({ from: 0, to: 0, total: 0 });
  });
});
