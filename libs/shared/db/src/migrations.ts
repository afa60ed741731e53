import { MigrationExecutor, type DataSource, type QueryRunner } from 'typeorm';
import { createDataSource, type CreateDataSourceOptions } from './data-source.js';

export interface RunMigrationsOptions {
  /** `each` (default): one transaction per migration; `all`: one transaction for the whole batch. */
  transaction?: 'each' | 'all';
}

/** Advisory-lock key shared by every process migrating the same database and migrations table. */
function lockName(ds: DataSource): string {
  return `gatehouse:migrations:${ds.options.migrationsTableName ?? 'migrations'}`;
}

async function withMigrationLock<T>(ds: DataSource, fn: (qr: QueryRunner) => Promise<T>): Promise<T> {
  const qr = ds.createQueryRunner('master');
  await qr.connect();
  try {
    // Migrations (and waiting for another process's) may take longer than the pool's statement_timeout.
    await qr.query('SET statement_timeout = 0');
    // Session-level lock: held across the migrations' own COMMITs, released below or when the session ends.
    await qr.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockName(ds)]);
    try {
      return await fn(qr);
    } finally {
      await qr.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockName(ds)]);
    }
  } finally {
    await qr.query('RESET statement_timeout').catch(() => undefined);
    await qr.release();
  }
}

/**
 * Runs the pending migrations of an initialized DataSource and returns their names, in order.
 * Two processes starting at once (two replicas, or `auth` and `identity` on one database) are serialized by a
 * PostgreSQL advisory lock: the second waits, then finds nothing pending. Uses a single connection.
 */
export async function runMigrations(ds: DataSource, opts: RunMigrationsOptions = {}): Promise<string[]> {
  const mode = opts.transaction ?? 'each';
  if (mode !== 'each' && mode !== 'all')
    throw new Error(`transaction must be 'each' or 'all', got ${String(mode)}`);
  return withMigrationLock(ds, async (qr) => {
    const executor = new MigrationExecutor(ds, qr);
    executor.transaction = mode;
    const done = await executor.executePendingMigrations();
    return done.map((m) => m.name);
  });
}

/** Names of the migrations not yet run on this database. */
export async function pendingMigrations(ds: DataSource): Promise<string[]> {
  const qr = ds.createQueryRunner('master');
  try {
    const pending = await new MigrationExecutor(ds, qr).getPendingMigrations();
    return pending.map((m) => m.name);
  } finally {
    await qr.release();
  }
}

/**
 * The SQL TypeORM's schema builder would still run to make the database match the entities; empty when the
 * migrations that ran describe the entities exactly. Each app's drift test asserts this is `[]`.
 */
export async function pendingSchemaChanges(ds: DataSource): Promise<string[]> {
  const log = await ds.driver.createSchemaBuilder().log();
  return log.upQueries.map((q) => q.query);
}

/** Open `options.url`, run its pending migrations, close. For `nx run <app>:migrate` and test templates. */
export async function migrateDatabase(
  options: CreateDataSourceOptions,
  opts: RunMigrationsOptions = {},
): Promise<string[]> {
  const ds = createDataSource({ ...options, poolMax: options.poolMax ?? 2 });
  await ds.initialize();
  try {
    return await runMigrations(ds, opts);
  } finally {
    await ds.destroy();
  }
}

/** `pendingSchemaChanges` of a database, on a connection of its own (the drift tests of the apps). */
export async function schemaDrift(options: CreateDataSourceOptions): Promise<string[]> {
  const ds = createDataSource({ ...options, poolMax: 1 });
  await ds.initialize();
  try {
    return await pendingSchemaChanges(ds);
  } finally {
    await ds.destroy();
  }
}
