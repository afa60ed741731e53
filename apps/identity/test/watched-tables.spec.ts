import pg from 'pg';
import { announceTriggerName, WATCHED_TABLES } from '@gatehouse/changes';
import type { TestDatabase } from '@gatehouse/testing';
import { identityTestDatabase } from './support.js';

/**
 * The triggers are the only announcer of the change channel: the migrated identity schema must announce exactly the
 * tables @gatehouse/changes lists, each as it says (a table added to the list needs a migration creating its
 * triggers, and a trigger nobody lists is a cache dependency nobody wrote down).
 */
describe('watched tables', () => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await identityTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('every watched table announces insert, update and delete as listed, and no other table does', async () => {
    const { rows } = await client.query<{ table: string; name: string; args: string[] }>(
      `SELECT c.relname AS table, t.tgname AS name,
              string_to_array(rtrim(encode(t.tgargs, 'escape'), '\\000'), '\\000') AS args
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         JOIN pg_proc p ON p.oid = t.tgfoid
        WHERE NOT t.tgisinternal AND p.proname = 'gatehouse_announce_changes'`,
    );
    const order = (a: { table: string; name: string }, b: { table: string; name: string }) =>
      a.table === b.table ? (a.name < b.name ? -1 : 1) : a.table < b.table ? -1 : 1;
    const expected = WATCHED_TABLES.flatMap((w) =>
      (['del', 'ins', 'upd'] as const).map((e) => ({
        table: w.table,
        name: announceTriggerName(w.table, e),
        args: [w.kind, w.column ?? '', `{${(w.ignore ?? []).join(',')}}`],
      })),
    ).sort(order);
    expect([...rows].sort(order)).toEqual(expected);
  });
});
