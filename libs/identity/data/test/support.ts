import { Db, migrateDatabase } from '@gatehouse/db';
import { createTestDatabase, type TestDatabase } from '@gatehouse/testing';
import { identityEntities, identityMigrations } from '../src/index.js';

/** This test file's own database, cloned from a template migrated with the identity migrations. */
export function identityTestDatabase(): Promise<TestDatabase> {
  return createTestDatabase({
    template: 'identity_data',
    migrate: async (url) => {
      await migrateDatabase({ url, entities: identityEntities, migrations: identityMigrations });
    },
  });
}

/** The database's pool, as a service holds it. */
export async function openDb(url: string, poolMax = 4): Promise<Db> {
  return new Db({ url, poolMax });
}

/** Postgres error code of a rejected promise (23505 unique, 23503 foreign key, ...). */
export async function pgCode(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: string; driverError?: { code?: string } };
    return e.driverError?.code ?? e.code;
  }
  return undefined;
}

export const uniq = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
