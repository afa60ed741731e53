import { column, Table, type FullRowOf, type RecordOf, type RowOf } from './columns.js';
import { iso, Params } from './params.js';

const items = new Table({
  name: 'items',
  alias: 'x',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    label: column.text().nullable(),
    data: column.json<{ a: number }>(),
    is_default: column.boolean().internalColumn(),
    created_at: column.timestamp(),
    secret_enc: column.text().nullable().hiddenColumn(),
  },
});

describe('Table: columns declared once', () => {
  it('selects every column but the hidden ones, timestamps as ISO text', () => {
    expect(items.select).toBe(`x.id, x.label, x.data, x.is_default, ${iso('x.created_at')} AS created_at`);
  });

  it('gives the list spec every column that is an attribute, with what the record adds', () => {
    expect(items.attributes({ label: { sortColumn: 'lower(x.label)' } })).toEqual([
      { name: 'id', column: 'x.id', type: 'uuid' },
      { name: 'label', column: 'x.label', type: 'string', sortColumn: 'lower(x.label)' },
      { name: 'data', column: 'x.data', type: 'json' },
      { name: 'created_at', column: 'x.created_at', type: 'datetime' },
    ]);
  });

  it('is a ScopedTable', () => {
    const p = new Params();
    expect(items.from).toBe('items x');
    expect(items.where({ instanceId: 'i', restricted: true, tenantId: 't' }, p)).toBe(
      'x.instance_id = $1 AND x.tenant_id = $2',
    );
  });

  it('types its rows', () => {
    const row: RowOf<typeof items.columns> = {
      id: 'a',
      label: null,
      data: { a: 1 },
      is_default: false,
      created_at: '2020-01-01T00:00:00.000Z',
    };
    const full: FullRowOf<typeof items.columns> = { ...row, secret_enc: null };
    // @ts-expect-error the hidden column is not in RowOf
    expect(row.secret_enc).toBeUndefined();
    expect(full.secret_enc).toBeNull();
  });
});

const named = new Table({
  name: 'named',
  alias: 'n',
  tenantScoped: false,
  columns: {
    id: column.uuid(),
    label: column.text().from('name'),
    has_parts: column.boolean().computed('EXISTS (SELECT 1 FROM parts p WHERE p.named_id = n.id)'),
    updated_at: column.timestamp(),
  },
});

describe('Table: columns read from another column or computed', () => {
  it('selects them under their own names', () => {
    expect(named.select).toBe(
      `n.id, n.name AS label, EXISTS (SELECT 1 FROM parts p WHERE p.named_id = n.id) AS has_parts, ${iso('n.updated_at')} AS updated_at`,
    );
  });

  it('gives the list spec the column a renamed attribute reads; a computed column is internal', () => {
    expect(named.attributes().map((a) => [a.name, a.column])).toEqual([
      ['id', 'n.id'],
      ['label', 'n.name'],
      ['updated_at', 'n.updated_at'],
    ]);
  });

  it('selects a part of a row under another alias', () => {
    expect(named.selectOf(['label', 'updated_at'], 'm')).toBe(
      `m.name AS label, ${iso('m.updated_at')} AS updated_at`,
    );
    expect(items.selectOf(['id', 'secret_enc'])).toBe('x.id, x.secret_enc');
  });
});

describe('Table: the record of a row', () => {
  const row: RowOf<typeof items.columns> = {
    created_at: '2020-01-01T00:00:00.000Z',
    id: 'a',
    is_default: true,
    label: 'l',
    data: { a: 1 },
  };

  it('copies the columns neither hidden nor internal, in declaration order', () => {
    const rec: RecordOf<typeof items.columns> = items.record(row);
    expect(Object.keys(rec)).toEqual(['id', 'label', 'data', 'created_at']);
    expect(rec).toEqual({ id: 'a', label: 'l', data: { a: 1 }, created_at: '2020-01-01T00:00:00.000Z' });
    // @ts-expect-error an internal column is not in the record
    expect(rec.is_default).toBeUndefined();
  });

  it('puts the fields it is given after a column', () => {
    expect(Object.keys(items.record(row, 'label', { secret: 's', more: 1 }))).toEqual([
      'id',
      'label',
      'secret',
      'more',
      'data',
      'created_at',
    ]);
    expect(Object.keys(items.record(row, 'label', undefined))).toEqual(['id', 'label', 'data', 'created_at']);
  });

  it('gives the list spec the attributes a record adds after a column', () => {
    expect(
      items.attributes({}, { id: [{ name: 'extra', column: 'x.extra', type: 'string' }] }).map((a) => a.name),
    ).toEqual(['id', 'extra', 'label', 'data', 'created_at']);
  });
});
