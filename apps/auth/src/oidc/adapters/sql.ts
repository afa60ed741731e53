import type { DataSource } from 'typeorm';

/** The one thing the adapters and the token server's data reads need from PostgreSQL: a parameterized query. */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

interface PgPoolLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A query function on the DataSource's own pg pool. The hot paths (every token request reads the client and the
 * resource, every opaque token is an adapter read) skip TypeORM's query-runner bookkeeping; the pool, its size and
 * its connections are still the ones TypeORM owns and closes.
 */
export function sqlFromDataSource(ds: DataSource): Sql {
  const pool = (ds.driver as unknown as { master?: PgPoolLike }).master;
  if (pool && typeof pool.query === 'function') {
    return {
      query: async <T>(text: string, params?: unknown[]) => (await pool.query(text, params)).rows as T[],
    };
  }
  return { query: <T>(text: string, params?: unknown[]) => ds.query(text, params) as Promise<T[]> };
}
