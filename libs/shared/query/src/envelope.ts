/**
 * The collection envelope of docs/contract.md and its two presentations:
 * v1 `{ total_count?, count, has_more, limit, offset, items }`,
 * v2 `{ totalCount?, count, hasMore, limit, offset, items }`; the total only when it was asked for.
 */
import type { ApiVersion } from './record-spec.js';

export interface PageInfo {
  offset: number;
  limit: number;
  /** Present only when the request asked for the total count. */
  total?: number;
  hasMore: boolean;
}

export interface EnvelopeV1<T> {
  total_count?: number;
  count: number;
  has_more: boolean;
  limit: number;
  offset: number;
  items: T[];
}

export interface EnvelopeV2<T> {
  totalCount?: number;
  count: number;
  hasMore: boolean;
  limit: number;
  offset: number;
  items: T[];
}

export function toEnvelope<T>(items: T[], page: PageInfo, version: 'v1'): EnvelopeV1<T>;
export function toEnvelope<T>(items: T[], page: PageInfo, version: 'v2'): EnvelopeV2<T>;
export function toEnvelope<T>(items: T[], page: PageInfo, version: ApiVersion): EnvelopeV1<T> | EnvelopeV2<T>;
export function toEnvelope<T>(
  items: T[],
  page: PageInfo,
  version: ApiVersion,
): EnvelopeV1<T> | EnvelopeV2<T> {
  const withTotal = page.total !== undefined;
  if (version === 'v2') {
    return {
      ...(withTotal ? { totalCount: page.total } : {}),
      count: items.length,
      hasMore: page.hasMore,
      limit: page.limit,
      offset: page.offset,
      items,
    };
  }
  return {
    ...(withTotal ? { total_count: page.total } : {}),
    count: items.length,
    has_more: page.hasMore,
    limit: page.limit,
    offset: page.offset,
    items,
  };
}

/** For the fetch-limit+1 pattern: true when more rows came back than the page holds. */
export function hasMoreFrom(rowsFetched: number | readonly unknown[], limit: number): boolean {
  const n = typeof rowsFetched === 'number' ? rowsFetched : rowsFetched.length;
  return n > limit;
}

/** Splits rows fetched with `LIMIT limit + 1` into the page and `hasMore`. */
export function takePage<T>(rows: readonly T[], limit: number): { items: T[]; hasMore: boolean } {
  return { items: rows.slice(0, limit), hasMore: rows.length > limit };
}

/**
 * Keeps only the requested top-level fields (canonical names, as parseListQuery returns them), in the
 * record's own key order. Without `fields` the record is returned unchanged.
 */
export function pickFields<T extends object>(record: T, fields?: readonly string[]): Partial<T> {
  if (fields === undefined) return record;
  const wanted = new Set(fields);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (wanted.has(key)) out[key] = value;
  }
  return out as Partial<T>;
}

/** True when a field is wanted: no `fields` given, or named in it. */
export const wants = (fields: readonly string[] | undefined, name: string): boolean =>
  fields === undefined || fields.includes(name);
