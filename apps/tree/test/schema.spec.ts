import type { DataSource } from 'typeorm';
import { pendingMigrations, pendingSchemaChanges, runMigrations } from '@gatehouse/db';
import { createEmptyTestDatabase, type TestDatabase } from '@gatehouse/testing';
import { treeMigrations } from '../src/migrations/index.js';
import { openTreeDataSource } from './support/db.js';

/** The default instance's key in the tree database (migration 1790000500000). */
const NIL = '00000000-0000-0000-0000-000000000000';

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
    const settings = await ds.query(`SELECT instance_id, environment FROM tree_settings`);
    expect(settings).toEqual([{ instance_id: NIL, environment: 'development' }]);
    const [{ id }] = await ds.query(`SELECT tree_node_id('0b9d2c52-8a6f-4e1b-9c3d-7f00aa112233', 42) AS id`);
    expect(id).toBe('0b9d2c52-8a6f-4e1b-9c3d-00000000002a');
    const [paths] = await ds.query(
      `SELECT encode(tree_path('{1,300}'), 'hex') AS hex, tree_path_labels(tree_path('{1,300,2147483646}')) AS labels,
              tree_path_labels(''::bytea) AS none,
              tree_path_node_id('0b9d2c52-8a6f-4e1b-9c3d-7f00aa112233', tree_path('{7,42}')) AS id`,
    );
    expect(paths).toEqual({ hex: '000000010000012c', labels: [1, 300, 2147483646], none: [], id });

    for (let i = 0; i < treeMigrations.length; i++) await ds.undoLastMigration();
    expect(
      await ds.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'tree_nodes'`),
    ).toHaveLength(0);
    expect(
      await ds.query(
        `SELECT 1 FROM pg_proc WHERE proname IN ('tree_node_id', 'tree_create_node') OR proname LIKE 'tree_nodes_%' OR proname LIKE 'tree_path%'`,
      ),
    ).toHaveLength(0);
    await runMigrations(ds);
    expect(await pendingSchemaChanges(ds)).toEqual([]);
  });

  it('moves existing nodes into one partition per version with byte paths, and back (1790000300000, 1790000400000)', async () => {
    await ds.undoLastMigration(); // node-local indexes
    await ds.undoLastMigration(); // version roots (keeps every node)
    await ds.undoLastMigration(); // trees without instances
    await ds.undoLastMigration(); // integer-array paths
    await ds.undoLastMigration(); // back to one unpartitioned tree_nodes
    const [t] = await ds.query(`INSERT INTO trees (code, name) VALUES ('conv', 'c') RETURNING id`);
    const versions: string[] = [];
    for (const v of ['v1', 'v2']) {
      const [row] = await ds.query(
        `INSERT INTO tree_versions (tree_id, version, next_label, node_count) VALUES ($1, $2, 3, 3) RETURNING id`,
        [t.id, v],
      );
      versions.push(row.id);
    }
    const orphan = '0b9d2c52-8a6f-4e1b-9c3d-7f00aa112233'; // nodes whose version row is gone are kept too
    for (const v of [...versions, orphan]) {
      await ds.query(
        `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, depth, leaf, parent_id, path)
         VALUES (tree_node_id($1, 1), $2, $1, 'R', 'Root', 0, false, NULL, '{1}'),
                (tree_node_id($1, 2), $2, $1, 'A', 'A', 1, true, tree_node_id($1, 1), '{1,2}'),
                (tree_node_id($1, 3), $2, $1, 'B', 'B', 1, true, tree_node_id($1, 1), '{1,3}')`,
        [v, t.id],
      );
    }
    // Every column as it was, the path as its labels (integer[] before 1790000400000, bytea after).
    const snapshot = (labels = 'n.path') =>
      ds.query(
        `SELECT to_jsonb(n) - 'path' AS row, ${labels} AS labels FROM tree_nodes n ORDER BY n.tree_version_id, n.id`,
      ) as Promise<unknown[]>;
    const before = await snapshot();
    expect(before).toHaveLength(9);

    await runMigrations(ds);
    expect(await snapshot('tree_path_labels(n.path)')).toEqual(before);
    const [root] = await ds.query(
      `SELECT encode(path, 'hex') AS hex FROM tree_nodes WHERE code = 'A' LIMIT 1`,
    );
    expect(root.hex).toBe('0000000100000002');
    const parts = await ds.query(
      `SELECT c.relname, (SELECT count(*) FROM pg_index x WHERE x.indrelid = c.oid)::int AS indexes
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'tree_nodes'::regclass ORDER BY 1`,
    );
    expect(parts).toEqual(
      [...versions, orphan]
        .map((v) => ({ relname: `tree_nodes_${v.replace(/-/g, '')}`, indexes: 5 }))
        .sort((a, b) => a.relname.localeCompare(b.relname)),
    );
    for (const v of [...versions, orphan]) {
      const rows = await ds.query(
        `SELECT count(*)::int AS n FROM ONLY ${parts.find((p: { relname: string }) => p.relname.endsWith(v.replace(/-/g, ''))).relname}`,
      );
      expect(rows[0].n).toBe(3);
    }
    expect(await pendingSchemaChanges(ds)).toEqual([]);
    // tree_node_version finds a node's version from its id alone; NULL for an unknown node.
    const [found] = await ds.query(`SELECT tree_node_version(tree_node_id($1, 2)) AS v`, [versions[1]]);
    expect(found.v).toBe(versions[1]);
    const [none] = await ds.query(`SELECT tree_node_version(tree_node_id($1, 99)) AS v`, [versions[1]]);
    expect(none.v).toBeNull();

    await ds.undoLastMigration(); // node-local indexes
    await ds.undoLastMigration(); // version roots
    await ds.undoLastMigration(); // trees without instances
    await ds.undoLastMigration();
    expect(await snapshot()).toEqual(before);
    await ds.undoLastMigration();
    expect(await snapshot()).toEqual(before);
    const [{ kind }] = await ds.query(`SELECT relkind AS kind FROM pg_class WHERE relname = 'tree_nodes'`);
    expect(kind).toBe('r');
    await runMigrations(ds);
    await ds.query(`SELECT tree_nodes_drop_partition(v) FROM unnest($1::uuid[]) v`, [[...versions, orphan]]);
    await ds.query(`DELETE FROM trees WHERE id = $1`, [t.id]);
  });

  it('gives existing trees and settings to the default instance, codes unique per instance, and back (1790000500000)', async () => {
    await ds.undoLastMigration(); // node-local indexes
    await ds.undoLastMigration(); // version roots
    await ds.undoLastMigration();
    const [old] = await ds.query(`INSERT INTO trees (code, name) VALUES ('old', 'Old') RETURNING id`);
    await ds.query(`UPDATE tree_settings SET environment = 'staging'`);
    await runMigrations(ds);
    expect(await ds.query(`SELECT instance_id FROM trees WHERE id = $1`, [old.id])).toEqual([
      { instance_id: NIL },
    ]);
    expect(await ds.query(`SELECT instance_id, environment FROM tree_settings`)).toEqual([
      { instance_id: NIL, environment: 'staging' },
    ]);
    const other = '5a4f0c1e-3b2d-4e6f-8a9b-0c1d2e3f4a5b';
    const [mine] = await ds.query(
      `INSERT INTO trees (instance_id, code, name) VALUES ($1, 'old', 'B') RETURNING id`,
      [other],
    );
    const [v] = await ds.query(
      `INSERT INTO tree_versions (tree_id, version) VALUES ($1, 'v1') RETURNING id`,
      [mine.id],
    );
    await ds.query(`SELECT tree_nodes_add_partition($1)`, [v.id]);
    await ds.query(`INSERT INTO tree_settings (instance_id, environment) VALUES ($1, 'production')`, [other]);
    await expect(
      ds.query(`INSERT INTO trees (instance_id, code, name) VALUES ($1, 'old', 'again')`, [other]),
    ).rejects.toMatchObject({ driverError: { code: '23505', constraint: 'uq_trees_code' } });
    await expect(
      ds.query(`INSERT INTO trees (code, name) VALUES ('x', 'no instance')`),
    ).rejects.toMatchObject({
      driverError: { code: '23502' },
    });
    // tree_create_node finds the tree by (instance, code)
    await expect(
      ds.query(`SELECT * FROM tree_create_node($1, 'old', 'v1', 'R', 'Root', NULL, '{}', NULL, NULL)`, [NIL]),
    ).rejects.toMatchObject({
      driverError: { code: 'GH404', message: "Version 'v1' of tree 'old' not found" },
    });
    const [node] = await ds.query(
      `SELECT tree_id FROM tree_create_node($1, 'old', 'v1', 'R', 'Root', NULL, '{}', NULL, NULL)`,
      [other],
    );
    expect(node.tree_id).toBe(mine.id);

    await ds.undoLastMigration(); // node-local indexes
    await ds.undoLastMigration(); // version roots
    await ds.undoLastMigration(); // the other instance's tree, version, nodes and settings go
    expect(await ds.query(`SELECT id FROM trees`)).toEqual([{ id: old.id }]);
    expect(await ds.query(`SELECT id, environment FROM tree_settings`)).toEqual([
      { id: 1, environment: 'staging' },
    ]);
    expect(await ds.query(`SELECT to_regclass($1) AS t`, [`tree_nodes_${v.id.replace(/-/g, '')}`])).toEqual([
      { t: null },
    ]);
    await runMigrations(ds);
    expect(await pendingSchemaChanges(ds)).toEqual([]);
    await ds.query(`DELETE FROM trees`);
    await ds.query(`UPDATE tree_settings SET environment = 'development'`);
  });

  it('gives every version stored without nodes its root node, and keeps it on revert (1790000600000)', async () => {
    await ds.undoLastMigration(); // node-local indexes
    await ds.undoLastMigration();
    const [t] = await ds.query(
      `INSERT INTO trees (instance_id, code, name, description) VALUES ($1, 'roots', 'Roots', 'd') RETURNING id`,
      [NIL],
    );
    await ds.query(`INSERT INTO tree_translations (tree_id, language, name) VALUES ($1, 'mn_MN', 'Үндэс')`, [
      t.id,
    ]);
    const ids: Record<string, string> = {};
    for (const v of ['empty', 'full']) {
      const [row] = await ds.query(
        `INSERT INTO tree_versions (tree_id, version, next_label) VALUES ($1, $2, 4) RETURNING id`,
        [t.id, v],
      );
      ids[v] = row.id;
      await ds.query(`SELECT tree_nodes_add_partition($1)`, [row.id]);
    }
    await ds.query(
      `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, depth, leaf, parent_id, path)
       VALUES (tree_node_id($1, 4), $2, $1, 'X', 'X', 0, true, NULL, int4send(4))`,
      [ids.full, t.id],
    );
    await ds.query(`UPDATE tree_versions SET node_count = 1 WHERE id = $1`, [ids.full]);

    await runMigrations(ds);
    const nodes = await ds.query(
      `SELECT n.tree_version_id AS v, n.id, n.code, n.name, n.description, n.depth, n.parent_id, v.node_count,
              v.next_label
         FROM tree_nodes n JOIN tree_versions v ON v.id = n.tree_version_id WHERE n.tree_id = $1 ORDER BY n.code COLLATE "C" DESC`,
      [t.id],
    );
    expect(nodes).toEqual([
      {
        v: ids.empty,
        id: expect.stringMatching(/0{11}5$/),
        code: 'roots',
        name: 'Roots',
        description: 'd',
        depth: 0,
        parent_id: null,
        node_count: 1,
        next_label: 5,
      },
      {
        v: ids.full,
        id: expect.any(String),
        code: 'X',
        name: 'X',
        description: null,
        depth: 0,
        parent_id: null,
        node_count: 1,
        next_label: 4,
      },
    ]);
    expect(
      await ds.query(
        `SELECT tree_node_id, language, name FROM tree_node_translations WHERE tree_version_id = $1`,
        [ids.empty],
      ),
    ).toEqual([{ tree_node_id: nodes[0].id, language: 'mn_MN', name: 'Үндэс' }]);

    await ds.undoLastMigration(); // node-local indexes
    await ds.undoLastMigration();
    expect(await ds.query(`SELECT count(*)::int AS n FROM tree_nodes WHERE tree_id = $1`, [t.id])).toEqual([
      { n: 2 },
    ]);
    await runMigrations(ds);
    expect(await ds.query(`SELECT count(*)::int AS n FROM tree_nodes WHERE tree_id = $1`, [t.id])).toEqual([
      { n: 2 },
    ]);
    await ds.query(`DELETE FROM tree_node_translations WHERE tree_version_id = ANY($1::uuid[])`, [
      Object.values(ids),
    ]);
    await ds.query(`SELECT tree_nodes_drop_partition(v) FROM unnest($1::uuid[]) v`, [Object.values(ids)]);
    await ds.query(`DELETE FROM trees WHERE id = $1`, [t.id]);
  });

  it('gives each node partition its own code, path and depth indexes, and back (1790000700000)', async () => {
    /** Index name -> definition of every partition of tree_nodes, and the parent's constraints. */
    const indexes = async () =>
      Object.fromEntries(
        (
          (await ds.query(
            `SELECT replace(x.indexname, c.relname, 'P') AS name,
                    replace(regexp_replace(x.indexdef, '^.* USING ', ''), c.relname, 'P') AS def
               FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_indexes x ON x.tablename = c.relname
              WHERE i.inhparent = 'tree_nodes'::regclass ORDER BY 1`,
          )) as { name: string; def: string }[]
        ).map((r) => [r.name, r.def]),
      );
    const parentConstraints = async () =>
      (
        (await ds.query(
          `SELECT conname FROM pg_constraint WHERE conrelid = 'tree_nodes'::regclass ORDER BY 1`,
        )) as { conname: string }[]
      ).map((r) => r.conname);
    const [t] = await ds.query(
      `INSERT INTO trees (instance_id, code, name) VALUES ($1, 'ix', 'Ix') RETURNING id`,
      [NIL],
    );
    const vs: string[] = [];
    for (const v of ['v1', 'v2']) {
      const [row] = await ds.query(
        `INSERT INTO tree_versions (tree_id, version, next_label, node_count) VALUES ($1, $2, 1, 1) RETURNING id`,
        [t.id, v],
      );
      vs.push(row.id);
      await ds.query(`SELECT tree_nodes_add_partition($1)`, [row.id]);
      await ds.query(
        `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, depth, leaf, parent_id, path)
         VALUES (tree_node_id($1, 1), $2, $1, 'R', 'Root', 0, true, NULL, int4send(1))`,
        [row.id, t.id],
      );
    }
    const after = {
      P_code_key: 'btree (code)',
      P_depth_idx: 'btree (depth) WITH (deduplicate_items=off)',
      P_parent_idx: 'btree (parent_id) WITH (deduplicate_items=off)',
      P_path_idx: 'btree (path)',
      P_pkey: 'btree (tree_version_id, id)',
    };
    const before = {
      P_code_key: 'btree (tree_version_id, code)',
      P_depth_idx: 'btree (tree_version_id, depth) WITH (deduplicate_items=off)',
      P_parent_idx: 'btree (parent_id) WITH (deduplicate_items=off)',
      P_path_key: 'btree (tree_version_id, path)',
      P_pkey: 'btree (tree_version_id, id)',
    };
    expect(await indexes()).toEqual(after);
    expect(await parentConstraints()).toEqual(['ck_tree_nodes_depth', 'pk_tree_nodes']);

    await ds.undoLastMigration();
    expect(await indexes()).toEqual(before);
    expect(await parentConstraints()).toEqual([
      'ck_tree_nodes_depth',
      'pk_tree_nodes',
      'uq_tree_nodes_code',
      'uq_tree_nodes_path',
    ]);
    // a partition made by the earlier attach has the earlier indexes
    const [{ v3 }] = await ds.query(`SELECT gen_random_uuid() AS v3`);
    await ds.query(`SELECT tree_nodes_add_partition($1)`, [v3]);
    await ds.query(`SELECT tree_nodes_drop_partition($1)`, [v3]);

    await runMigrations(ds);
    expect(await indexes()).toEqual(after);
    expect(await pendingSchemaChanges(ds)).toEqual([]);
    // Codes stay unique per version, reported under the partition's index name; the same code in another version is fine.
    await expect(
      ds.query(
        `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, depth, leaf, parent_id, path)
         VALUES (tree_node_id($1, 2), $2, $1, 'R', 'Again', 0, true, NULL, int4send(2))`,
        [vs[0], t.id],
      ),
    ).rejects.toMatchObject({
      driverError: { code: '23505', constraint: `tree_nodes_${vs[0].replace(/-/g, '')}_code_key` },
    });
    await ds.query(`SELECT tree_nodes_drop_partition(v) FROM unnest($1::uuid[]) v`, [vs]);
    await ds.query(`DELETE FROM trees WHERE id = $1`, [t.id]);
  });

  it('refuses a depth that does not match the path', async () => {
    const [{ v }] = await ds.query(`SELECT gen_random_uuid() AS v`);
    await ds.query(`SELECT tree_nodes_add_partition($1)`, [v]);
    const bad = ds.query(
      `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, depth, path)
       VALUES (gen_random_uuid(), gen_random_uuid(), $1, 'a', 'a', 1, int4send(1))`,
      [v],
    );
    await expect(bad).rejects.toMatchObject({
      driverError: { code: '23514', constraint: 'ck_tree_nodes_depth' },
    });
    await ds.query(`SELECT tree_nodes_drop_partition($1)`, [v]);
  });

  it('refuses a node of a version that has no partition', async () => {
    const bad = ds.query(
      `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, depth, path)
       VALUES (gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'a', 'a', 0, int4send(1))`,
    );
    await expect(bad).rejects.toMatchObject({
      driverError: { message: expect.stringMatching(/no partition/) },
    });
  });
});
