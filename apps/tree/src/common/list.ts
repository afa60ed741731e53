import {
  limitOffsetClause,
  orderByClause,
  parseListQuery,
  takePage,
  type ListQuery,
  type RecordSpec,
} from '@gatehouse/query';
import { Params, type Sql } from './sql.js';

export interface ListSqlParts<Row> {
  spec: RecordSpec;
  query: Record<string, unknown>;
  /** Builds the select list and joins once the filter parameters are known (translations add a parameter). */
  select: (p: Params) => { columns: string; from: string };
  /** FROM of the count query (no joins needed: filters use base columns only). */
  countFrom: string;
  /** Fixed conditions, given the parameter builder. */
  conditions: (p: Params) => string[];
  /** ORDER BY when the caller did not ask for a sort. */
  defaultOrder: string;
  /** Total without filters, when the caller knows it cheaply. */
  knownTotal?: () => Promise<number>;
  map?: (row: Row) => Row;
}

export interface ListResult<Row> {
  rows: Row[];
  list: ListQuery;
  hasMore: boolean;
  total?: number;
}

/** One page of a list operation: `q` compiled to parameters, `sort`, `offset`/`limit` (+1 for has_more), total. */
export async function listRows<Row>(sql: Sql, parts: ListSqlParts<Row>): Promise<ListResult<Row>> {
  const p = new Params();
  const conditions = parts.conditions(p);
  const list = parseListQuery(parts.query, parts.spec, 'v1', { paramOffset: p.length });
  if (list.where) {
    p.values.push(...list.where.params);
    conditions.push(list.where.sql);
  }
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const countParams = [...p.values];
  const { columns, from } = parts.select(p);
  const sorted = typeof parts.query.sort === 'string' && parts.query.sort.trim() !== '';
  const order = sorted ? orderByClause(list.sort) : parts.defaultOrder;
  const rows = await sql.rows<Row>(
    `SELECT ${columns} FROM ${from} ${where} ${order} ${limitOffsetClause(list, { plusOne: true })}`,
    p.values,
  );
  const page = takePage(rows, list.limit);
  let total: number | undefined;
  if (list.totalCount) {
    if (!list.where && parts.knownTotal) total = await parts.knownTotal();
    else
      total = (await sql.one<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${parts.countFrom} ${where}`,
        countParams,
      ))!.n;
  }
  return { rows: page.items, list, hasMore: page.hasMore, total };
}
