/**
 * Parsing of the common query parameters of docs/contract.md: lists take `fields`, `expand`, `q`, `sort`,
 * `offset`, `limit`, `total_count` (v2: `totalCount`); single-record reads, creates and updates take
 * `fields` and `expand`. Every bad value is a 400 `invalid_request` naming the parameter. A parameter
 * given twice (an array or object from the query-string parser) is a 400 too. Parameters not listed
 * here are ignored: they may belong to the operation (see LIST_QUERY_PARAMS / READ_QUERY_PARAMS).
 */
import { invalidRequest } from '@gatehouse/errors';
import { type WhereClause, compileWhere } from './compile.js';
import { show } from './q-error.js';
import type { ApiVersion, AttributeSpec, RecordSpec } from './record-spec.js';

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

export interface SortItem {
  attr: AttributeSpec;
  dir: 'ASC' | 'DESC';
}

export interface ReadQuery {
  /** Canonical (v1) names of the requested fields, in request order; undefined when not given. */
  fields?: string[];
  expand: boolean;
}

export interface ListQuery extends ReadQuery {
  sort: SortItem[];
  offset: number;
  limit: number;
  totalCount: boolean;
  where?: WhereClause;
}

export interface ListQueryOptions {
  /** Parameters the caller's SQL already uses before the where clause (see compileWhere). */
  paramOffset?: number;
}

/** Names of the query parameters of list operations, per presentation. */
export const LIST_QUERY_PARAMS: Readonly<Record<ApiVersion, readonly string[]>> = {
  v1: ['fields', 'expand', 'q', 'sort', 'offset', 'limit', 'total_count'],
  v2: ['fields', 'expand', 'q', 'sort', 'offset', 'limit', 'totalCount'],
};

/** Names of the query parameters of single-record operations. */
export const READ_QUERY_PARAMS: readonly string[] = ['fields', 'expand'];

function bad(param: string, message: string) {
  return invalidRequest(`Query parameter ${param}: ${message}`, [{ field: param, message }]);
}

function single(query: Record<string, unknown> | undefined, param: string): string | undefined {
  const value = query?.[param];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw bad(param, 'must be given once, as a plain value');
  return value;
}

function parseFields(raw: string | undefined, spec: RecordSpec, version: ApiVersion): string[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const out: string[] = [];
  for (const part of raw.split(',')) {
    const name = part.trim();
    if (name === '') throw bad('fields', 'empty name in the list');
    const canonical = spec.field(name, version);
    if (canonical === undefined) throw bad('fields', `unknown field '${show(name)}'`);
    const attr = spec.attribute(canonical, 'v1');
    if (attr && !attr.select) throw bad('fields', `field '${show(name)}' cannot be selected`);
    if (!out.includes(canonical)) out.push(canonical);
  }
  return out;
}

function parseExpand(raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  if (raw === 'all') return true;
  throw bad('expand', `must be 'all' or empty, got '${show(raw)}'`);
}

function parseSort(raw: string | undefined, spec: RecordSpec, version: ApiVersion): SortItem[] {
  const items: SortItem[] = [];
  if (raw !== undefined && raw.trim() !== '') {
    for (const part of raw.split(',')) {
      const [rawName, rawDir, ...rest] = part.trim().split(':');
      const name = rawName.trim();
      if (name === '') throw bad('sort', 'empty name in the list');
      const dir = rawDir === undefined ? 'asc' : rawDir.trim().toLowerCase();
      if (rest.length > 0 || (dir !== 'asc' && dir !== 'desc')) {
        throw bad('sort', `'${show(part.trim())}' must be <attribute>, <attribute>:asc or <attribute>:desc`);
      }
      const attr = spec.attribute(name, version);
      if (!attr) throw bad('sort', `unknown attribute '${show(name)}'`);
      if (!attr.sort) throw bad('sort', `cannot sort by '${show(name)}'`);
      if (items.some((i) => i.attr.name === attr.name)) throw bad('sort', `'${show(name)}' is given twice`);
      items.push({ attr, dir: dir === 'asc' ? 'ASC' : 'DESC' });
    }
  }
  const id = spec.idAttribute;
  if (id && !items.some((i) => i.attr.name === id.name)) items.push({ attr: id, dir: 'ASC' });
  return items;
}

function parseOffset(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw bad('offset', `must be an integer >= 0, got '${show(raw)}'`);
  return n;
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  if (!/^\d+$/.test(raw) || /^0+$/.test(raw))
    throw bad('limit', `must be an integer >= 1, got '${show(raw)}'`);
  const digits = raw.replace(/^0+/, '');
  return digits.length > 3 ? MAX_LIMIT : Math.min(Number(digits), MAX_LIMIT);
}

function parseBoolean(param: string, raw: string | undefined): boolean {
  if (raw === undefined) return false;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw bad(param, `must be true or false, got '${show(raw)}'`);
}

/** Parses `fields` and `expand` of a single-record operation. */
export function parseReadQuery(
  query: Record<string, unknown> | undefined,
  spec: RecordSpec,
  version: ApiVersion,
): ReadQuery {
  const fields = parseFields(single(query, 'fields'), spec, version);
  const expand = parseExpand(single(query, 'expand'));
  return fields === undefined ? { expand } : { fields, expand };
}

/** Parses the query parameters of a list operation; `where` is absent when `q` is empty. */
export function parseListQuery(
  query: Record<string, unknown> | undefined,
  spec: RecordSpec,
  version: ApiVersion,
  opts: ListQueryOptions = {},
): ListQuery {
  const read = parseReadQuery(query, spec, version);
  const totalParam = version === 'v2' ? 'totalCount' : 'total_count';
  const q = single(query, 'q');
  const result: ListQuery = {
    ...read,
    sort: parseSort(single(query, 'sort'), spec, version),
    offset: parseOffset(single(query, 'offset')),
    limit: parseLimit(single(query, 'limit')),
    totalCount: parseBoolean(totalParam, single(query, totalParam)),
  };
  if (q !== undefined && q !== '') {
    const where = compileWhere(q, spec, { version, paramOffset: opts.paramOffset });
    if (where.params.length > 0 || where.sql !== 'TRUE') result.where = where;
  }
  return result;
}

const SIMPLE_COLUMN_RE = /^[A-Za-z0-9_."]+$/;

/** `ORDER BY <column> ASC, ...` built only from spec expressions (`sortColumn`, else `column`); '' for no sort. */
export function orderByClause(sort: readonly SortItem[]): string {
  if (sort.length === 0) return '';
  const items = sort.map(({ attr, dir }) => {
    const expr = attr.sortColumn ?? attr.column;
    const column = SIMPLE_COLUMN_RE.test(expr) ? expr : `(${expr})`;
    return `${column} ${dir === 'DESC' ? 'DESC' : 'ASC'}`;
  });
  return `ORDER BY ${items.join(', ')}`;
}

/**
 * `LIMIT <n> OFFSET <m>`. With `plusOne` the limit is one more than the page size, for the
 * fetch-limit+1 pattern of `hasMoreFrom` / `takePage`.
 */
export function limitOffsetClause(
  page: { limit: number; offset: number },
  opts: { plusOne?: boolean } = {},
): string {
  const { limit, offset } = page;
  if (!Number.isSafeInteger(limit) || limit < 1 || !Number.isSafeInteger(offset) || offset < 0) {
    throw new TypeError('limitOffsetClause: limit must be an integer >= 1 and offset an integer >= 0');
  }
  return `LIMIT ${opts.plusOne ? limit + 1 : limit} OFFSET ${offset}`;
}
