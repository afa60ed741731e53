import { createEmptyTestDatabase, type TestDatabase } from '@gatehouse/testing';
import { Db, PreparedStatements } from '../src/index.js';

/** Named statements PostgreSQL holds for the sessions of this data source's pool (pg_prepared_statements is per session). */
async function preparedNames(ds: Db): Promise<string[]> {
  // one pooled connection: poolMax is 1 in these tests, so this is the session the statements were prepared in
  const rows = await ds.rows<{ name: string }>(`SELECT name FROM pg_prepared_statements ORDER BY name`);
  return rows.map((r) => r.name);
}

describe('PreparedStatements', () => {
  let db: TestDatabase;
  let ds: Db;

  beforeAll(async () => {
    db = await createEmptyTestDatabase();
    ds = new Db({ url: db.url, poolMax: 1 });
    await ds.rows(`CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL)`);
    await ds.rows(`INSERT INTO t SELECT g, 'n' || g FROM generate_series(1, 100) g`);
  });
  afterAll(async () => {
    await ds?.close();
    await db?.drop();
  });

  it('runs a text unnamed on its first use and prepared from its second, with the same rows', async () => {
    const prepared = new PreparedStatements();
    const text = `SELECT id, name FROM t WHERE id <= $1 ORDER BY id`;
    const first = await prepared.rows<{ id: number; name: string }>(ds.pool, text, [3]);
    expect(first).toEqual([
      { id: 1, name: 'n1' },
      { id: 2, name: 'n2' },
      { id: 3, name: 'n3' },
    ]);
    expect(await preparedNames(ds)).toEqual([]);
    const second = await prepared.rows(ds.pool, text, [2]);
    expect(second).toEqual(first.slice(0, 2));
    const names = await preparedNames(ds);
    expect(names).toHaveLength(1);
    // later uses run the statement already there
    expect(await prepared.rows(ds.pool, text, [1])).toEqual(first.slice(0, 1));
    expect(await preparedNames(ds)).toEqual(names);
  });

  it('keeps at most maxPerConnection statements, deallocating the least recently used', async () => {
    await ds.rows('DEALLOCATE ALL');
    const prepared = new PreparedStatements({ maxPerConnection: 3 });
    const texts = [1, 2, 3, 4, 5].map((n) => `SELECT ${n} AS n, count(*)::int AS c FROM t`);
    for (const text of texts) {
      await prepared.rows(ds.pool, text); // seen
      await prepared.rows(ds.pool, text); // prepared
    }
    expect(await preparedNames(ds)).toHaveLength(3);
    // the evicted ones still answer (seen before: prepared again, evicting others)
    expect(await prepared.rows(ds.pool, texts[0])).toEqual([{ n: 1, c: 100 }]);
    expect(await preparedNames(ds)).toHaveLength(3);
  });

  it('forgets the oldest texts seen once (maxSeen) so one-off statements never pile up', async () => {
    await ds.rows('DEALLOCATE ALL');
    const prepared = new PreparedStatements({ maxSeen: 2 });
    const a = `SELECT 'a' AS v`;
    await prepared.rows(ds.pool, a);
    await prepared.rows(ds.pool, `SELECT 'b' AS v`);
    await prepared.rows(ds.pool, `SELECT 'c' AS v`); // pushes `a` out of the seen set
    await prepared.rows(ds.pool, a); // seen again, first time: unnamed
    expect(await preparedNames(ds)).toEqual([]);
  });

  it('passes statement errors through (pg error with its SQLSTATE) and keeps the connection usable', async () => {
    const prepared = new PreparedStatements();
    const bad = `SELECT id FROM t WHERE id = $1::int`;
    await prepared.rows(ds.pool, bad, [1]);
    await expect(prepared.rows(ds.pool, bad, ['not a number'])).rejects.toMatchObject({ code: '22P02' });
    await expect(prepared.rows(ds.pool, `SELECT nope FROM t`)).rejects.toMatchObject({ code: '42703' });
    await expect(prepared.rows(ds.pool, `SELECT nope FROM t`)).rejects.toMatchObject({ code: '42703' });
    expect(await prepared.rows(ds.pool, bad, [7])).toEqual([{ id: 7 }]);
  });

  it('Sql.read prepares on a held connection and in a transaction too, and survives a rollback', async () => {
    await ds.rows('DEALLOCATE ALL');
    const text = `SELECT name FROM t WHERE id = $1`;
    // first use (seen) and second (prepared) on one checked-out connection
    await ds.connection(async (sql) => {
      expect(await sql.read(text, [1])).toEqual([{ name: 'n1' }]);
      expect(await sql.read(text, [2])).toEqual([{ name: 'n2' }]);
    });
    const names = await preparedNames(ds);
    expect(names).toHaveLength(1);
    // a transaction that reads it and then fails: the statement stays prepared and usable (not transactional)
    await expect(
      ds.transaction(async (tx) => {
        expect(await tx.read(text, [3])).toEqual([{ name: 'n3' }]);
        await tx.rows(`SELECT 1/0`);
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await preparedNames(ds)).toEqual(names);
    expect(await ds.transaction((tx) => tx.read(text, [4]))).toEqual([{ name: 'n4' }]);
    expect(await ds.read(text, [5])).toEqual([{ name: 'n5' }]);
    expect(await preparedNames(ds)).toEqual(names);
  });
});

describe('Db when PostgreSQL drops its connections', () => {
  // Found by the reliability smoke (PostgreSQL restart): a new connection's "terminating connection" message arrived
  // in the same network read as the end of its startup, after the pool had handed the client over but before
  // `await pool.connect()` resumed to attach a listener; emitted as 'error' with none, it ended the identity service.
  it('backends terminated around reads and transactions never crash the process; the pool keeps serving', async () => {
    const db = await createEmptyTestDatabase();
    const ds = new Db({ url: db.url, poolMax: 4 });
    const killer = new Db({ url: db.url, poolMax: 1 });
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const until = Date.now() + 2_000;
      const readers = Array.from({ length: 4 }, async () => {
        while (Date.now() < until) {
          await ds
            .read(`SELECT pg_backend_pid() AS pid, g FROM generate_series(1, 50) g`)
            .catch(() => undefined);
          await ds.transaction((tx) => tx.rows(`SELECT pg_backend_pid() AS pid`)).catch(() => undefined);
        }
      });
      while (Date.now() < until) {
        await killer.exec(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        await new Promise((r) => setTimeout(r, 5));
      }
      await Promise.all(readers);
      expect(uncaught).toEqual([]);
      for (let i = 0; i < 5; i++) expect(await ds.read(`SELECT 1 AS ok`)).toEqual([{ ok: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await killer.close();
      await ds.close();
      await db.drop();
    }
  });
});
