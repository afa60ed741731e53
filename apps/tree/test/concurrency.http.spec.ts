import { NO_PROBLEMS, treeProblems } from './support/consistency.js';
import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

/**
 * Many clients move subtrees, insert, clone and delete in one version at the same time. Whatever the interleaving,
 * the tree stays a tree: every depth equals its path length and its parent_id distance to a root, no cycles, leaf
 * flags right, node count right. The only refusals allowed are the 409s the rules call for.
 */
describe('concurrent structural changes over HTTP', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let api: Client;

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url, { DB_POOL_MAX: '20' });
    api = client(tree.http, (await treeTokens(auth)).all);
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  it('keeps one version consistent under parallel moves, inserts, clones and deletes', async () => {
    const code = uniq('conc');
    await api.post('/api/v1/trees', { code, name: code }).expect(201);
    const base = `/api/v1/trees/${code}/versions/v1/nodes`;
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const parent = i === 0 ? undefined : ids[(i * 7919) % ids.length];
      ids.push(
        (await api.post(base, { code: `N${i}`, name: `N${i}`, parent_id: parent }).expect(201)).body.id,
      );
    }
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pick = () => ids[rand(ids.length)];
    const ops: Promise<{ status: number; body: { code?: string; message?: string } }>[] = [];
    for (let i = 0; i < 400; i++) {
      const kind = i % 10;
      if (kind < 6) ops.push(api.patch(`${base}/${pick()}`, { parent_id: rand(15) === 0 ? null : pick() }));
      else if (kind < 8) ops.push(api.post(base, { code: `P${i}`, name: 'p', parent_id: pick() }));
      else if (kind === 8) {
        // A few deep clones (each may double the tree), the rest shallow.
        const deep = i % 100 === 8 ? '?deep=true' : '';
        ops.push(api.post(`${base}/${pick()}/clone${deep}`, { code: `C${i}`, name: 'c', parent_id: pick() }));
      } else ops.push(api.delete(`${base}/${pick()}`));
    }
    const results = await Promise.all(ops);
    const unexpected = results.filter(
      (r) =>
        ![200, 201, 204].includes(r.status) &&
        // A cycle or self-parenting move, deleting a node with children, or a node deleted meanwhile.
        !(r.status === 409 && /descendant|own parent|children/.test(r.body.message ?? '')) &&
        !(r.status === 404 && r.body.code === 'not_found') &&
        !(r.status === 400 && /parent_id/.test(r.body.message ?? '')),
    );
    expect(unexpected.map((r) => [r.status, r.body])).toEqual([]);
    const okMoves = results.filter((r, i) => i % 10 < 6 && r.status === 200).length;
    expect(okMoves).toBeGreaterThan(50);

    const [{ id: versionId }] = await tree.built.db.rows(
      `SELECT v.id FROM tree_versions v JOIN trees t ON t.id = v.tree_id WHERE t.code = $1`,
      [code],
    );
    expect(await treeProblems(tree.built.db, versionId)).toEqual(NO_PROBLEMS);
    const listed = await api.get(`${base}?total_count=true&limit=1`).expect(200);
    const [{ n }] = await tree.built.db.rows(
      `SELECT count(*)::int AS n FROM tree_nodes WHERE tree_version_id = $1`,
      [versionId],
    );
    expect(listed.body.total_count).toBe(n);
  });
});
