import {
  DataSource,
  type DataSourceOptions,
  type EntitySchema,
  type LoggerOptions,
  type MixedList,
} from 'typeorm';

export interface CreateDataSourceOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  // TypeORM's own list types: entity classes and migration classes (or EntitySchema objects).
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function>;
  /** Table recording executed migrations (default `typeorm_migrations`). */
  migrationsTableName?: string;
  /** Shown in pg_stat_activity (e.g. `gatehouse-identity`). */
  applicationName?: string;
  /** Connection pool size (default 10). */
  poolMax?: number;
  /** TypeORM query logging (default off). */
  logging?: LoggerOptions;
  /** Milliseconds to wait for a new connection before failing (default 10 000). */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL `statement_timeout` of every pooled connection, in ms (0 or unset: none). A statement running longer
   * is cancelled (SQLSTATE 57014); a transaction doing known bulk work raises it with `SET LOCAL`.
   */
  statementTimeoutMs?: number;
}

export const DEFAULT_MIGRATIONS_TABLE = 'typeorm_migrations';

/**
 * TypeORM options for PostgreSQL, fixed the Gatehouse way: the schema only ever changes through migration files
 * (`synchronize: false`), migrations run explicitly (`runMigrations`), uuids come from pgcrypto's `gen_random_uuid()`.
 * For migrations and schema checks (`createDataSource`); at run time services query through `Db` (sql.ts).
 */
export function buildDataSourceOptions(o: CreateDataSourceOptions): DataSourceOptions {
  if (!/^postgres(ql)?:\/\//.test(o.url)) {
    throw new Error('database url must start with postgres:// or postgresql://');
  }
  if (o.poolMax !== undefined && (!Number.isInteger(o.poolMax) || o.poolMax < 1)) {
    throw new Error(`poolMax must be a positive integer, got ${o.poolMax}`);
  }
  return {
    type: 'postgres',
    url: o.url,
    entities: o.entities,
    migrations: o.migrations,
    migrationsTableName: o.migrationsTableName ?? DEFAULT_MIGRATIONS_TABLE,
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    dropSchema: false,
    uuidExtension: 'pgcrypto',
    applicationName: o.applicationName,
    poolSize: o.poolMax ?? 10,
    connectTimeoutMS: o.connectTimeoutMs ?? 10_000,
    logging: o.logging ?? false,
    ...(o.statementTimeoutMs ? { extra: { statement_timeout: o.statementTimeoutMs } } : {}),
  };
}

/** A TypeORM DataSource for PostgreSQL (not yet initialized: call `initialize()`). */
export function createDataSource(o: CreateDataSourceOptions): DataSource {
  return new DataSource(buildDataSourceOptions(o));
}
