/**
 * The one presentation step of the JSON APIs (identity's two versions, tree's one): services return records,
 * controllers shape them for the caller's presentation, cut them to `fields` and wrap pages in the envelope.
 */
import { pickFields, toEnvelope } from './envelope.js';
import { parseReadQuery, type ReadQuery } from './list-query.js';
import type { ApiVersion, RecordSpec } from './record-spec.js';

/**
 * Shapes a canonical record for one presentation (renaming and reshaping keys); `expand` false adds the `links`
 * of the children that are not embedded.
 */
export type Shape<T> = (record: T, expand: boolean) => Record<string, unknown>;

/** The shape of a presentation whose records are already in its form (tree): the record itself. */
export const asIs = <T extends object>(record: T) => record as Record<string, unknown>;

/** A page of records as a service returns it: the rows, whether more follow, the total when asked, the query. */
export interface RecordPage<T> {
  rows: T[];
  hasMore: boolean;
  total?: number;
  list: { offset: number; limit: number; fields?: string[]; expand: boolean };
}

/** The requested `fields` (canonical names) under the version's names; undefined when all are wanted. */
function presentedFields(spec: RecordSpec, version: ApiVersion, read: ReadQuery): string[] | undefined {
  return read.fields?.map((f) => spec.present(f, version));
}

/**
 * One record for the caller: shaped for the version, then cut to the requested `fields` (canonical names, turned
 * into the version's names).
 */
export function present<T>(
  record: T,
  shape: Shape<T>,
  spec: RecordSpec,
  version: ApiVersion,
  read: ReadQuery,
): Record<string, unknown> {
  return pickFields(shape(record, read.expand), presentedFields(spec, version, read));
}

/** The collection envelope of the version around shaped records. */
export function presentPage<T>(page: RecordPage<T>, shape: Shape<T>, spec: RecordSpec, version: ApiVersion) {
  // The field names once for the page, not once per row.
  const fields = presentedFields(spec, version, page.list);
  const expand = page.list.expand;
  const items = page.rows.map((r) => pickFields(shape(r, expand), fields));
  return toEnvelope(
    items,
    { offset: page.list.offset, limit: page.list.limit, hasMore: page.hasMore, total: page.total },
    version,
  );
}

/**
 * Copies `record`, applying `rules` key by key: a function returns the new `[key, value]` (or undefined to drop
 * the key), `null` drops it; keys without a rule are copied. Key order is kept.
 */
export function mapKeys<T extends object>(
  record: T,
  rules: Record<string, ((value: never, record: T) => [string, unknown] | undefined) | null>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const source = record as Record<string, unknown>;
  // for...in over an own-properties-only record: no [key, value] pair allocated per key (a hot path of lists)
  for (const key in source) {
    const value = source[key];
    if (value === undefined) continue;
    const rule = rules[key];
    if (rule === null) continue;
    if (rule === undefined) {
      out[key] = value;
      continue;
    }
    const mapped = rule(value as never, record);
    if (mapped) out[mapped[0]] = mapped[1];
  }
  return out;
}

/** `links: { child: path }` for the children that are not embedded. */
export function linksOf(base: string, children: readonly string[]): Record<string, string> {
  return Object.fromEntries(children.map((c) => [c, `${base}/${c}`]));
}

/** What a service needs to run a list operation: the record spec and raw query of the caller's presentation. */
export interface ListRequest {
  spec: RecordSpec;
  query: Record<string, unknown> | undefined;
  version: ApiVersion;
}

/**
 * The presentation of one record type in one version, used by controllers: parses the query parameters by the
 * version's names (bad ones are 400 before anything is written) and shapes the records and pages services return.
 */
export class Presenter<T> {
  constructor(
    readonly version: ApiVersion,
    readonly spec: RecordSpec,
    private readonly shape: Shape<T>,
  ) {}

  /** `fields` and `expand` of a single-record operation. */
  read(query: Record<string, unknown> | undefined): ReadQuery {
    return parseReadQuery(query, this.spec, this.version);
  }

  list(query: Record<string, unknown> | undefined): ListRequest {
    // The service parses it (with the parameter offset of its own SQL) before running any query.
    return { spec: this.spec, query, version: this.version };
  }

  one(record: T, read: ReadQuery): Record<string, unknown> {
    return present(record, this.shape, this.spec, this.version, read);
  }

  page(page: RecordPage<T>) {
    return presentPage(page, this.shape, this.spec, this.version);
  }
}
