import { createDataSource, Db, migrateDatabase } from '@gatehouse/db';
import { createTestDatabase, type TestDatabase } from '@gatehouse/testing';
import type { DataSource } from 'typeorm';
import { treeEntities } from '../../src/entities.js';
import { treeMigrations } from '../../src/migrations/index.js';

/** A fresh, migrated database for one test file (a copy of this run's migrated `tree` template). */
export function treeTestDatabase(): Promise<TestDatabase> {
  return createTestDatabase({
    template: 'tree',
    migrate: async (url) => {
      await migrateDatabase({ url, entities: treeEntities, migrations: treeMigrations });
    },
  });
}

/** An initialized DataSource on `url` with the tree entities and migrations (not run). */
export async function openTreeDataSource(url: string, poolMax = 10): Promise<DataSource> {
  const ds = createDataSource({ url, entities: treeEntities, migrations: treeMigrations, poolMax });
  await ds.initialize();
  return ds;
}

/** The database's pool on `url`, as the tree service holds it. */
export function openTreeDb(url: string, poolMax = 10): Db {
  return new Db({ url, poolMax });
}
