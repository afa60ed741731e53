import type { Db } from '@gatehouse/db';
import type { TestDatabase } from '@gatehouse/testing';
import pg from 'pg';
import { DEFAULT_INSTANCE_KEY as I } from '../src/common/instance.js';
import { NO_PROBLEMS, treeProblems } from './support/consistency.js';
import { openTreeDb, treeTestDatabase } from './support/db.js';
import { presentedNodes, presentedVersions } from './support/presented.js';

const actor = { id: null };
const PARTITION = /tree_nodes_[0-9a-f]{32}/g;

/**
 * With many versions (one partition of tree_nodes each), every statement the services send on tree_nodes must be
 * planned against at most one partition: a statement that names its version only through a join or a correlated
 * subquery would plan (and lock) all of them.
 */
describe('tree_nodes partitions with many versions', () => {
  let db: TestDatabase;
  let ds: Db;
  let nodes: ReturnType<typeof presentedNodes>;
  let versions: ReturnType<typeof presentedVersions>;
  const sent: { text: string; params: unknown[] }[] = [];
  let restore = () => undefined as unknown;

  beforeAll(async () => {
    db = await treeTestDatabase();
    ds = openTreeDb(db.url);
    nodes = presentedNodes(ds);
    versions = presentedVersions(ds);
    // every statement of the services reaches PostgreSQL through a pg client of the Db's pool
    const { query } = pg.Client.prototype;
    restore = () => Object.assign(pg.Client.prototype, { query });
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [first, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
      if (typeof first === 'string') sent.push({ text: first, params: values ?? [] });
      else if (first && typeof first === 'object')
        sent.push({ text: first.text, params: first.values ?? [] });
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
  });
  afterAll(async () => {
    restore();
    await ds?.close();
    await db?.drop();
  });

  it('plans every statement of the services on one partition, and the tree stays consistent', async () => {
    const [tree] = await ds.rows(
      `INSERT INTO trees (instance_id, code, name) VALUES ($1, 'many', 'Many') RETURNING id`,
      [I],
    );
    for (let i = 1; i <= 40; i++) {
      await versions.create(I, 'many', { version: `v${i}` }, actor, {});
    }
    const parts = await ds.rows(
      `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'tree_nodes'::regclass`,
    );
    expect(parts[0].n).toBeGreaterThanOrEqual(40);

    sent.length = 0;
    const root = await nodes.write.create(I, 'many', 'v7', { code: 'R', name: 'Root' }, actor, {});
    const a = await nodes.write.create(
      I,
      'many',
      'v7',
      { code: 'A', name: 'A', parent_id: root.id },
      actor,
      {},
    );
    const b = await nodes.write.create(
      I,
      'many',
      'v7',
      { code: 'B', name: 'B', parent_id: root.id },
      actor,
      {},
    );
    await nodes.write.create(I, 'many', 'v7', { code: 'C', name: 'C', parent_id: a.id }, actor, {});
    await nodes.write.update(I, 'many', 'v7', a.id!, { parent_id: b.id }, actor, {});
    await nodes.write.update(I, 'many', 'v7', a.id!, { name: 'A2', parent_id: root.id }, actor, {});
    await nodes.read.get(I, 'many', 'v7', root.id!, { expand: 'all' });
    await nodes.read.list(I, 'many', 'v7', { expand: 'all', total_count: 'true' });
    await nodes.read.descendants(I, 'many', 'v7', root.id!, { total_count: 'true' });
    await nodes.write.clone(I, 'many', 'v7', a.id!, { code: 'A3', name: 'A3' }, true, actor, {});
    await nodes.write.remove(I, 'many', 'v7', b.id!, false);
    await versions.get(I, 'many', 'v7', { expand: 'all' });
    await versions.list(I, 'many', { limit: '100' });
    await versions.clone(I, 'many', 'v7', { version: 'copy', name: 'Copy' }, actor, {});
    await versions.remove(I, 'many', 'v8');
    // A parent from another version (found through tree_node_version) and an unknown one: 400 either way.
    const copy = await nodes.read.list(I, 'many', 'copy', {});
    await expect(
      nodes.write.update(I, 'many', 'v7', a.id!, { parent_id: copy.items[0].id! }, actor, {}),
    ).rejects.toMatchObject({ message: expect.stringMatching(/another tree version/) });
    await expect(
      nodes.write.create(I, 'many', 'v7', { code: 'X', name: 'X', parent_id: copy.items[0].id! }, actor, {}),
    ).rejects.toMatchObject({ message: expect.stringMatching(/another tree version/) });

    const onNodes = sent.filter((s) => /\btree_nodes\b/.test(s.text) && !/^\s*(BEGIN|COMMIT)/i.test(s.text));
    expect(onNodes.length).toBeGreaterThan(20);
    for (const s of onNodes) {
      const [plan] = await ds.rows(`EXPLAIN (FORMAT JSON) ${s.text}`, s.params);
      const scanned = new Set(JSON.stringify(plan['QUERY PLAN']).match(PARTITION) ?? []);
      if (scanned.size > 1) throw new Error(`${scanned.size} partitions in the plan of: ${s.text}`);
    }
    for (const v of ['v7', 'copy']) {
      const [{ id }] = await ds.rows(`SELECT id FROM tree_versions WHERE tree_id = $1 AND version = $2`, [
        tree.id,
        v,
      ]);
      expect(await treeProblems(ds, id)).toEqual(NO_PROBLEMS);
    }
    // Five as built above, and the root v7 was created with.
    expect((await versions.get(I, 'many', 'copy', {})).aggregations).toMatchObject({ nodes: 6, levels: 3 });
  });
});
