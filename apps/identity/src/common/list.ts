import {
  limitOffsetClause,
  parseListQuery,
  takePage,
  type ListQuery,
  type RecordSpec,
} from '@gatehouse/query';
import { rows, type Queryable } from '@gatehouse/identity-data';
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
 * Builds the statements of a list operation: `q` compiled to parameters after the plan's own, `sort` (ties broken
 * by id), `offset`/`limit`. Bad parameters throw a 400 before anything runs.
 */
export function listSql(plan: ListPlan): ListSql {
  const list = parseListQuery(plan.query, plan.spec, plan.version, { paramOffset: plan.params.length });
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
    countSql: `SELECT count(*) AS n FROM ${plan.from} ${where}`,
    params,
  };
}

/** One page of a list operation and, when asked, the total count of matching rows (run beside the page query). */
export async function listPage<Row>(db: Queryable, plan: ListPlan): Promise<ListPage<Row>> {
  const { list, pageSql, countSql, params } = listSql(plan);
  const [fetched, counted] = await Promise.all([
    rows<Row>(db, pageSql, params),
    list.totalCount ? rows<{ n: string }>(db, countSql, params) : Promise.resolve(undefined),
  ]);
  const page = takePage(fetched, list.limit);
  return {
    list,
    rows: page.items,
    hasMore: page.hasMore,
    ...(counted ? { total: Number(counted[0]?.n ?? 0) } : {}),
  };
}

/** True when the field is wanted: no `fields` given, or named in it. */
export const wants = (fields: readonly string[] | undefined, name: string) =>
  fields === undefined || fields.includes(name);
