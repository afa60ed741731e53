import type { DataSource } from 'typeorm';
import { pendingMigrations, pendingSchemaChanges, runMigrations } from '@gatehouse/db';
import { createEmptyTestDatabase, type TestDatabase } from '@gatehouse/testing';
import { treeMigrations } from '../src/migrations/index.js';
import { openTreeDataSource } from './support/db.js';

describe('tree migrations', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createEmptyTestDatabase();
    ds = await openTreeDataSource(db.url, 2);
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('apply to an empty database, leave no drift between entities and schema, and revert', async () => {
    expect(await pendingMigrations(ds)).toEqual(treeMigrations.map((m) => m.name));
    await runMigrations(ds);
    expect(await pendingSchemaChanges(ds)).toEqual([]);
    const settings = await ds.query(`SELECT id, environment FROM tree_settings`);
    expect(settings).toEqual([{ id: 1, environment: 'development' }]);
    const [{ id }] = await ds.query(`SELECT tree_node_id('0b9d2c52-8a6f-4e1b-9c3d-7f00aa112233', 42) AS id`);
    expect(id).toBe('0b9d2c52-8a6f-4e1b-9c3d-00000000002a');

    for (let i = 0; i < treeMigrations.length; i++) await ds.undoLastMigration();
    expect(
      await ds.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'tree_nodes'`),
    ).toHaveLength(0);
    expect(
      await ds.query(`SELECT 1 FROM pg_proc WHERE proname IN ('tree_node_id', 'tree_create_node')`),
    ).toHaveLength(0);
    await runMigrations(ds);
    expect(await pendingSchemaChanges(ds)).toEqual([]);
  });

  it('refuses a depth that does not match the path', async () => {
    const bad = ds.query(
      `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, depth, path)
       VALUES (gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'a', 'a', 1, '{1}')`,
    );
    await expect(bad).rejects.toMatchObject({ driverError: { code: '23514' } });
  });
});
