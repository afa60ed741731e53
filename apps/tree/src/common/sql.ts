import type { DataSource, QueryRunner } from 'typeorm';
import { conflict, DomainError } from '@gatehouse/errors';
import { findPgError } from '@gatehouse/http';

/** Raw SQL on one connection: `rows` always returns the rows (also for UPDATE/DELETE ... RETURNING). */
export class Sql {
  constructor(readonly runner: QueryRunner) {}

  async rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const result = await this.runner.query(sql, params, true);
    return (result.records ?? []) as T[];
  }

  async one<T>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    return (await this.rows<T>(sql, params))[0];
  }

  /** Number of rows a statement touched. */
  async exec(sql: string, params: unknown[] = []): Promise<number> {
    const result = await this.runner.query(sql, params, true);
    return result.affected ?? 0;
  }
}

/** Runs `fn` on one pooled connection, outside a transaction (each statement its own snapshot). */
export async function withSql<T>(ds: DataSource, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const runner = ds.createQueryRunner();
  try {
    await runner.connect();
    return await fn(new Sql(runner));
  } finally {
    await runner.release();
  }
}

/**
 * statement_timeout for the rest of the current transaction, for bulk work whose size is bounded otherwise (a
 * version clone, a CSV import of at most TREE_IMPORT_MAX_ROWS lines): 1.1 M nodes take tens of seconds, longer than
 * the pool's DB_STATEMENT_TIMEOUT_MS.
 */
export const BULK_STATEMENT_TIMEOUT = '10min';

export async function allowBulkStatements(sql: Sql): Promise<void> {
  await sql.exec(`SET LOCAL statement_timeout = '${BULK_STATEMENT_TIMEOUT}'`);
}

/** Runs `fn` in one READ COMMITTED transaction; commits when it resolves, rolls back when it throws. */
export async function inTransaction<T>(ds: DataSource, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const runner = ds.createQueryRunner();
  try {
    await runner.connect();
    await runner.startTransaction();
    try {
      const result = await fn(new Sql(runner));
      await runner.commitTransaction();
      return result;
    } catch (err) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw err;
    }
  } finally {
    await runner.release();
  }
}

/**
 * Turns a unique violation of one of the named constraints into a 409 with a message of ours; any other error is
 * returned unchanged (the HTTP filter maps it).
 */
export function uniqueConflict(err: unknown, messages: Record<string, string>): unknown {
  if (err instanceof DomainError) return err;
  const pg = findPgError(err);
  const constraint = pg?.constraint?.replace(PARTITION_UNIQUE, 'uq_tree_nodes_$1');
  if (pg?.code === '23505' && constraint && messages[constraint]) return conflict(messages[constraint]);
  return err;
}

/**
 * A unique violation in a partition of tree_nodes names the partition's constraint (`tree_nodes_<version>_code_key`,
 * migration 1790000300000); uniqueConflict reports it as the parent's (`uq_tree_nodes_code`).
 */
const PARTITION_UNIQUE = /^tree_nodes_[0-9a-f]{32}_(code|path)_key$/;

/** Builds `$n` placeholders in order. */
export class Params {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  get length(): number {
    return this.values.length;
  }
}
