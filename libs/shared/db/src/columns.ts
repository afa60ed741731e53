import type { AttrType, AttributeSpec } from '@gatehouse/query';
import { iso, type Timestamp } from './params.js';
import { ScopedTable, type TableDef } from './scope.js';

/**
 * A table's columns declared once: the row type (RowOf), the select list (`select`), the scoping (a ScopedTable)
 * and the list spec's attributes (`attributes`) all derive from one declaration, so a new column is one line in
 * its table module (and one in the record that presents it).
 */

/** One column: its TypeScript type `T` (declared, never at run time), its API type and how it is read. */
export class Column<T, Hidden extends boolean = false> {
  declare readonly valueType: T;
  declare readonly isHidden: Hidden;

  constructor(
    /** Its type as an attribute of a list spec. */
    readonly type: AttrType,
    /** Read as ISO 8601 text (`iso()`), so rows carry Timestamps, not Dates. */
    readonly timestamp = false,
    /** Not in `select` nor RowOf: read only where asked for (a secret's ciphertext). */
    readonly hidden: Hidden = false as Hidden,
    /** Not an attribute of the API's record (the list spec leaves it out). */
    readonly internal = false,
  ) {}

  /** The same column, NULL allowed. */
  nullable(): Column<T | null, Hidden> {
    return new Column<T | null, Hidden>(this.type, this.timestamp, this.hidden, this.internal);
  }

  /** The same column, left out of `select` and RowOf (and so of the list spec). */
  hiddenColumn(): Column<T, true> {
    return new Column<T, true>(this.type, this.timestamp, true, this.internal);
  }

  /** The same column, read but not an attribute of the API's record. */
  internalColumn(): Column<T, Hidden> {
    return new Column<T, Hidden>(this.type, this.timestamp, this.hidden, true);
  }
}

/** The column kinds. */
export const column = {
  uuid: () => new Column<string>('uuid'),
  text: () => new Column<string>('string'),
  boolean: () => new Column<boolean>('boolean'),
  integer: () => new Column<number>('integer'),
  /** A timestamptz, read as ISO 8601 text in UTC. */
  timestamp: () => new Column<Timestamp>('datetime', true),
  json: <T>() => new Column<T>('json'),
};

export type Columns = Record<string, Column<unknown, boolean>>;

/** A row as `select` reads it: every column that is not hidden. */
export type RowOf<C extends Columns> = {
  -readonly [K in keyof C as C[K]['isHidden'] extends true ? never : K]: C[K]['valueType'];
};

/** A row with the hidden columns too (each read where a statement asks for it). */
export type FullRowOf<C extends Columns> = { -readonly [K in keyof C]: C[K]['valueType'] };

/** A scoped table with its columns. */
export class Table<C extends Columns> extends ScopedTable {
  readonly columns: C;
  /** The select list of RowOf (alias `alias`; timestamps as ISO text). */
  readonly select: string;

  constructor(def: TableDef & { columns: C }) {
    super(def);
    this.columns = def.columns;
    this.select = Object.entries(def.columns)
      .filter(([, c]) => !c.hidden)
      .map(([name, c]) => {
        const ref = `${this.alias}.${name}`;
        return c.timestamp ? `${iso(ref)} AS ${name}` : ref;
      })
      .join(', ');
  }

  /**
   * The list spec's attributes of the record: every column neither hidden nor internal, as `alias.name` with its
   * type, plus what `extra` says of a column (a sort expression, a presentation of its own...).
   */
  attributes<A extends AttributeSpec = AttributeSpec>(extra: { [K in keyof C]?: Partial<A> } = {}): A[] {
    return Object.entries(this.columns)
      .filter(([, c]) => !c.hidden && !c.internal)
      .map(
        ([name, c]) =>
          ({ name, column: `${this.alias}.${name}`, type: c.type, ...extra[name as keyof C] }) as A,
      );
  }
}
