import { DomainError } from '@gatehouse/errors';
import { parseListQuery, mapKeys, Presenter } from '@gatehouse/query';
import { defineVersionedRecord } from './records.js';

const specs = defineVersionedRecord({
  name: 'thing',
  attributes: [
    { name: 'id', column: 't.id', type: 'uuid' },
    { name: 'thing_name', column: 't.name', type: 'string' },
    { name: 'old_flag', column: 't.old_flag', type: 'boolean', only: 'v1' },
    { name: 'meta', column: 't.meta', v2Column: 't.meta_v2', type: 'json', opaque: false },
  ],
  children: { v1: ['parts', 'links_of'], v2: ['parts'] },
  extraFields: [{ name: 'aggregations', v2Name: 'aggregates' }, { name: 'links' }],
});

describe('defineVersionedRecord', () => {
  it('keeps record names as written in both presentations and renames only what is told', () => {
    expect(specs.v2.field('thing_name', 'v2')).toBe('thing_name');
    expect(specs.v2.field('thingName', 'v2')).toBeUndefined();
    expect(specs.v2.field('aggregates', 'v2')).toBe('aggregations');
    expect(specs.v2.present('aggregations', 'v2')).toBe('aggregates');
    expect(specs.v1.field('aggregates', 'v1')).toBeUndefined();
  });

  it('leaves out what a presentation does not have, and uses its own column', () => {
    expect(specs.v1.attribute('old_flag', 'v1')).toBeDefined();
    expect(specs.v2.attribute('old_flag', 'v2')).toBeUndefined();
    expect(specs.v2.attribute('meta', 'v2')?.column).toBe('t.meta_v2');
    expect(() => parseListQuery({ q: 'old_flag = true' }, specs.v2, 'v2')).toThrow(DomainError);
    const where = parseListQuery({ q: "meta.kind = 'x'" }, specs.v2, 'v2', { paramOffset: 1 }).where;
    expect(where?.sql).toBe('(t.meta_v2 #>> CAST($2 AS text[])) = $3');
  });

  it('parses the total count parameter by the name of the presentation', () => {
    expect(parseListQuery({ total_count: 'true' }, specs.v1, 'v1').totalCount).toBe(true);
    expect(parseListQuery({ totalCount: 'true' }, specs.v2, 'v2').totalCount).toBe(true);
    expect(parseListQuery({ total_count: 'true' }, specs.v2, 'v2').totalCount).toBe(false);
  });
});

describe('Presenter', () => {
  const shape = (rec: { id: string; thing_name: string; aggregations?: object }, expand: boolean) => ({
    ...mapKeys(rec, { aggregations: (a: object) => ['aggregates', a] }),
    ...(expand ? {} : { links: { parts: `/things/${rec.id}/parts` } }),
  });
  const p = new Presenter('v2', specs.v2, shape);
  const rec = { id: 'a', thing_name: 'A', aggregations: { n: 1 } };

  it('shapes, then keeps the requested fields by their presentation names', () => {
    expect(p.one(rec, p.read({}))).toEqual({
      id: 'a',
      thing_name: 'A',
      aggregates: { n: 1 },
      links: { parts: '/things/a/parts' },
    });
    expect(p.one(rec, p.read({ fields: 'aggregates,id' }))).toEqual({ id: 'a', aggregates: { n: 1 } });
    expect(p.one(rec, p.read({ fields: 'id', expand: 'all' }))).toEqual({ id: 'a' });
  });

  it('wraps pages in the envelope of the presentation', () => {
    const page = {
      rows: [rec],
      hasMore: true,
      total: 7,
      list: { offset: 0, limit: 1, expand: true, sort: [], totalCount: true },
    };
    expect(p.page(page)).toEqual({
      totalCount: 7,
      count: 1,
      hasMore: true,
      limit: 1,
      offset: 0,
      items: [{ id: 'a', thing_name: 'A', aggregates: { n: 1 } }],
    });
  });

  it('rejects bad read parameters with a 400', () => {
    expect(() => p.read({ fields: 'nope' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => p.read({ expand: 'some' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});

describe('mapKeys', () => {
  it('renames, reshapes and drops keys in order; undefined values are left out', () => {
    const out = mapKeys(
      { a: 1, b: 2, c: 3, d: undefined },
      { a: null, b: (v: number) => ['bee', v * 10], c: () => undefined },
    );
    expect(out).toEqual({ bee: 20 });
  });
});
