import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

describe('trees and versions over HTTP', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let api: Client;

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url);
    api = client(tree.http, (await treeTokens(auth)).all);
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  const createTree = async (extra: object = {}) => {
    const code = uniq('tree');
    const res = await api.post('/api/v1/trees', { code, name: `Tree ${code}`, ...extra }).expect(201);
    return { code, body: res.body };
  };
  /** 1 when the version has its partition of tree_nodes (attached), 0 when not. */
  const partitionOf = async (versionId: string): Promise<number> => {
    const [{ n }] = await tree.built.db.rows(
      `SELECT count(*)::int AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'tree_nodes'::regclass AND c.relname = tree_nodes_partition($1)`,
      [versionId],
    );
    return n;
  };

  it('creates a tree with its default version v1 and reads it back', async () => {
    const metadata = {
      tags: ['finance'],
      fields: [
        { name: 'owner', value: 'ops' },
        { name: 'rank', value: 3 },
      ],
    };
    const { code, body } = await createTree({ description: 'd', metadata });
    expect(body).toMatchObject({
      code,
      description: 'd',
      metadata,
      enabled: true,
      // v1 comes with its root node (document 3: every version has one).
      aggregations: { versions: 1, nodes: 1, tree_id: body.id },
      links: { versions: `/api/v1/trees/${code}/versions` },
    });
    expect(body.created_date).toBe(body.created_at);
    expect(body.versions).toBeUndefined();

    const read = await api.get(`/api/v1/trees/${code}?expand=all`).expect(200);
    expect(read.body.versions).toHaveLength(1);
    expect(read.body.versions[0]).toMatchObject({ version: 'v1', aggregations: { levels: 1, nodes: 1 } });
    expect(read.body.links.versions).toBeUndefined();

    const picked = await api.get(`/api/v1/trees/${code}?fields=id,code`).expect(200);
    expect(Object.keys(picked.body).sort()).toEqual(['code', 'id']);
  });

  it('answers 400 for bad bodies and query parameters, 409 for a duplicate code, 404 for an unknown tree', async () => {
    const { code } = await createTree();
    expect((await api.post('/api/v1/trees', { code, name: 'again' }).expect(409)).body.code).toBe('conflict');
    const missing = await api.post('/api/v1/trees', { code: uniq('t') }).expect(400);
    expect(missing.body).toMatchObject({ code: 'invalid_request' });
    expect(missing.body.message).toMatch(/name/);
    expect(
      (await api.post('/api/v1/trees', { code: uniq('t'), name: 'x', color: 'red' }).expect(400)).body
        .message,
    ).toMatch(/color/);
    expect(
      (await api.post('/api/v1/trees', { code: uniq('t'), name: 'x', metadata: { colour: 1 } }).expect(400))
        .body.message,
    ).toMatch(/metadata\.colour/);
    expect((await api.post('/api/v1/trees', { code: 'a/b', name: 'x' }).expect(400)).body.message).toMatch(
      /code/,
    );
    await api.get(`/api/v1/trees/${code}?fields=nope`).expect(400);
    await api.get(`/api/v1/trees/${code}?expand=some`).expect(400);
    await api.get('/api/v1/trees?q=nope%20%3D%201').expect(400);
    await api.get('/api/v1/trees?sort=name:sideways').expect(400);
    await api.get('/api/v1/trees?offset=-1').expect(400);
    await api.get('/api/v1/trees?limit=0').expect(400);
    await api.get('/api/v1/trees?total_count=maybe').expect(400);
    expect((await api.get(`/api/v1/trees/${uniq('none')}`).expect(404)).body.code).toBe('not_found');
    // Nothing was written by the refused creates.
    const list = await api.get(
      `/api/v1/trees?q=${encodeURIComponent(`code = '${code}' or name = 'x'`)}&total_count=true`,
    );
    expect(list.body.total_count).toBe(1);
  });

  it('lists trees with q, sort, fields, paging and total_count', async () => {
    const tag = uniq('list');
    for (const n of ['c', 'a', 'b']) {
      await api
        .post('/api/v1/trees', { code: `${tag}-${n}`, name: `${n}-${tag}`, metadata: { tags: [tag] } })
        .expect(201);
    }
    const q = encodeURIComponent(`code like '${tag}-%'`);
    const page = await api
      .get(`/api/v1/trees?q=${q}&sort=name:desc&limit=2&total_count=true&fields=code,name`)
      .expect(200);
    expect(page.body).toMatchObject({ total_count: 3, count: 2, has_more: true, limit: 2, offset: 0 });
    expect(page.body.items).toEqual([
      { code: `${tag}-c`, name: `c-${tag}` },
      { code: `${tag}-b`, name: `b-${tag}` },
    ]);
    const last = await api.get(`/api/v1/trees?q=${q}&sort=name:desc&limit=2&offset=2`).expect(200);
    expect(last.body).toMatchObject({ count: 1, has_more: false });
    expect(last.body.total_count).toBeUndefined();
    const past = await api.get(`/api/v1/trees?q=${q}&offset=10`).expect(200);
    expect(past.body).toMatchObject({ count: 0, has_more: false, items: [] });
    const capped = await api.get(`/api/v1/trees?q=${q}&limit=500`).expect(200);
    expect(capped.body.limit).toBe(100);
    const expanded = await api.get(`/api/v1/trees?q=${q}&expand=all&limit=1`).expect(200);
    expect(expanded.body.items[0].versions).toHaveLength(1);
  });

  it('embeds the versions of every tree and the nodes of every version on a page', async () => {
    const tag = uniq('emb');
    await api.post('/api/v1/trees', { code: `${tag}-a`, name: 'A' }).expect(201);
    await api.post('/api/v1/trees', { code: `${tag}-b`, name: 'B' }).expect(201);
    const base = `/api/v1/trees/${tag}-a/versions`;
    await api.post(`${base}/v1/clone`, { version: 'v2', name: 'Second' }).expect(201);
    const [root2] = (await api.get(`${base}/v2/nodes`).expect(200)).body.items;
    await api.post(`${base}/v2/nodes`, { code: 'leaf', name: 'Leaf', parent_id: root2.id }).expect(201);

    const q = encodeURIComponent(`code like '${tag}-%'`);
    const trees = (await api.get(`/api/v1/trees?q=${q}&sort=code&expand=all`).expect(200)).body.items;
    expect(trees.map((t: { code: string }) => t.code)).toEqual([`${tag}-a`, `${tag}-b`]);
    expect(trees[0].versions.map((v: { version: string }) => v.version)).toEqual(['v1', 'v2']);
    expect(trees[1].versions.map((v: { version: string }) => v.version)).toEqual(['v1']);
    for (const t of trees) for (const v of t.versions) expect(v.tree_id).toBe(t.id);

    const versions = (await api.get(`${base}?expand=all`).expect(200)).body.items;
    expect(versions.map((v: { version: string }) => v.version)).toEqual(['v1', 'v2']);
    expect(versions[0].nodes.map((n: { depth: number }) => n.depth)).toEqual([0]);
    expect(versions[1].nodes.map((n: { code: string }) => n.code)).toEqual([root2.code, 'leaf']);
    expect(versions[1].nodes[0].aggregations.child_nodes).toBe(1);
    for (const v of versions) for (const n of v.nodes) expect(n.tree_version_id).toBe(v.id);
    expect(versions[1].nodes[1].links.self).toBe(`${base}/v2/nodes/${versions[1].nodes[1].id}`);
  });

  it('updates, disables, changes the code and deletes a tree', async () => {
    const { code } = await createTree();
    const upd = await api
      .patch(`/api/v1/trees/${code}`, { name: 'Renamed', enabled: false, description: null })
      .expect(200);
    expect(upd.body).toMatchObject({ name: 'Renamed', enabled: false, description: null });
    await api.patch(`/api/v1/trees/${code}`, { name: null }).expect(400);
    await api.patch(`/api/v1/trees/${uniq('none')}`, { name: 'x' }).expect(404);

    const other = await createTree();
    await api.post(`/api/v1/trees/${code}/change-code`, { new_code: other.code }).expect(409);
    const newCode = uniq('renamed');
    const changed = await api.post(`/api/v1/trees/${code}/change-code`, { new_code: newCode }).expect(200);
    expect(changed.body).toMatchObject({ code: newCode, aggregations: { versions: 1 } });
    await api.get(`/api/v1/trees/${code}`).expect(404);
    await api.get(`/api/v1/trees/${newCode}/versions/v1`).expect(200);

    await api.delete(`/api/v1/trees/${newCode}`).expect(204);
    await api.get(`/api/v1/trees/${newCode}`).expect(404);
    await api.delete(`/api/v1/trees/${newCode}`).expect(404);
  });

  it('creates versions with the next free vN, refuses duplicates, renames, clones and deletes them', async () => {
    const { code } = await createTree();
    const base = `/api/v1/trees/${code}/versions`;
    const v2 = await api.post(base, { name: 'Second' }).expect(201);
    expect(v2.body).toMatchObject({ version: 'v2', name: 'Second', aggregations: { levels: 1, nodes: 1 } });
    await api.post(base, { version: 'v7' }).expect(201);
    expect((await api.post(base, {}).expect(201)).body.version).toBe('v8');
    expect((await api.post(base, { version: 'v2' }).expect(409)).body.code).toBe('conflict');
    await api.post(`/api/v1/trees/${uniq('none')}/versions`, {}).expect(404);

    // A second root in v2 (beside the one v2 was created with), then clone v2 to "draft": nodes, node translations
    // and version translations follow.
    const node = (await api.post(`${base}/v2/nodes`, { code: 'A', name: 'A' }).expect(201)).body;
    await api.post(`${base}/v2/nodes/${node.id}/translations`, { language: 'mn_MN', name: 'А' }).expect(201);
    await api.post(`${base}/v2/translations`, { language: 'mn_MN', name: 'Хоёр' }).expect(201);
    const draft = await api.post(`${base}/v2/clone`, { version: 'draft', name: 'Draft' }).expect(201);
    expect(draft.body).toMatchObject({
      version: 'draft',
      name: 'Draft',
      aggregations: { nodes: 2, levels: 1 },
    });
    const copied = await api.get(`${base}/draft/nodes`).expect(200);
    expect(copied.body.items.map((n: { code: string }) => n.code)).toEqual([code, 'A']);
    const copiedA = copied.body.items[1];
    expect(copiedA).toMatchObject({ code: 'A', name: 'A' });
    expect(copiedA.id).not.toBe(node.id);
    const mn = await api.get(`${base}/draft/nodes/${copiedA.id}`).set('Accept-Language', 'mn-MN').expect(200);
    expect(mn.body.name).toBe('А');
    expect((await api.get(`${base}/draft/translations/mn_MN`).expect(200)).body.name).toBe('Хоёр');
    // The clone's partition was built and attached with the parent's two indexes (primary key, parent) adopted,
    // none twice, beside its own three (code, path, depth), and takes new nodes under the copied ones.
    const [indexes] = await tree.built.db.rows(
      `SELECT count(*)::int AS n, count(DISTINCT inh.inhparent)::int AS adopted
         FROM pg_index x JOIN pg_inherits inh ON inh.inhrelid = x.indexrelid
        WHERE x.indrelid = tree_nodes_partition($1)::regclass`,
      [draft.body.id],
    );
    expect(indexes).toEqual({ n: 2, adopted: 2 });
    const [{ all }] = await tree.built.db.rows(
      `SELECT count(*)::int AS all FROM pg_index WHERE indrelid = tree_nodes_partition($1)::regclass`,
      [draft.body.id],
    );
    expect(all).toBe(5);
    const added = await api
      .post(`${base}/draft/nodes`, { code: 'B', name: 'B', parent_id: copiedA.id })
      .expect(201);
    await api.post(`${base}/draft/nodes`, { code: 'B', name: 'B again' }).expect(409);
    await api.post(`${base}/draft/nodes`, { code: 'C', name: 'C', parent_id: node.id }).expect(400);
    await api.delete(`${base}/draft/nodes/${added.body.id}`).expect(204);
    await api.post(`${base}/v2/clone`, { version: 'draft', name: 'again' }).expect(409);
    await api.post(`${base}/nope/clone`, { version: 'x', name: 'x' }).expect(404);
    await api.post(`${base}/v2/clone`, { name: 'no version' }).expect(400);

    await api.post(`${base}/draft/change-code`, { new_version: 'v2' }).expect(409);
    const renamed = await api.post(`${base}/draft/change-code`, { new_version: 'final' }).expect(200);
    expect(renamed.body).toMatchObject({ version: 'final', aggregations: { nodes: 2 } });
    expect((await api.get(`${base}/final/nodes`).expect(200)).body.items).toHaveLength(2);

    const upd = await api.patch(`${base}/final`, { enabled: false, metadata: { tags: ['x'] } }).expect(200);
    expect(upd.body).toMatchObject({ enabled: false, metadata: { tags: ['x'] } });
    await api.patch(`${base}/final`, { metadata: { fields: [] } }).expect(400); // versions have no metadata.fields

    const list = await api.get(`${base}?sort=version:asc&fields=version&total_count=true`).expect(200);
    expect(list.body.items.map((v: { version: string }) => v.version)).toEqual([
      'final',
      'v1',
      'v2',
      'v7',
      'v8',
    ]);
    expect(list.body.total_count).toBe(5);

    expect(await partitionOf(renamed.body.id)).toBe(1);
    await api.delete(`${base}/final`).expect(204);
    await api.get(`${base}/final/nodes`).expect(404);
    const rows = await tree.built.db.rows(
      `SELECT count(*)::int AS n FROM tree_nodes WHERE tree_version_id = $1`,
      [renamed.body.id],
    );
    expect(rows[0].n).toBe(0);
    // Its partition went with it.
    expect(await partitionOf(renamed.body.id)).toBe(0);
    for (const v of ['v2', 'v7', 'v8']) await api.delete(`${base}/${v}`).expect(204);
    expect((await api.delete(`${base}/v1`).expect(409)).body.message).toMatch(/at least one version/);
    await api.delete(`${base}/v1000`).expect(404);
  });

  it('clones a whole tree with versions, nodes and translations; deleting it leaves no rows behind', async () => {
    const { code } = await createTree({ description: 'orig', metadata: { tags: ['a'] } });
    await api.post(`/api/v1/trees/${code}/translations`, { language: 'mn_MN', name: 'Мод' }).expect(201);
    const root = (
      await api.post(`/api/v1/trees/${code}/versions/v1/nodes`, { code: 'R', name: 'Root' }).expect(201)
    ).body;
    await api
      .post(`/api/v1/trees/${code}/versions/v1/nodes`, { code: 'C', name: 'Child', parent_id: root.id })
      .expect(201);
    await api.post(`/api/v1/trees/${code}/versions`, { version: 'v2' }).expect(201);

    const copyCode = uniq('copy');
    const copy = await api.post(`/api/v1/trees/${code}/clone`, { code: copyCode, name: 'Copy' }).expect(201);
    expect(copy.body).toMatchObject({
      code: copyCode,
      name: 'Copy',
      description: 'orig',
      metadata: { tags: ['a'] },
      // v1: its root, R and C; v2: its root.
      aggregations: { versions: 2, nodes: 4 },
    });
    const mn = await api.get(`/api/v1/trees/${copyCode}`).set('Accept-Language', 'mn_MN').expect(200);
    expect(mn.body.name).toBe('Мод');
    const nodes = await api.get(`/api/v1/trees/${copyCode}/versions/v1/nodes?expand=all`).expect(200);
    expect(nodes.body.items.map((n: { code: string }) => n.code)).toEqual([code, 'R', 'C']);
    expect(nodes.body.items[1].child_nodes).toHaveLength(1);
    expect(nodes.body.items[2].parent_id).toBe(nodes.body.items[1].id);
    await api.post(`/api/v1/trees/${code}/clone`, { code: copyCode, name: 'Copy' }).expect(409);
    await api.post(`/api/v1/trees/${uniq('none')}/clone`, { code: uniq('x'), name: 'x' }).expect(404);

    const id = copy.body.id;
    const copiedVersions: { id: string }[] = await tree.built.db.rows(
      `SELECT id FROM tree_versions WHERE tree_id = $1`,
      [id],
    );
    for (const v of copiedVersions) expect(await partitionOf(v.id)).toBe(1);
    await api.delete(`/api/v1/trees/${copyCode}`).expect(204);
    for (const v of copiedVersions) expect(await partitionOf(v.id)).toBe(0);
    const [left] = await tree.built.db.rows(
      `SELECT (SELECT count(*) FROM tree_nodes WHERE tree_id = $1)::int AS nodes,
              (SELECT count(*) FROM tree_versions WHERE tree_id = $1)::int AS versions,
              (SELECT count(*) FROM tree_translations WHERE tree_id = $1)::int AS translations`,
      [id],
    );
    expect(left).toEqual({ nodes: 0, versions: 0, translations: 0 });
    // The original is untouched.
    expect((await api.get(`/api/v1/trees/${code}`).expect(200)).body.aggregations).toMatchObject({
      versions: 2,
      nodes: 4,
    });
  });
});
