import { pickFields, toEnvelope, type ReadQuery, type RecordSpec } from '@gatehouse/query';
import type { ApiVersion } from './version.js';

/**
 * Shapes a canonical record for one presentation (renaming and reshaping keys); `expand` false adds the `links`
 * of the children that are not embedded.
 */
export type Shape<T> = (record: T, expand: boolean) => Record<string, unknown>;

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
  const shaped = shape(record, read.expand);
  return read.fields
    ? pickFields(
        shaped,
        read.fields.map((f) => spec.present(f, version)),
      )
    : shaped;
}

/** The collection envelope of the version around shaped records. */
export function presentPage<T>(
  page: {
    rows: T[];
    hasMore: boolean;
    total?: number;
    list: { offset: number; limit: number; fields?: string[]; expand: boolean };
  },
  shape: Shape<T>,
  spec: RecordSpec,
  version: ApiVersion,
) {
  const items = page.rows.map((r) => present(r, shape, spec, version, page.list));
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
