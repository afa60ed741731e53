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
  type RunMigrationsOptions,
} from './migrations.js';
export { assertDatabaseName, ensureDatabase, quoteIdentifier } from './admin.js';
export { checkConnection } from './health.js';
export { PreparedStatements, type PreparedOptions } from './prepared.js';
