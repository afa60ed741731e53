import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { commonEnv, loadEnv } from '@gatehouse/config';
import { migrateDatabase } from '@gatehouse/db';
import { buildService, type BuiltService } from '@gatehouse/service';
import { createTestDatabase, type TestDatabase } from '@gatehouse/testing';
import { identityEnv } from '../src/config.js';
import { identityEntities } from '../src/entities.js';
import { identityMigrations } from '../src/migrations/index.js';
import { identityService } from '../src/identity.service-definition.js';

export type IdentityEnv = ReturnType<typeof loadIdentityEnv>;

export function identityTestDatabase(): Promise<TestDatabase> {
  return createTestDatabase({
    template: 'identity_app',
    migrate: async (url) => {
      await migrateDatabase({ url, entities: identityEntities, migrations: identityMigrations });
    },
  });
}

export function loadIdentityEnv(vars: Record<string, string>) {
  return loadEnv({ ...commonEnv, ...identityEnv }, { LOG_LEVEL: 'silent', ...vars });
}

export interface IdentityHarness {
  db: TestDatabase;
  dataDir: string;
  built: BuiltService<IdentityEnv>;
  close(): Promise<void>;
}

/** apps/identity built exactly as main.ts builds it (migrations, bootstrap, Nest app), on this test's database. */
export async function startIdentity(vars: Record<string, string> = {}): Promise<IdentityHarness> {
  const db = await identityTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gh-identity-'));
  const env = loadIdentityEnv({ DATABASE_URL: db.url, DATA_DIR: dataDir, ...vars });
  const built = (await buildService(identityService, env)) as BuiltService<IdentityEnv>;
  return {
    db,
    dataDir,
    built,
    close: async () => {
      await built.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
