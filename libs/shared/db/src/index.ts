// The data layer (docs/architecture.md "Data layer"): one way to run SQL (Db/Sql), parameters, conflicts, lists
// and tenant/instance scoping. TypeORM (data-source, migrations) only describes the schema and migrates it.
export {
  Db,
  type AnyRow,
  type DbOptions,
  type OpenTransaction,
  type Sql,
  type TextRow,
  type TransactionOptions,
  type TransactionSettings,
} from './sql.js';
export { isConnectionError } from './connection-errors.js';
export {
  findPgError,
  isDatabaseUnavailable,
  keyColumns,
  mapPgError,
  translatePgError,
  type PgErrorLike,
} from './pg-errors.js';
export { Params, isUuid, iso, type Timestamp } from './params.js';
export { Audited } from './audited.js';
export { uniqueConflict, withConflicts } from './conflicts.js';
export { listPage, listSql, countedPageSql, type ListPlan, type ListPage, type ListSql } from './list.js';
export { ScopedTable, inScope, type RecordScope, type TableDef } from './scope.js';
export { Column, column, Table, type Columns, type FullRowOf, type RecordOf, type RowOf } from './columns.js';
export {
  buildDataSourceOptions,
  createDataSource,
  DEFAULT_MIGRATIONS_TABLE,
  type CreateDataSourceOptions,
} from './data-source.js';
export {
  migrateDatabase,
  pendingMigrations,
  pendingSchemaChanges,
  runMigrations,
  schemaDrift,
  type RunMigrationsOptions,
} from './migrations.js';
export { assertDatabaseName, ensureDatabase, quoteIdentifier } from './admin.js';
export { PreparedStatements, type PreparedOptions } from './prepared.js';
