import {
  limitOffsetClause,
  parseListQuery,
  takePage,
  type ListQuery,
  type RecordSpec,
} from '@gatehouse/query';
import { PreparedStatements } from '@gatehouse/db';
import { rows, type Queryable } from '@gatehouse/identity-data';
import { DataSource } from 'typeorm';
import { sortExpression } from './records.js';

export interface ListPlan {
  spec: RecordSpec;
  query: Record<string, unknown> | undefined;
  version: 'v1' | 'v2';
  /** Select list of the page query. */
  select: (list: ListQuery) => string;
  /** FROM clause (tables and joins), shared by the page and the count query. */
  from: string;
  /** Fixed conditions over `params` ($1..$n), e.g. the instance and the caller's tenant. */
  conditions: string[];
  params: unknown[];
  /** Appended after the requested sort so the order is total (e.g. when the spec's `id` can be null). */
  tieBreak?: string;
}

export interface ListPage<Row> {
  list: ListQuery;
  rows: Row[];
  hasMore: boolean;
  /** Only when the request asked for the total count. */
  total?: number;
}

const SIMPLE_COLUMN = /^[A-Za-z0-9_."]+$/;

/** `ORDER BY` built from spec expressions only (an attribute's sortColumn, else its column). */
function orderBy(sort: ListQuery['sort']): string {
  if (!sort.length) return '';
  return `ORDER BY ${sort
    .map(({ attr, dir }) => {
      const expr = sortExpression(attr);
      return `${SIMPLE_COLUMN.test(expr) ? expr : `(${expr})`} ${dir === 'DESC' ? 'DESC' : 'ASC'}`;
    })
    .join(', ')}`;
}

/** The statements of one list request: the page (one row more than asked, for `has_more`) and the count. */
export interface ListSql {
  list: ListQuery;
  pageSql: string;
  /** Runs only when the total count was asked for. */
  countSql: string;
  params: unknown[];
}

/**
 * Parsed list queries by spec, remembered for their query string: the same list asked again (a dashboard polling,
 * many callers paging alike) skips parsing `fields`/`sort`/paging and compiling `q`. The result is only read.
 * A query that fails to parse is not remembered (it throws its 400 each time).
 */
const parsedLists = new WeakMap<RecordSpec, Map<string, ListQuery>>();
const PARSED_LISTS_MAX = 500;

function parsedList(plan: ListPlan): ListQuery {
  const offset = plan.params.length;
  const key = `${plan.version} ${offset} ${JSON.stringify(plan.query ?? {})}`;
  let byQuery = parsedLists.get(plan.spec);
  const known = byQuery?.get(key);
  if (known) return known;
  const list = parseListQuery(plan.query, plan.spec, plan.version, { paramOffset: offset });
  if (!byQuery) parsedLists.set(plan.spec, (byQuery = new Map()));
  if (byQuery.size >= PARSED_LISTS_MAX) byQuery.delete(byQuery.keys().next().value as string);
  byQuery.set(key, list);
  return list;
}

/**
 * Builds the statements of a list operation: `q` compiled to parameters after the plan's own, `sort` (ties broken
 * by id), `offset`/`limit`. Bad parameters throw a 400 before anything runs.
 */
export function listSql(plan: ListPlan): ListSql {
  const list = parsedList(plan);
  const conditions = [...plan.conditions];
  const params = [...plan.params];
  if (list.where) {
    conditions.push(list.where.sql);
    params.push(...list.where.params);
  }
  const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
  const order = [orderBy(list.sort), plan.tieBreak].filter(Boolean).join(', ');
  return {
    list,
    pageSql: `SELECT ${plan.select(list)} FROM ${plan.from} ${where} ${order} ${limitOffsetClause(list, { plusOne: true })}`,
    countSql: `SELECT count(*) AS __total FROM ${plan.from} ${where}`,
    params,
  };
}

/** Page and count in one statement: two CTEs, each planned on its own; an empty page still carries the total. */
export function countedPageSql(pageSql: string, countSql: string): string {
  return `WITH page AS (SELECT p.*, row_number() OVER () AS __ord FROM (${pageSql}) p),
            total AS (${countSql})
       SELECT page.*, total.__total FROM total LEFT JOIN page ON true ORDER BY page.__ord`;
}

/** List statements run as named prepared statements outside transactions (see PreparedStatements). */
const prepared = new PreparedStatements();
const read = <T>(db: Queryable, sql: string, params: unknown[]): Promise<T[]> =>
  db instanceof DataSource ? prepared.rows<T>(db, sql, params) : rows<T>(db, sql, params);

/**
 * One page of a list operation and, when asked, the total count of matching rows. With the count, page and count
 * travel as one statement (two CTEs, each planned on its own: the page reads `limit + 1` rows through the sort's
 * index, the count an index-only scan where one fits): one round trip and one connection instead of two.
 */
export async function listPage<Row>(db: Queryable, plan: ListPlan): Promise<ListPage<Row>> {
  const { list, pageSql, countSql, params } = listSql(plan);
  let fetched: Row[];
  let total: number | undefined;
  if (list.totalCount) {
    const joined = await read<Row & { __total: string; __ord: string | null }>(
      db,
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
    fetched = await read<Row>(db, pageSql, params);
  }
  const page = takePage(fetched, list.limit);
  return { list, rows: page.items, hasMore: page.hasMore, ...(total !== undefined ? { total } : {}) };
}

/** True when the field is wanted: no `fields` given, or named in it. */
export const wants = (fields: readonly string[] | undefined, name: string) =>
  fields === undefined || fields.includes(name);
