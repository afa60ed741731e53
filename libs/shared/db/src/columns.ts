import type { AttrType, AttributeSpec } from '@gatehouse/query';
import { iso, type Timestamp } from './params.js';
import { ScopedTable, type TableDef } from './scope.js';

/**
 * A table's columns declared once: the row type (RowOf), the select list (`select`), the scoping (a ScopedTable),
 * the list spec's attributes (`attributes`) and the record's copy of the row (`record`) all derive from one
 * declaration, so a new read-only column is one line in its table module.
 */

/** How a column is read (the run-time half of a Column). */
interface ColumnOptions {
  /** Read as ISO 8601 text (`iso()`), so rows carry Timestamps, not Dates. */
  timestamp: boolean;
  /** Not in `select` nor RowOf: read only where asked for (a secret's ciphertext). */
  hidden: boolean;
  /** Not an attribute of the API's record (neither the list spec nor `record` has it). */
  internal: boolean;
  /** The table's column it reads when its name in the row differs (`t.name AS tenant_name`). */
  source?: string;
  /** An SQL expression read instead of a column (aliases written out); `AS` the column's name. */
  expression?: string;
}

/** One column: its TypeScript type `T` (declared, never at run time), its API type and how it is read. */
export class Column<T, Hidden extends boolean = false, Internal extends boolean = false> {
  declare readonly valueType: T;
  declare readonly isHidden: Hidden;
  declare readonly isInternal: Internal;

  constructor(
    /** Its type as an attribute of a list spec. */
    readonly type: AttrType,
    readonly options: Readonly<ColumnOptions> = { timestamp: false, hidden: false, internal: false },
  ) {}

  get timestamp(): boolean {
    return this.options.timestamp;
  }

  get hidden(): boolean {
    return this.options.hidden;
  }

  get internal(): boolean {
    return this.options.internal;
  }

  /** The same column, NULL allowed. */
  nullable(): Column<T | null, Hidden, Internal> {
    return new Column<T | null, Hidden, Internal>(this.type, this.options);
  }

  /** The same column, left out of `select` and RowOf (and so of the list spec and the record). */
  hiddenColumn(): Column<T, true, Internal> {
    return new Column<T, true, Internal>(this.type, { ...this.options, hidden: true });
  }

  /** The same column, read but not an attribute of the API's record. */
  internalColumn(): Column<T, Hidden, true> {
    return new Column<T, Hidden, true>(this.type, { ...this.options, internal: true });
  }

  /** The same column, read from the table's column `name` (the row and the record call it otherwise). */
  from(name: string): Column<T, Hidden, Internal> {
    return new Column<T, Hidden, Internal>(this.type, { ...this.options, source: name });
  }

  /** The same column, computed by `sql` (with its table's alias written out); no list attribute can name it. */
  computed(sql: string): Column<T, Hidden, true> {
    return new Column<T, Hidden, true>(this.type, { ...this.options, expression: sql, internal: true });
  }
}

/** The column kinds. */
export const column = {
  uuid: () => new Column<string>('uuid'),
  text: () => new Column<string>('string'),
  /** A text column holding one of the values of `T`. */
  textOf: <T extends string>() => new Column<T>('string'),
  boolean: () => new Column<boolean>('boolean'),
  integer: () => new Column<number>('integer'),
  /** A timestamptz, read as ISO 8601 text in UTC. */
  timestamp: () => new Column<Timestamp>('datetime', { timestamp: true, hidden: false, internal: false }),
  json: <T>() => new Column<T>('json'),
};

export type Columns = Record<string, Column<unknown, boolean, boolean>>;

/** A row as `select` reads it: every column that is not hidden. */
export type RowOf<C extends Columns> = {
  -readonly [K in keyof C as C[K]['isHidden'] extends true ? never : K]: C[K]['valueType'];
};

/** A row with the hidden columns too (each read where a statement asks for it). */
export type FullRowOf<C extends Columns> = { -readonly [K in keyof C]: C[K]['valueType'] };

/** The record's copy of a row (`table.record`): every column neither hidden nor internal. */
export type RecordOf<C extends Columns> = {
  -readonly [
    K in keyof C as C[K]['isHidden'] extends true ? never : C[K]['isInternal'] extends true ? never : K
  ]: C[K]['valueType'];
};

/** A scoped table with its columns. */
export class Table<C extends Columns> extends ScopedTable {
  readonly columns: C;
  /** The select list of RowOf (alias `alias`; timestamps as ISO text). */
  readonly select: string;
  /** The record's columns (neither hidden nor internal) in declaration order: `record` copies these. */
  readonly recordKeys: readonly string[];

  constructor(def: TableDef & { columns: C }) {
    super(def);
    this.columns = def.columns;
    this.select = this.selectOf(
      Object.keys(def.columns).filter((name) => !def.columns[name].hidden) as (keyof C & string)[],
    );
    this.recordKeys = Object.keys(def.columns).filter(
      (name) => !def.columns[name].hidden && !def.columns[name].internal,
    );
  }

  /** The SQL reading column `name` of the table under alias `alias` (no `AS`). */
  ref(name: keyof C & string, alias = this.alias): string {
    const c = this.columns[name];
    return c.options.expression ?? `${alias}.${c.options.source ?? name}`;
  }

  /**
   * The select list of the columns `names` (any hidden ones too) under alias `alias`, in that order, each under
   * its name in the row (timestamps as ISO text): for a statement that reads a part of a row, or the table under
   * another alias.
   */
  selectOf(names: readonly (keyof C & string)[], alias = this.alias): string {
    return names
      .map((name) => {
        const c = this.columns[name];
        const ref = this.ref(name, alias);
        if (c.timestamp) return `${iso(ref)} AS ${name}`;
        return ref === `${alias}.${name}` ? ref : `${ref} AS ${name}`;
      })
      .join(', ');
  }

  /**
   * The list spec's attributes of the record: every column neither hidden nor internal, as its column (`alias.name`)
   * with its type, plus what `extra` says of a column (a sort expression, another name in the record...), and
   * after a column the attributes `after` gives it (a field the record computes).
   */
  attributes<A extends AttributeSpec = AttributeSpec>(
    extra: { [K in keyof C]?: Partial<A> } = {},
    after: { [K in keyof C]?: A[] } = {},
  ): A[] {
    const out: A[] = [];
    for (const name of this.recordKeys) {
      const c = this.columns[name];
      out.push({ name, column: this.ref(name), type: c.type, ...extra[name as keyof C] } as A);
      const more = after[name as keyof C];
      if (more) out.push(...more);
    }
    return out;
  }

  /**
   * The record's copy of a row: its columns neither hidden nor internal, in declaration order (the order of the
   * answer's keys), with `fields` put right after column `after` (a field the record has between two columns,
   * such as a secret shown once). It runs for every row of every list, so the copy is an object literal compiled
   * once per table (and per `after`) from the declared names: a loop of keyed stores over the same keys measured
   * ten times slower (0.37 against 0.035 µs a row).
   */
  record(row: RowOf<C>): RecordOf<C>;
  record<X extends object>(row: RowOf<C>, after: keyof RecordOf<C>, fields: X | undefined): RecordOf<C> & X;
  record(row: RowOf<C>, after?: PropertyKey, fields?: object): Record<string, unknown> {
    if (!fields) return (this.copyAll ??= compileCopy(this.recordKeys))(row);
    let copy = this.copiesWith.get(after);
    if (!copy) this.copiesWith.set(after, (copy = compileCopy(this.recordKeys, String(after))));
    return copy(row, fields);
  }

  private copyAll?: RowCopy;
  private readonly copiesWith = new Map<PropertyKey | undefined, RowCopy>();
}

type RowCopy = (row: object, fields?: object) => Record<string, unknown>;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `(r, f) => ({ a: r.a, b: r.b, ...f, c: r.c })` for keys a, b, c with `after` b. The names are a table's declared
 * column names (code, never input), checked to be plain identifiers before they become source.
 */
function compileCopy(keys: readonly string[], after?: string): RowCopy {
  const parts: string[] = [];
  for (const key of keys) {
    if (!IDENTIFIER.test(key))
      throw new Error(`column name ${JSON.stringify(key)} is not a plain identifier`);
    parts.push(`${key}: r.${key}`);
    if (key === after) parts.push('...f');
  }
  if (after !== undefined && !keys.includes(after)) throw new Error(`no record column ${after}`);
  return new Function('r', 'f', `return { ${parts.join(', ')} };`) as RowCopy;
}
