import type { DataSource } from 'typeorm';

/** The one thing the adapters and the token server's data reads need from PostgreSQL: a parameterized query. */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Run `fn` in one transaction on one connection (commit when it resolves, roll back when it throws). */
  transaction?<T>(fn: (q: Sql) => Promise<T>): Promise<T>;
}

interface PgClientLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  release(err?: Error | boolean): void;
}

export interface PgPoolLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PgClientLike>;
}

/** `Sql` over a node-postgres pool. */
export function sqlFromPool(pool: PgPoolLike): Sql {
  return {
    query: async <T>(text: string, params?: unknown[]) => (await pool.query(text, params)).rows as T[],
    transaction: async <T>(fn: (q: Sql) => Promise<T>): Promise<T> => {
      const client = await pool.connect();
      const q: Sql = { query: async <R>(t: string, p?: unknown[]) => (await client.query(t, p)).rows as R[] };
      try {
        await client.query('BEGIN');
        const out = await fn(q);
        await client.query('COMMIT');
        client.release();
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release(true);
        throw err;
      }
    },
  };
}

/**
 * A query function on the DataSource's own pg pool. The hot paths (every token request reads the client and the
 * resource, every opaque token is an adapter read) skip TypeORM's query-runner bookkeeping; the pool, its size and
 * its connections are still the ones TypeORM owns and closes.
 */
export function sqlFromDataSource(ds: DataSource): Sql {
  const pool = (ds.driver as unknown as { master?: PgPoolLike }).master;
  if (pool && typeof pool.query === 'function' && typeof pool.connect === 'function')
    return sqlFromPool(pool);
  return {
    query: <T>(text: string, params?: unknown[]) => ds.query(text, params) as Promise<T[]>,
    transaction: <T>(fn: (q: Sql) => Promise<T>) =>
      ds.transaction((em) => fn({ query: <R>(t: string, p?: unknown[]) => em.query(t, p) as Promise<R[]> })),
  };
}
