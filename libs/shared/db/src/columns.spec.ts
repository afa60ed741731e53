import { column, Table, type FullRowOf, type RowOf } from './columns.js';
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
