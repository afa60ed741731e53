import type pg from 'pg';
import { checkout } from './checkout.js';
import { isConnectionError } from './connection-errors.js';

/**
 * Named prepared statements for the hot read paths (lists, look-ups by id) on a `pg` pool (`Db.read`).
 *
 * PostgreSQL plans every unnamed statement again; for a list statement (a page and a count in two CTEs) planning
 * costs as much as running it. A named statement is parsed once per connection, and after five executions the
 * server may keep a generic plan, which halves the database's CPU time per request (docs/benchmarks.md).
 *
 * Bounds, since statement texts are open-ended (`q`, `sort`, `fields`, `limit`, `offset` shape the text):
 *   - a text is prepared only from its second use in this process (a one-off page at some offset stays unnamed);
 *   - each connection keeps at most `maxPerConnection` statements, least recently used first out (DEALLOCATE).
 * Names are never reused for another text, so a connection can never run a stale statement under a new name.
 * Errors are `pg`'s own DatabaseError (the HTTP error mapping reads those as it reads TypeORM's QueryFailedError).
 */
export interface PreparedOptions {
  /** Statements kept per connection (default 64). */
  maxPerConnection?: number;
  /** Texts remembered as seen once (default 2,000). */
  maxSeen?: number;
}

/** pg keeps the names a connection has parsed; a deallocated name must leave that map too. */
type PgClient = pg.PoolClient & { connection?: { parsedStatements?: Record<string, string> } };

let counter = 0;

export class PreparedStatements {
  private readonly maxPerConnection: number;
  private readonly maxSeen: number;
  /** Texts seen once in this process (insertion order = age). */
  private readonly seen = new Map<string, true>();
  /** Per connection: text -> statement name, in least-recently-used order. */
  private readonly perConnection = new WeakMap<PgClient, Map<string, string>>();

  constructor(opts: PreparedOptions = {}) {
    this.maxPerConnection = opts.maxPerConnection ?? 64;
    this.maxSeen = opts.maxSeen ?? 2000;
  }

  /** Rows of a read statement on the pool, prepared as described above. */
  async rows<T>(pool: pg.Pool, text: string, values: readonly unknown[] = []): Promise<T[]> {
    const { client, release } = await checkout(pool);
    let failed: Error | undefined;
    try {
      return await this.rowsOn<T>(client, text, values);
    } catch (err) {
      // A broken connection is destroyed by the pool; a statement error leaves the connection usable.
      failed = isConnectionError(err) ? (err as Error) : undefined;
      throw err;
    } finally {
      release(failed);
    }
  }

  /**
   * Rows of a read statement on a connection the caller holds (one checked out for several statements, or a
   * transaction's), prepared as described above. Connection errors are the caller's to handle.
   */
  async rowsOn<T>(client: pg.PoolClient, text: string, values: readonly unknown[] = []): Promise<T[]> {
    const name = await this.nameFor(client as PgClient, text);
    const result = await client.query(
      name ? { name, text, values: values as unknown[] } : { text, values: values as unknown[] },
    );
    return result.rows as T[];
  }

  private async nameFor(client: PgClient, text: string): Promise<string | undefined> {
    let statements = this.perConnection.get(client);
    const known = statements?.get(text);
    if (statements && known) {
      statements.delete(text);
      statements.set(text, known);
      return known;
    }
    if (!this.seen.has(text)) {
      this.seen.set(text, true);
      if (this.seen.size > this.maxSeen) this.seen.delete(this.seen.keys().next().value as string);
      return undefined;
    }
    if (!statements) {
      statements = new Map();
      this.perConnection.set(client, statements);
    }
    if (statements.size >= this.maxPerConnection) {
      const [oldText, oldName] = statements.entries().next().value as [string, string];
      statements.delete(oldText);
      await client.query(`DEALLOCATE ${oldName}`);
      if (client.connection?.parsedStatements) delete client.connection.parsedStatements[oldName];
    }
    const name = `gh_${process.pid}_${++counter}`;
    statements.set(text, name);
    return name;
  }
}
