import pg from 'pg';
import { testAdminUrl } from './test-database.js';

export interface TestLock {
  /** Releases the lock (ends its session). Idempotent. */
  release(): Promise<void>;
}

/**
 * A lock shared by the test files of one test server (TEST_PG_URL): a PostgreSQL advisory lock on
 * `gatehouse:test:<name>`, held by its own session until release(). `shared` locks exclude only exclusive ones.
 * Test files of different projects may run at the same time (`npm test` runs them in one queue); this keeps two of
 * them off a resource outside the database that both use, e.g. `dist/` (name `dist`), which the launcher smoke
 * rebuilds and the reliability smoke runs its services from. tools/reliability/test/smoke.spec.mjs takes the same
 * lock without this module.
 */
export async function holdTestLock(name: string, opts: { shared?: boolean } = {}): Promise<TestLock> {
  const client = new pg.Client({
    connectionString: testAdminUrl(),
    application_name: `gatehouse-test-lock-${name}`,
  });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(
      `SELECT ${opts.shared ? 'pg_advisory_lock_shared' : 'pg_advisory_lock'}(hashtextextended($1, 0))`,
      [`gatehouse:test:${name}`],
    );
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  let released: Promise<void> | undefined;
  return { release: () => (released ??= client.end().catch(() => undefined)) };
}
