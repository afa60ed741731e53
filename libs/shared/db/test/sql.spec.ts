import { defineRecord } from '@gatehouse/query';
import { createEmptyTestDatabase, type TestDatabase } from '@gatehouse/testing';
import {
  Db,
  listPage,
  Params,
  ScopedTable,
  uniqueConflict,
  withConflicts,
  type RecordScope,
} from '../src/index.js';

/** The one SQL helper (Db / Sql), the one list implementation and the one scoping rule, on a real database. */
describe('Db', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createEmptyTestDatabase();
    db = new Db({ url: database.url, poolMax: 3 });
    await db.exec(`CREATE TABLE items (
      id int PRIMARY KEY, instance_id text NOT NULL, tenant_id text, name text NOT NULL UNIQUE)`);
    await db.exec(
      `INSERT INTO items SELECT g, CASE WHEN g <= 20 THEN 'i1' ELSE 'i2' END,
              CASE WHEN g % 2 = 0 THEN 't1' WHEN g % 3 = 0 THEN 't2' END, 'n' || lpad(g::text, 3, '0')
         FROM generate_series(1, 30) g`,
    );
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('rows, one and exec: rows also of UPDATE ... RETURNING, exec the count of rows touched', async () => {
    expect(await db.rows(`SELECT id FROM items WHERE id <= $1 ORDER BY id`, [2])).toEqual([
      { id: 1 },
      { id: 2 },
    ]);
    expect(await db.one(`SELECT name FROM items WHERE id = $1`, [3])).toEqual({ name: 'n003' });
    expect(await db.one(`SELECT name FROM items WHERE id = $1`, [999])).toBeUndefined();
    expect(await db.rows(`UPDATE items SET name = name WHERE id IN (1, 2) RETURNING id`)).toHaveLength(2);
    expect(await db.exec(`UPDATE items SET name = name WHERE id <= 5`)).toBe(5);
  });

  it('transaction settings: set at BEGIN, escaped, local to the transaction, read anew at each BEGIN', async () => {
    const own = new Db({ url: database.url, poolMax: 1 });
    try {
      let value: string | undefined = `it's {"a": "b\\"}; DROP TABLE items; --`;
      own.useTransactionSettings(() => (value === undefined ? undefined : { 'gatehouse.test': value }));
      const read = (sql: { one: Db['one'] }) =>
        sql.one<{ v: string | null }>(`SELECT current_setting('gatehouse.test', true) AS v`);
      expect(await own.transaction((tx) => read(tx))).toEqual({ v: value });
      // local: the pooled connection (the only one) has it no more
      expect((await read(own))?.v ?? '').toBe('');
      value = 'second';
      const tx = await own.begin();
      expect(await read(tx)).toEqual({ v: 'second' });
      await tx.commit();
      value = undefined;
      expect((await own.transaction((t) => read(t)))?.v ?? '').toBe('');
      expect(await own.one(`SELECT count(*)::int AS n FROM items`)).toEqual({ n: 30 });
    } finally {
      await own.close();
    }
  });

  it('a commit read shares the COMMIT round trip: its rows after the commit; if it fails, nothing commits', async () => {
    const own = new Db({ url: database.url, poolMax: 1 });
    try {
      const seen: unknown[] = [];
      // read at commit time from the settings' object
      const commitRead = {
        text: `SELECT count(*)::int AS n FROM items WHERE name = 'commit-read'`,
        afterCommit: (rows: unknown[]) => seen.push(rows),
      };
      own.useTransactionSettings(Object.assign(() => ({ 'gatehouse.test': 'x' }), { commitRead }));
      await own.transaction((tx) => tx.exec(`UPDATE items SET name = 'commit-read' WHERE id = 8`));
      expect(seen).toEqual([[{ n: 1 }]]);
      commitRead.text = 'SELECT 1/0';
      await expect(
        own.transaction((tx) => tx.exec(`UPDATE items SET name = 'never' WHERE id = 9`)),
      ).rejects.toMatchObject({ code: '22012' });
      expect(seen).toHaveLength(1);
      expect(await own.one(`SELECT name FROM items WHERE id = 9`)).not.toEqual({ name: 'never' });
      // the connection is back in the pool outside any transaction
      expect(await own.one(`SELECT now() = statement_timestamp() AS outside`)).toEqual({ outside: true });
    } finally {
      await db.exec(`UPDATE items SET name = 'n008' WHERE id = 8`);
      await own.close();
    }
  });

  it('transaction commits when fn resolves, rolls back when it throws; inside one, transaction joins it', async () => {
    await db.transaction(async (tx) => {
      await tx.exec(`UPDATE items SET name = 'renamed' WHERE id = 7`);
      await tx.transaction(async (inner) => {
        expect(inner).toBe(tx);
        await inner.exec(`UPDATE items SET tenant_id = 'tx' WHERE id = 7`);
      });
    });
    expect(await db.one(`SELECT name, tenant_id FROM items WHERE id = 7`)).toEqual({
      name: 'renamed',
      tenant_id: 'tx',
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.exec(`UPDATE items SET name = 'lost' WHERE id = 8`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await db.one(`SELECT name FROM items WHERE id = 8`)).toEqual({ name: 'n008' });
    await db.exec(`UPDATE items SET name = 'n007', tenant_id = NULL WHERE id = 7`);
  });

  it('transaction options: isolation and read only', async () => {
    const level = await db.transaction((tx) => tx.one<{ l: string }>(`SHOW transaction_isolation`), {
      isolation: 'REPEATABLE READ',
      readOnly: true,
    });
    expect(level).toEqual({ transaction_isolation: 'repeatable read' });
    await expect(
      db.transaction((tx) => tx.exec(`UPDATE items SET name = name WHERE id = 1`), { readOnly: true }),
    ).rejects.toMatchObject({ code: '25006' });
  });

  it('begin: a transaction the caller ends, holding its snapshot across awaits', async () => {
    const tx = await db.begin({ isolation: 'REPEATABLE READ', readOnly: true });
    const before = await tx.one<{ n: number }>(`SELECT count(*)::int AS n FROM items`);
    await db.exec(`INSERT INTO items VALUES (100, 'i9', NULL, 'late')`);
    expect(await tx.one(`SELECT count(*)::int AS n FROM items`)).toEqual(before);
    await tx.commit();
    await tx.commit(); // ending twice is harmless
    expect(await db.one(`SELECT count(*)::int AS n FROM items`)).toEqual({ n: before!.n + 1 });
    await db.exec(`DELETE FROM items WHERE id = 100`);
  });

  it('a connection whose backend died is not pooled again; the pool keeps serving', async () => {
    await expect(
      db.connection(async (sql) => {
        await sql.exec(`SELECT pg_terminate_backend(pg_backend_pid())`);
      }),
    ).rejects.toBeDefined();
    for (let i = 0; i < 5; i++) expect(await db.one(`SELECT 1 AS ok`)).toEqual({ ok: 1 });
  });

  /**
   * Resolves once the connection under `sql` has ended: pg emits 'end' after the 'error' of a connection that died
   * (listening to 'end' adds no 'error' listener, which would hide the crash this guards against).
   */
  const connectionEnded = (sql: unknown) =>
    new Promise<void>((resolve) =>
      (sql as { client: { once(event: 'end', fn: () => void): void } }).client.once('end', () => resolve()),
    );

  // Found by tools/reliability/pg-restart.mjs: a connection killed between two statements of a transaction (a
  // PostgreSQL restart while the transaction awaited other work) emitted 'error' on a checked-out client that had no
  // listener, and the process exited. Now the connection is marked broken, its next statement fails, it is destroyed.
  it('a checked-out connection killed between two statements does not crash the process', async () => {
    const killer = new Db({ url: database.url, poolMax: 1 });
    try {
      await expect(
        db.transaction(async (tx) => {
          const { pid } = (await tx.one<{ pid: number }>(`SELECT pg_backend_pid() AS pid`))!;
          const ended = connectionEnded(tx);
          await killer.exec(`SELECT pg_terminate_backend($1)`, [pid]);
          await ended; // the 'error' event arrives while nothing runs here
          await tx.exec(`SELECT 1`);
        }),
      ).rejects.toBeDefined();
      const open = await db.begin();
      const { pid } = (await open.one<{ pid: number }>(`SELECT pg_backend_pid() AS pid`))!;
      const ended = connectionEnded(open);
      await killer.exec(`SELECT pg_terminate_backend($1)`, [pid]);
      await ended;
      await expect(open.commit()).rejects.toBeDefined();
      for (let i = 0; i < 5; i++) expect(await db.one(`SELECT 1 AS ok`)).toEqual({ ok: 1 });
    } finally {
      await killer.close();
    }
  });

  it('uniqueConflict / withConflicts: a named unique violation becomes a 409, anything else passes', async () => {
    const taken = db.exec(`INSERT INTO items VALUES (200, 'i1', NULL, 'n001')`);
    await expect(withConflicts({ items_name_key: 'That name is taken' }, () => taken)).rejects.toMatchObject({
      code: 'conflict',
      message: 'That name is taken',
    });
    const err = await db.exec(`INSERT INTO items VALUES (1, 'i1', NULL, 'other')`).catch((e: unknown) => e);
    expect(uniqueConflict(err, { items_name_key: 'x' })).toBe(err);
    expect(uniqueConflict(err, { pk: 'taken' }, (c) => (c === 'items_pkey' ? 'pk' : c))).toMatchObject({
      code: 'conflict',
      message: 'taken',
    });
  });
});

describe('ScopedTable', () => {
  const items = new ScopedTable({ name: 'items', alias: 'x', tenantScoped: true });
  const settings = new ScopedTable({ name: 'settings', alias: 's', tenantScoped: false });

  it('confines every query to the instance, and a restricted caller to its tenant (none: nothing)', () => {
    const p = new Params(['first']);
    expect(items.where({ instanceId: 'i1', restricted: false, tenantId: 't1' }, p)).toBe(
      'x.instance_id = $2',
    );
    expect(items.where({ instanceId: 'i1', restricted: true, tenantId: 't1' }, p)).toBe(
      'x.instance_id = $3 AND x.tenant_id = $4',
    );
    expect(items.where({ instanceId: 'i1', restricted: true, tenantId: null }, p, 'y')).toBe(
      'y.instance_id = $5 AND FALSE',
    );
    expect(settings.where({ instanceId: 'i1', restricted: true, tenantId: 't1' }, p)).toBe(
      's.instance_id = $6',
    );
    expect(p.values).toEqual(['first', 'i1', 'i1', 't1', 'i1', 'i1']);
    expect(items.from).toBe('items x');
  });
});

describe('listPage', () => {
  let database: TestDatabase;
  let db: Db;
  const spec = defineRecord({
    name: 'item',
    attributes: [
      { name: 'id', column: 'x.id', type: 'integer' },
      { name: 'name', column: 'x.name', type: 'string', sortColumn: 'lower(x.name)' },
      { name: 'tenant_id', column: 'x.tenant_id', type: 'string' },
    ],
  });
  const items = new ScopedTable({ name: 'items', alias: 'x', tenantScoped: true });

  beforeAll(async () => {
    database = await createEmptyTestDatabase();
    db = new Db({ url: database.url, poolMax: 2 });
    await db.exec(
      `CREATE TABLE items (id int PRIMARY KEY, instance_id text NOT NULL, tenant_id text, name text)`,
    );
    await db.exec(
      `INSERT INTO items SELECT g, CASE WHEN g <= 20 THEN 'i1' ELSE 'i2' END,
              CASE WHEN g % 2 = 0 THEN 't1' END, CASE WHEN g % 2 = 0 THEN 'B' ELSE 'a' END || lpad(g::text, 2, '0')
         FROM generate_series(1, 30) g`,
    );
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const plan = (
    query: Record<string, unknown>,
    scope: RecordScope = { instanceId: 'i1', restricted: false, tenantId: null },
  ) => {
    const p = new Params();
    return {
      spec,
      query,
      params: p,
      conditions: items.conditions(scope, p),
      select: () => 'x.id, x.name',
      from: items.from,
      defaultOrder: 'ORDER BY x.id',
    };
  };

  it('pages within the scope, with has_more, and the total in the same statement when asked', async () => {
    const first = await listPage<{ id: number }>(db, plan({ limit: '5', total_count: 'true' }));
    expect(first.rows.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    expect(first).toMatchObject({ hasMore: true, total: 20 });
    const last = await listPage<{ id: number }>(db, plan({ limit: '5', offset: '15' }));
    expect(last.rows.map((r) => r.id)).toEqual([16, 17, 18, 19, 20]);
    expect(last.hasMore).toBe(false);
    expect(last.total).toBeUndefined();
    const empty = await listPage(db, plan({ offset: '50', total_count: 'true' }));
    expect(empty).toMatchObject({ rows: [], hasMore: false, total: 20 });
  });

  it('q and sort (through sortColumn), a restricted caller sees its tenant only', async () => {
    const sorted = await listPage<{ id: number; name: string }>(
      db,
      plan({ sort: 'name:desc', q: 'id < 7', total_count: 'true' }),
    );
    expect(sorted.rows.map((r) => r.name)).toEqual(['B06', 'B04', 'B02', 'a05', 'a03', 'a01']);
    expect(sorted.total).toBe(6);
    const tenant = await listPage<{ id: number }>(
      db,
      plan({ total_count: 'true', limit: '100' }, { instanceId: 'i1', restricted: true, tenantId: 't1' }),
    );
    expect(tenant.rows.map((r) => r.id)).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
    expect(tenant.total).toBe(10);
    const none = await listPage(
      db,
      plan({ total_count: 'true' }, { instanceId: 'i1', restricted: true, tenantId: null }),
    );
    expect(none).toMatchObject({ rows: [], total: 0 });
  });

  it('knownTotal answers the count of an unfiltered list; a bad parameter is a 400 before any statement', async () => {
    const known = await listPage(db, { ...plan({ total_count: 'true' }), knownTotal: async () => 12345 });
    expect(known.total).toBe(12345);
    await expect(listPage(db, plan({ limit: '0' }))).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(listPage(db, plan({ q: 'nope = 1' }))).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('inside a transaction it runs on that transaction', async () => {
    const page = await db.transaction(async (tx) => {
      await tx.exec(`INSERT INTO items VALUES (99, 'i1', NULL, 'zz')`);
      return listPage<{ id: number }>(tx, plan({ q: 'id = 99', total_count: 'true' }));
    });
    expect(page.rows).toEqual([{ id: 99, name: 'zz' }]);
    await db.exec(`DELETE FROM items WHERE id = 99`);
  });
});
