import { DomainError, ErrorCode } from '@gatehouse/errors';
import { clients } from '../test/fixtures.js';
import {
  DEFAULT_LIMIT,
  LIST_QUERY_PARAMS,
  MAX_LIMIT,
  READ_QUERY_PARAMS,
  limitOffsetClause,
  orderByClause,
  parseListQuery,
  parseReadQuery,
} from './list-query.js';
import { defineRecord } from './record-spec.js';

const list = (query: Record<string, unknown>, version: 'v1' | 'v2' = 'v1') =>
  parseListQuery(query, clients, version);

function rejection(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe(ErrorCode.InvalidRequest);
    return e as DomainError;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}

const sortNames = (q: ReturnType<typeof list>) => q.sort.map((s) => `${s.attr.name}:${s.dir}`);

describe('parseListQuery', () => {
  it('applies the defaults of docs/contract.md', () => {
    const q = list({});
    expect(q).toEqual({ expand: false, sort: [expect.anything()], offset: 0, limit: 10, totalCount: false });
    expect(sortNames(q)).toEqual(['id:ASC']);
    expect(q.fields).toBeUndefined();
    expect(q.where).toBeUndefined();
    expect(DEFAULT_LIMIT).toBe(10);
    expect(parseListQuery(undefined, clients, 'v1').limit).toBe(10);
  });

  it('ignores unknown parameters and exports the known names', () => {
    expect(list({ tenant_id: 'x', foo: ['a', 'b'] }).limit).toBe(10);
    expect(LIST_QUERY_PARAMS.v1).toEqual(['fields', 'expand', 'q', 'sort', 'offset', 'limit', 'total_count']);
    expect(LIST_QUERY_PARAMS.v2).toContain('totalCount');
    expect(READ_QUERY_PARAMS).toEqual(['fields', 'expand']);
  });

  describe('fields', () => {
    it('returns canonical names in request order, deduplicated', () => {
      expect(list({ fields: 'id,client_name' }).fields).toEqual(['id', 'client_name']);
      expect(list({ fields: ' client_name , id,client_name ' }).fields).toEqual(['client_name', 'id']);
      expect(list({ fields: 'id,resources,aggregations,links' }).fields).toEqual([
        'id',
        'resources',
        'aggregations',
        'links',
      ]);
      expect(list({ fields: '' }).fields).toBeUndefined();
    });

    it('accepts v2 names under v2 and maps them to canonical names', () => {
      expect(list({ fields: 'clientName,aggregates,client_type' }, 'v2').fields).toEqual([
        'client_name',
        'aggregations',
        'client_type',
      ]);
      expect(rejection(() => list({ fields: 'clientName' }, 'v1')).message).toBe(
        "Query parameter fields: unknown field 'clientName'",
      );
      expect(rejection(() => list({ fields: 'aggregates' }, 'v1')).message).toMatch(
        /unknown field 'aggregates'/,
      );
    });

    it('rejects unknown, unselectable and empty names, naming them', () => {
      const e = rejection(() => list({ fields: 'id,colour' }));
      expect(e.message).toBe("Query parameter fields: unknown field 'colour'");
      expect(e.details).toEqual([{ field: 'fields', message: "unknown field 'colour'" }]);
      expect(rejection(() => list({ fields: 'client_secret' })).message).toMatch(/cannot be selected/);
      expect(rejection(() => list({ fields: 'id,,client_name' })).message).toMatch(/empty name/);
      expect(rejection(() => list({ fields: 'metadata.tags' })).message).toMatch(
        /unknown field 'metadata.tags'/,
      );
    });
  });

  describe('expand', () => {
    it("is true only for 'all', false when absent or empty, 400 otherwise", () => {
      expect(list({ expand: 'all' }).expand).toBe(true);
      expect(list({ expand: '' }).expand).toBe(false);
      for (const bad of ['ALL', 'resources', 'true', ' all']) {
        expect(rejection(() => list({ expand: bad })).message).toMatch(
          /^Query parameter expand: must be 'all' or empty/,
        );
      }
    });
  });

  describe('sort', () => {
    it('parses attributes with optional directions and breaks ties by id', () => {
      expect(sortNames(list({ sort: 'client_name:asc,created_at:desc' }))).toEqual([
        'client_name:ASC',
        'created_at:DESC',
        'id:ASC',
      ]);
      expect(sortNames(list({ sort: 'logins' }))).toEqual(['logins:ASC', 'id:ASC']);
      expect(sortNames(list({ sort: 'logins:DESC, id:desc' }))).toEqual(['logins:DESC', 'id:DESC']);
      expect(sortNames(list({ sort: 'createdAt:desc' }, 'v2'))).toEqual(['created_at:DESC', 'id:ASC']);
    });

    it('rejects unknown, unsortable, repeated and malformed items', () => {
      expect(rejection(() => list({ sort: 'colour' })).message).toBe(
        "Query parameter sort: unknown attribute 'colour'",
      );
      expect(rejection(() => list({ sort: 'metadata' })).message).toBe(
        "Query parameter sort: cannot sort by 'metadata'",
      );
      expect(rejection(() => list({ sort: 'client_secret' })).message).toMatch(/cannot sort by/);
      expect(rejection(() => list({ sort: 'logins,logins:desc' })).message).toMatch(
        /'logins' is given twice/,
      );
      expect(rejection(() => list({ sort: 'logins:up' })).message).toMatch(
        /must be <attribute>, <attribute>:asc/,
      );
      expect(rejection(() => list({ sort: 'logins:asc:desc' })).message).toMatch(/must be <attribute>/);
      expect(rejection(() => list({ sort: 'logins,' })).message).toMatch(/empty name/);
      expect(rejection(() => list({ sort: 'createdAt' }, 'v1')).message).toMatch(
        /unknown attribute 'createdAt'/,
      );
    });

    it('builds ORDER BY only from spec columns', () => {
      expect(orderByClause(list({ sort: 'name_lower:desc,client_description' }).sort)).toBe(
        'ORDER BY (lower(c.client_name)) DESC, "c"."client_description" ASC, c.id ASC',
      );
      expect(orderByClause([])).toBe('');
    });

    it('adds no tie-breaker when the record has no id', () => {
      const links = defineRecord({
        name: 'link',
        attributes: [{ name: 'role_id', column: 'l.role_id', type: 'uuid' }],
      });
      expect(parseListQuery({}, links, 'v1').sort).toEqual([]);
      expect(parseListQuery({ sort: 'role_id' }, links, 'v1').sort.map((s) => s.attr.name)).toEqual([
        'role_id',
      ]);
    });
  });

  describe('offset and limit', () => {
    it('parses valid values and serves limits above 100 as 100', () => {
      expect(list({ offset: '0', limit: '1' })).toMatchObject({ offset: 0, limit: 1 });
      expect(list({ offset: '25', limit: '100' })).toMatchObject({ offset: 25, limit: 100 });
      expect(list({ limit: '101' }).limit).toBe(MAX_LIMIT);
      expect(list({ limit: '99999999999999999999999999' }).limit).toBe(100);
      expect(list({ limit: '007' }).limit).toBe(7);
      expect(list({ offset: '9007199254740991' }).offset).toBe(Number.MAX_SAFE_INTEGER);
    });

    it.each(['-1', '1.5', 'abc', '', ' 1', '+1', '1e3', '9007199254740992', '0x10'])(
      'offset=%j is a 400',
      (v) => {
        expect(rejection(() => list({ offset: v })).message).toMatch(
          /^Query parameter offset: must be an integer >= 0/,
        );
      },
    );

    it.each(['0', '000', '-1', '1.5', 'abc', '', 'ten', '2 '])('limit=%j is a 400', (v) => {
      expect(rejection(() => list({ limit: v })).message).toMatch(
        /^Query parameter limit: must be an integer >= 1/,
      );
    });
  });

  describe('total count', () => {
    it('reads total_count under v1 and totalCount under v2', () => {
      expect(list({ total_count: 'true' }).totalCount).toBe(true);
      expect(list({ total_count: 'false' }).totalCount).toBe(false);
      expect(list({ totalCount: 'true' }, 'v2').totalCount).toBe(true);
      // The other presentation's name is an unknown parameter, ignored like any other.
      expect(list({ totalCount: 'true' }, 'v1').totalCount).toBe(false);
      expect(list({ total_count: 'true' }, 'v2').totalCount).toBe(false);
    });

    it('rejects anything but true or false', () => {
      for (const v of ['1', 'yes', 'TRUE', '']) {
        expect(rejection(() => list({ total_count: v })).message).toMatch(
          /^Query parameter total_count: must be true or false/,
        );
      }
      expect(rejection(() => list({ totalCount: 'no' }, 'v2')).message).toMatch(
        /^Query parameter totalCount:/,
      );
    });
  });

  describe('q', () => {
    it('compiles q with the presentation and the caller parameter offset', () => {
      expect(parseListQuery({ q: "clientName = 'a'" }, clients, 'v2', { paramOffset: 2 }).where).toEqual({
        sql: 'c.client_name = $3',
        params: ['a'],
      });
      expect(list({ q: '' }).where).toBeUndefined();
      expect(list({ q: '   ' }).where).toBeUndefined();
    });

    it('passes q errors through as 400', () => {
      expect(rejection(() => list({ q: 'colour = 1' })).message).toMatch(/unknown attribute 'colour'/);
      expect(rejection(() => list({ q: ' '.repeat(2001) })).message).toBe(
        'Invalid q: longer than 2000 characters',
      );
    });
  });

  it('rejects repeated or structured parameters', () => {
    for (const param of ['fields', 'expand', 'q', 'sort', 'offset', 'limit', 'total_count']) {
      const e = rejection(() => list({ [param]: ['1', '2'] }));
      expect(e.message).toBe(`Query parameter ${param}: must be given once, as a plain value`);
      expect(rejection(() => list({ [param]: { a: '1' } })).details?.[0].field).toBe(param);
    }
  });
});

describe('parseReadQuery', () => {
  it('parses fields and expand only', () => {
    expect(parseReadQuery({ fields: 'id', expand: 'all', limit: 'nonsense', q: '(' }, clients, 'v1')).toEqual(
      {
        fields: ['id'],
        expand: true,
      },
    );
    expect(parseReadQuery({}, clients, 'v2')).toEqual({ expand: false });
    expect(rejection(() => parseReadQuery({ expand: 'x' }, clients, 'v1')).message).toMatch(/expand/);
    expect(rejection(() => parseReadQuery({ fields: ['id', 'id'] }, clients, 'v1')).message).toMatch(
      /given once/,
    );
  });
});

describe('limitOffsetClause', () => {
  it('renders validated integers, optionally one more for has_more', () => {
    expect(limitOffsetClause({ limit: 10, offset: 0 })).toBe('LIMIT 10 OFFSET 0');
    expect(limitOffsetClause({ limit: 10, offset: 30 }, { plusOne: true })).toBe('LIMIT 11 OFFSET 30');
    expect(() => limitOffsetClause({ limit: 0, offset: 0 })).toThrow(TypeError);
    expect(() => limitOffsetClause({ limit: 1, offset: -1 })).toThrow(TypeError);
    expect(() => limitOffsetClause({ limit: 1.5, offset: 0 })).toThrow(TypeError);
  });
});
