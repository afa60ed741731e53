import {
  limitOffsetClause,
  orderByClause,
  parseListQuery,
  takePage,
  type ListQuery,
  type RecordSpec,
} from '@gatehouse/query';
import { rows, type Queryable } from '@gatehouse/identity-data';

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

/**
 * One page of a list operation: `q` compiled to parameters after the plan's own, `sort` (ties broken by id),
 * `offset`/`limit` (fetching one more row for `has_more`) and, when asked, the total count of matching rows, which
 * runs beside the page query.
 */
export async function listPage<Row>(db: Queryable, plan: ListPlan): Promise<ListPage<Row>> {
  const list = parseListQuery(plan.query, plan.spec, plan.version, { paramOffset: plan.params.length });
  const conditions = [...plan.conditions];
  const params = [...plan.params];
  if (list.where) {
    conditions.push(list.where.sql);
    params.push(...list.where.params);
  }
  const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
  const order = [orderByClause(list.sort), plan.tieBreak].filter(Boolean).join(', ');
  const pageSql = `SELECT ${plan.select(list)} FROM ${plan.from} ${where} ${order} ${limitOffsetClause(list, { plusOne: true })}`;
  const [fetched, counted] = await Promise.all([
    rows<Row>(db, pageSql, params),
    list.totalCount
      ? rows<{ n: string }>(db, `SELECT count(*) AS n FROM ${plan.from} ${where}`, params)
      : Promise.resolve(undefined),
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
