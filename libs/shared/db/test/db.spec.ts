import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  buildDataSourceOptions,
  Db,
  createDataSource,
  ensureDatabase,
  migrateDatabase,
  pendingMigrations,
  pendingSchemaChanges,
  quoteIdentifier,
  runMigrations,
} from '../src/index.js';
import {
  createEmptyTestDatabase,
  createTestDatabase,
  testAdminUrl,
  type TestDatabase,
} from '@gatehouse/testing';
import { Widget, WidgetWithColor } from './fixtures/widget.entity.js';
import {
  Broken1700000000002,
  CreateWidget1700000000000,
  SlowGadget1700000000001,
} from './fixtures/migrations.js';

const migrateWidgets = (url: string) =>
  migrateDatabase({ url, entities: [Widget], migrations: [CreateWidget1700000000000] }).then(() => undefined);

async function query(url: string, sql: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

const tables = async (url: string) =>
  (await query(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).map(
    (r) => r.tablename,
  );

describe('@gatehouse/db', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  const open = async (url: string, o: Partial<Parameters<typeof createDataSource>[0]> = {}) => {
    const ds = createDataSource({ url, entities: [Widget], migrations: [CreateWidget1700000000000], ...o });
    await ds.initialize();
    cleanups.push(() => (ds.isInitialized ? ds.destroy() : Promise.resolve()));
    return ds;
  };
  const emptyDb = async () => {
    const db = await createEmptyTestDatabase();
    cleanups.push(() => db.drop());
    return db;
  };
  afterAll(async () => {
    // data sources first (registered last), then their databases
    for (const c of cleanups.reverse()) await c();
  });

  describe('buildDataSourceOptions', () => {
    it('never synchronizes or auto-runs migrations, and uses pgcrypto uuids', () => {
      const o = buildDataSourceOptions({ url: 'postgres://u@h/d', entities: [], migrations: [], poolMax: 3 });
      expect(o).toMatchObject({
        type: 'postgres',
        synchronize: false,
        migrationsRun: false,
        dropSchema: false,
        uuidExtension: 'pgcrypto',
        poolSize: 3,
        migrationsTableName: 'typeorm_migrations',
      });
    });

    it('rejects a non-postgres url and a bad pool size', () => {
      expect(() => buildDataSourceOptions({ url: 'mysql://h/d', entities: [], migrations: [] })).toThrow(
        /postgres:\/\//,
      );
      expect(() =>
        buildDataSourceOptions({ url: 'postgres://h/d', entities: [], migrations: [], poolMax: 0 }),
      ).toThrow(/poolMax/);
    });
  });

  describe('runMigrations', () => {
    it('runs pending migrations once and records them', async () => {
      const db = await emptyDb();
      const ds = await open(db.url);
      expect(await pendingMigrations(ds)).toEqual(['CreateWidget1700000000000']);
      expect(await runMigrations(ds)).toEqual(['CreateWidget1700000000000']);
      expect(await runMigrations(ds)).toEqual([]);
      expect(await pendingMigrations(ds)).toEqual([]);
      expect(await query(db.url, 'SELECT name FROM typeorm_migrations')).toEqual([
        { name: 'CreateWidget1700000000000' },
      ]);

      // The migrated table works through TypeORM: generated uuid, default jsonb, unique name.
      const saved = await ds.getRepository(Widget).save({ name: 'first' });
      expect(saved.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(saved.metadata).toEqual({});
      await expect(ds.getRepository(Widget).insert({ name: 'first' })).rejects.toMatchObject({
        driverError: { code: '23505' },
      });
    });

    it('serializes two processes migrating the same database at once', async () => {
      const db = await emptyDb();
      const migrations = [CreateWidget1700000000000, SlowGadget1700000000001];
      const a = await open(db.url, { migrations, poolMax: 1 });
      const b = await open(db.url, { migrations, poolMax: 1 });
      const [ra, rb] = await Promise.all([runMigrations(a), runMigrations(b)]);
      // One ran both, the other waited for the lock and then found nothing to do.
      expect([ra, rb].sort((x, y) => y.length - x.length)).toEqual([
        ['CreateWidget1700000000000', 'SlowGadget1700000000001'],
        [],
      ]);
      expect(await query(db.url, 'SELECT count(*)::int AS n FROM typeorm_migrations')).toEqual([{ n: 2 }]);
      expect(await tables(db.url)).toEqual(['gadget', 'typeorm_migrations', 'widget']);
    });

    it("'each' keeps the migrations before a failure, 'all' keeps none", async () => {
      const migrations = [CreateWidget1700000000000, Broken1700000000002];

      const each = await emptyDb();
      await expect(
        runMigrations(await open(each.url, { migrations }), { transaction: 'each' }),
      ).rejects.toThrow(/no_such_function/);
      expect(await tables(each.url)).toEqual(['typeorm_migrations', 'widget']);
      expect(await query(each.url, 'SELECT name FROM typeorm_migrations')).toEqual([
        { name: 'CreateWidget1700000000000' },
      ]);

      const all = await emptyDb();
      await expect(
        runMigrations(await open(all.url, { migrations }), { transaction: 'all' }),
      ).rejects.toThrow(/no_such_function/);
      expect(await tables(all.url)).toEqual(['typeorm_migrations']);
      expect(await query(all.url, 'SELECT count(*)::int AS n FROM typeorm_migrations')).toEqual([{ n: 0 }]);
    });

    it('releases the lock after a failure, so a fixed retry can run', async () => {
      const db = await emptyDb();
      const ds = await open(db.url, {
        migrations: [CreateWidget1700000000000, Broken1700000000002],
        poolMax: 1,
      });
      await expect(runMigrations(ds)).rejects.toThrow();
      const fixed = await open(db.url, {
        migrations: [CreateWidget1700000000000, SlowGadget1700000000001],
        poolMax: 1,
      });
      expect(await runMigrations(fixed)).toEqual(['SlowGadget1700000000001']);
    });

    it('rejects an unknown transaction mode', async () => {
      const db = await emptyDb();
      const ds = await open(db.url);
      await expect(runMigrations(ds, { transaction: 'none' as 'each' })).rejects.toThrow(/'each' or 'all'/);
    });
  });

  describe('pendingSchemaChanges (drift)', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ template: 'db_widget', migrate: migrateWidgets });
      cleanups.push(() => db.drop());
    });

    it('is empty when the migrations describe the entities exactly', async () => {
      const ds = await open(db.url);
      expect(await pendingSchemaChanges(ds)).toEqual([]);
    });

    it('fails when entities and migrations drift: a column added without a migration', async () => {
      const ds = await open(db.url, { entities: [WidgetWithColor] });
      const changes = await pendingSchemaChanges(ds);
      expect(changes).toHaveLength(1);
      expect(changes[0]).toMatch(/ALTER TABLE "widget" ADD "color" character varying\(20\)/);
    });

    it('fails when the migrations were never run', async () => {
      const empty = await emptyDb();
      const ds = await open(empty.url);
      expect((await pendingSchemaChanges(ds)).join('\n')).toMatch(/CREATE TABLE "widget"/);
    });
  });

  describe('ensureDatabase', () => {
    const created: string[] = [];
    afterAll(async () => {
      for (const name of created)
        await query(testAdminUrl(), `DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
    });

    it('creates a missing database once, quoting any name safely', async () => {
      const name = `gh_test_ens_${randomBytes(3).toString('hex')} "x"; DROP DATABASE postgres; --`;
      created.push(name);
      expect(await ensureDatabase(testAdminUrl(), name)).toBe(true);
      expect(await ensureDatabase(testAdminUrl(), name)).toBe(false);
      expect(
        await query(testAdminUrl(), 'SELECT datname FROM pg_database WHERE datname = $1', [name]),
      ).toEqual([{ datname: name }]);
    });

    it('is safe when several processes race to create the same name', async () => {
      const name = `gh_test_race_${randomBytes(3).toString('hex')}`;
      created.push(name);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => ensureDatabase(testAdminUrl(), name)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('rejects names PostgreSQL cannot hold', async () => {
      await expect(ensureDatabase(testAdminUrl(), '')).rejects.toThrow(/non-empty/);
      await expect(ensureDatabase(testAdminUrl(), 'x'.repeat(64))).rejects.toThrow(/at most 63 bytes/);
      await expect(ensureDatabase(testAdminUrl(), 'a\0b')).rejects.toThrow(/NUL/);
    });
  });

  describe('Db.check (readiness)', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ template: 'db_widget', migrate: migrateWidgets });
      cleanups.push(() => db.drop());
    });

    it('resolves while the database answers', async () => {
      const d = new Db({ url: db.url });
      cleanups.push(() => d.close());
      await expect(d.check()).resolves.toBeUndefined();
    });

    it('throws once the pool is closed', async () => {
      const d = new Db({ url: db.url });
      await d.close();
      await expect(d.check()).rejects.toThrow();
    });

    it('gives up after the timeout instead of hanging on a busy pool', async () => {
      const d = new Db({ url: db.url, poolMax: 1 });
      cleanups.push(() => d.close());
      const busy = d.rows('SELECT pg_sleep(1.5)');
      const started = Date.now();
      await expect(d.check(200)).rejects.toThrow(/did not answer within 200 ms/);
      expect(Date.now() - started).toBeLessThan(1000);
      await busy;
      await expect(d.check(200)).resolves.toBeUndefined();
    });

    it('throws when the database stops accepting connections, and the pool recovers when it accepts again', async () => {
      const own = await createTestDatabase({ template: 'db_widget', migrate: migrateWidgets });
      const d = new Db({ url: own.url });
      await d.check();
      const ident = quoteIdentifier(own.name);
      await query(testAdminUrl(), `ALTER DATABASE ${ident} WITH ALLOW_CONNECTIONS false`);
      await query(
        testAdminUrl(),
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1',
        [own.name],
      );
      await expect(d.check()).rejects.toThrow();
      await query(testAdminUrl(), `ALTER DATABASE ${ident} WITH ALLOW_CONNECTIONS true`);
      await expect(d.check()).resolves.toBeUndefined();
      await d.close();
      await own.drop();
    });
  });
});
