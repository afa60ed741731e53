import {
  limitOffsetClause,
  orderByClause,
  parseListQuery,
  takePage,
  type ApiVersion,
  type ListQuery,
  type RecordSpec,
} from '@gatehouse/query';
import { Params } from './params.js';
import type { Sql } from './sql.js';

/**
 * The one implementation of a list operation's statements (identity and tree lists alike): `q` compiled to
 * parameters after the plan's own, `sort` (ties broken by `tieBreak`), `offset`/`limit` (one row more, for
 * `has_more`), and, when asked, the total count. Bad parameters throw a 400 before anything runs.
 */
export interface ListPlan {
  spec: RecordSpec;
  query: Record<string, unknown> | undefined;
  /** Presentation whose parameter names and casing `query` uses (default v1). */
  version?: ApiVersion;
  /** Fixed parameters ($1..$n): those `conditions` (and `from`) refer to, e.g. added by `ScopedTable.conditions`. */
  params: Params | readonly unknown[];
  /** Fixed conditions over `params`, e.g. the instance and the caller's tenant. */
  conditions: string[];
  /**
   * Select list of the page; may add parameters (after the filter's). It may return the FROM clause too, when both
   * come from one parameter (a translation join).
   */
  select: (list: ListQuery, p: Params) => string | { columns: string; from: string };
  /** FROM clause of the page (tables and joins), unless `select` gives it. */
  from?: string;
  /** FROM clause of the count when the page's joins are not needed for it (filters use base columns only). */
  countFrom?: string;
  /** ORDER BY used when the request asked for no sort (default: the spec's default sort, if any). */
  defaultOrder?: string;
  /** Appended after the sort so the order is total (e.g. `c.id`). */
  tieBreak?: string;
  /**
   * The count stops at this many rows (the total is then "at least this many"): a table too big to count in a
   * request's time (the audit trail) still answers a total, bounded in cost.
   */
  countLimit?: number;
  /** The total without filters, when the caller knows it cheaply (no count statement then). */
  knownTotal?: () => Promise<number>;
}

export interface ListPage<Row> {
  list: ListQuery;
  rows: Row[];
  hasMore: boolean;
  /** Only when the request asked for the total count. */
  total?: number;
}

/**
 * Parsed list queries by spec, remembered for their query string: the same list asked again (a dashboard polling,
 * many callers paging alike) skips parsing `fields`/`sort`/paging and compiling `q`. The result is only read.
 * A query that fails to parse is not remembered (it throws its 400 each time).
 */
const parsedLists = new WeakMap<RecordSpec, Map<string, ListQuery>>();
const PARSED_LISTS_MAX = 500;

const fixedParams = (plan: ListPlan): readonly unknown[] =>
  plan.params instanceof Params ? plan.params.values : plan.params;

function parsedList(plan: ListPlan, version: ApiVersion): ListQuery {
  const offset = fixedParams(plan).length;
  const key = `${version} ${offset} ${JSON.stringify(plan.query ?? {})}`;
  let byQuery = parsedLists.get(plan.spec);
  const known = byQuery?.get(key);
  if (known) return known;
  const list = parseListQuery(plan.query, plan.spec, version, { paramOffset: offset });
  if (!byQuery) parsedLists.set(plan.spec, (byQuery = new Map()));
  if (byQuery.size >= PARSED_LISTS_MAX) byQuery.delete(byQuery.keys().next().value as string);
  byQuery.set(key, list);
  return list;
}

/** The statements of one list request: the page and the count (which runs only when the total was asked for). */
export interface ListSql {
  list: ListQuery;
  pageSql: string;
  countSql: string;
  params: unknown[];
}

export function listSql(plan: ListPlan): ListSql {
  const version = plan.version ?? 'v1';
  const list = parsedList(plan, version);
  const p = new Params(fixedParams(plan));
  const conditions = [...plan.conditions];
  if (list.where) {
    conditions.push(list.where.sql);
    p.values.push(...list.where.params);
  }
  const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
  const selected = plan.select(list, p);
  const select = typeof selected === 'string' ? selected : selected.columns;
  const from = typeof selected === 'string' ? plan.from : selected.from;
  if (from === undefined) throw new TypeError(`list of ${plan.spec.name}: no FROM clause`);
  const sorted = typeof plan.query?.sort === 'string' && plan.query.sort.trim() !== '';
  const order = !sorted && plan.defaultOrder !== undefined ? plan.defaultOrder : orderByClause(list.sort);
  const fullOrder = plan.tieBreak
    ? order
      ? `${order}, ${plan.tieBreak}`
      : `ORDER BY ${plan.tieBreak}`
    : order;
  return {
    list,
    pageSql: `SELECT ${select} FROM ${from} ${where} ${fullOrder} ${limitOffsetClause(list, { plusOne: true })}`,
    countSql:
      plan.countLimit !== undefined
        ? `SELECT count(*) AS __total FROM (SELECT 1 FROM ${plan.countFrom ?? from} ${where} LIMIT ${countLimitOf(plan.countLimit)}) capped`
        : `SELECT count(*) AS __total FROM ${plan.countFrom ?? from} ${where}`,
    params: p.values,
  };
}

function countLimitOf(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new TypeError('countLimit must be an integer >= 1');
  return n;
}

/** Page and count in one statement: two CTEs, each planned on its own; an empty page still carries the total. */
export function countedPageSql(pageSql: string, countSql: string): string {
  return `WITH page AS (SELECT p.*, row_number() OVER () AS __ord FROM (${pageSql}) p),
            total AS (${countSql})
       SELECT page.*, total.__total FROM total LEFT JOIN page ON true ORDER BY page.__ord`;
}

/**
 * One page of a list operation and, when asked, the total count of matching rows. With the count, page and count
 * travel as one statement (two CTEs: the page reads `limit + 1` rows through the sort's index, the count an
 * index-only scan where one fits): one round trip and one connection instead of two.
 */
export async function listPage<Row>(sql: Sql, plan: ListPlan): Promise<ListPage<Row>> {
  const { list, pageSql, countSql, params } = listSql(plan);
  let fetched: Row[];
  let total: number | undefined;
  if (list.totalCount && !(plan.knownTotal && !list.where)) {
    const joined = await sql.read<Row & { __total: string; __ord: string | null }>(
      countedPageSql(pageSql, countSql),
      params,
    );
    total = Number(joined[0]?.__total ?? 0);
    fetched = [];
    for (const r of joined) {
      if (r.__ord === null) continue; // the count's row when the page is empty
      const row = r as Partial<typeof r>;
      delete row.__total;
      delete row.__ord;
      fetched.push(row as Row);
    }
  } else {
    fetched = await sql.read<Row>(pageSql, params);
    if (list.totalCount && plan.knownTotal) total = await plan.knownTotal();
  }
  const page = takePage(fetched, list.limit);
  return { list, rows: page.items, hasMore: page.hasMore, ...(total !== undefined ? { total } : {}) };
}
