import { createEmptyTestDatabase, type TestDatabase } from '@gatehouse/testing';
import { createDataSource, Db, mapPgError, runMigrations } from '../src/index.js';
import { SlowGadget1700000000001 } from './fixtures/migrations.js';

/** Every pool of the services has a statement_timeout (DB_STATEMENT_TIMEOUT_MS). */
describe('statement_timeout on every pool', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createEmptyTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('a statement longer than the timeout is cancelled, on every pooled connection, and maps to 503', async () => {
    const ds = new Db({ url: db.url, poolMax: 3, statementTimeoutMs: 200 });
    try {
      const started = Date.now();
      const results = await Promise.allSettled([1, 2, 3].map(() => ds.rows('SELECT pg_sleep(2)')));
      expect(Date.now() - started).toBeLessThan(1500);
      for (const r of results) {
        expect(r.status).toBe('rejected');
        const mapped = mapPgError((r as PromiseRejectedResult).reason);
        expect(mapped).toMatchObject({ code: 'service_unavailable' });
      }
      expect(await ds.rows('SHOW statement_timeout')).toEqual([{ statement_timeout: '200ms' }]);
    } finally {
      await ds.close();
    }
  });

  it('migrations run without it, and leave the pooled connection with the pool timeout', async () => {
    const ds = createDataSource({
      url: db.url,
      entities: [],
      migrations: [SlowGadget1700000000001],
      poolMax: 1,
      statementTimeoutMs: 50,
    });
    await ds.initialize();
    try {
      await runMigrations(ds);
      expect(await ds.query('SHOW statement_timeout')).toEqual([{ statement_timeout: '50ms' }]);
    } finally {
      await ds.destroy();
    }
  });
});
