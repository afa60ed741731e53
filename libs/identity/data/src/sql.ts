/** Anything that runs SQL: a TypeORM DataSource, an EntityManager (inside a transaction) or a QueryRunner. */
export interface Queryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query(sql: string, parameters?: any[]): Promise<any>;
}

/**
 * Rows of a statement. TypeORM's postgres driver answers UPDATE/DELETE ... RETURNING with `[rows, rowCount]` and
 * everything else with the rows; this hides the difference.
 */
export async function rows<T>(db: Queryable, sql: string, parameters: unknown[] = []): Promise<T[]> {
  const result: unknown = await db.query(sql, parameters);
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a syntactically valid UUID (any version): look-ups by a malformed id answer "not found", never a SQL error. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}
