import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  createEmptyTestDatabase,
  createTestDatabase,
  testAdminUrl,
  testRedisUrl,
  withDatabase,
} from './test-database.js';

async function query<T extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

const uniqueKey = () => `spec_${randomBytes(4).toString('hex')}`;
const admin = () => testAdminUrl();

describe('createTestDatabase', () => {
  const created: { drop(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(created.map((d) => d.drop()));
  });

  it('gives each caller its own copy of a template migrated once', async () => {
    const key = uniqueKey();
    let migrations = 0;
    const migrate = async (url: string) => {
      migrations++;
      await query(url, 'CREATE TABLE widget (id serial PRIMARY KEY, name text NOT NULL UNIQUE)');
      await query(url, "INSERT INTO widget (name) VALUES ('seeded')");
    };
    const a = await createTestDatabase({ template: key, migrate });
    const b = await createTestDatabase({ template: key, migrate });
    created.push(a, b);

    expect(migrations).toBe(1);
    expect(a.url).not.toBe(b.url);
    expect(a.name).toMatch(/^gh_test_[a-z0-9]+_[0-9a-f]{10}$/);
    await query(a.url, "INSERT INTO widget (name) VALUES ('only-in-a')");
    expect((await query(a.url, 'SELECT name FROM widget ORDER BY id')).map((r) => r.name)).toEqual([
      'seeded',
      'only-in-a',
    ]);
    expect((await query(b.url, 'SELECT name FROM widget ORDER BY id')).map((r) => r.name)).toEqual([
      'seeded',
    ]);

    const [tpl] = await query(
      admin(),
      "SELECT datname, datallowconn, datistemplate FROM pg_database WHERE datname LIKE 'gh\\_tpl\\_%' AND datname LIKE $1",
      [`%\\_${key}`],
    );
    expect(tpl).toMatchObject({ datallowconn: false, datistemplate: true });
  });

  it('runs migrate once when many callers race for a new template', async () => {
    const key = uniqueKey();
    let migrations = 0;
    const migrate = async (url: string) => {
      migrations++;
      await query(url, 'SELECT pg_sleep(0.3)');
      await query(url, 'CREATE TABLE t (x int)');
    };
    const dbs = await Promise.all(
      Array.from({ length: 4 }, () => createTestDatabase({ template: key, migrate })),
    );
    created.push(...dbs);
    expect(migrations).toBe(1);
    for (const db of dbs) expect(await query(db.url, 'SELECT count(*)::int AS n FROM t')).toEqual([{ n: 0 }]);
  });

  it('drop() removes the database even with a session still open, and is idempotent', async () => {
    const db = await createTestDatabase({ template: uniqueKey(), migrate: async () => undefined });
    const open = new pg.Client({ connectionString: db.url });
    open.on('error', () => undefined);
    await open.connect();
    await db.drop();
    await db.drop();
    expect(await query(admin(), 'SELECT 1 FROM pg_database WHERE datname = $1', [db.name])).toEqual([]);
    await open.end().catch(() => undefined);
  });

  it('a failing migrate leaves no template behind and the next caller tries again', async () => {
    const key = uniqueKey();
    await expect(
      createTestDatabase({
        template: key,
        migrate: async (url) => {
          await query(url, 'CREATE TABLE half (x int)');
          throw new Error('migration 2 broke');
        },
      }),
    ).rejects.toThrow('migration 2 broke');
    expect(
      await query(admin(), 'SELECT datname FROM pg_database WHERE datname LIKE $1', [`%${key}%`]),
    ).toEqual([]);

    const db = await createTestDatabase({
      template: key,
      migrate: (url) => query(url, 'CREATE TABLE whole (x int)').then(() => undefined),
    });
    created.push(db);
    const tables = await query(
      db.url,
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    expect(tables.map((r) => r.tablename)).toEqual(['whole']);
  });

  it('rejects template keys that are not plain identifiers', async () => {
    for (const template of ['', 'Identity', 'a-b', 'x; DROP DATABASE postgres', 'k'.repeat(33)]) {
      await expect(createTestDatabase({ template, migrate: async () => undefined })).rejects.toThrow(
        /template key/,
      );
    }
  });

  it('createEmptyTestDatabase gives an empty database', async () => {
    const db = await createEmptyTestDatabase();
    created.push(db);
    expect(await query(db.url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual([]);
  });

  it('test databases do not wait for the disk at commit (they are thrown away)', async () => {
    const copy = await createTestDatabase({ template: uniqueKey(), migrate: async () => undefined });
    const empty = await createEmptyTestDatabase();
    created.push(copy, empty);
    for (const db of [copy, empty]) {
      expect(await query(db.url, 'SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'off' }]);
    }
  });
});

describe('helpers', () => {
  it('withDatabase swaps only the database name', () => {
    expect(withDatabase('postgres://u:p%40ss@127.0.0.1:5433/postgres?sslmode=disable', 'gh_x')).toBe(
      'postgres://u:p%40ss@127.0.0.1:5433/gh_x?sslmode=disable',
    );
  });

  it('testAdminUrl and testRedisUrl fail loudly when their variable is missing', () => {
    const saved = { pg: process.env.TEST_PG_URL, redis: process.env.TEST_REDIS_URL };
    try {
      delete process.env.TEST_PG_URL;
      delete process.env.TEST_REDIS_URL;
      expect(() => testAdminUrl()).toThrow(/TEST_PG_URL is not set/);
      expect(() => testRedisUrl()).toThrow(/TEST_REDIS_URL is not set/);
      process.env.TEST_REDIS_URL = 'redis://127.0.0.1:6399';
      expect(testRedisUrl()).toBe('redis://127.0.0.1:6399');
    } finally {
      process.env.TEST_PG_URL = saved.pg;
      if (saved.redis === undefined) delete process.env.TEST_REDIS_URL;
      else process.env.TEST_REDIS_URL = saved.redis;
    }
  });
});
