import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { NO_PROBLEMS, treeProblems } from './support/consistency.js';
import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

interface Node {
  id: string;
  code: string;
  name: string;
  depth: number;
  leaf: boolean;
  parent_id: string | null;
  [k: string]: unknown;
}

describe('tree nodes over HTTP', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let api: Client;
  let token: string;

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url);
    token = (await treeTokens(auth)).all;
    api = client(tree.http, token);
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  /**
   * A new tree; returns the base path of its v1 nodes, and helpers. v1 starts with its own root node (code: the tree
   * code, label 1, so first in depth-first order); the tests add their nodes beside or below it.
   */
  async function version() {
    const code = uniq('nodes');
    await api.post('/api/v1/trees', { code, name: code }).expect(201);
    const base = `/api/v1/trees/${code}/versions/v1/nodes`;
    const [{ id: versionId }] = await tree.built.db.rows(
      `SELECT v.id FROM tree_versions v JOIN trees t ON t.id = v.tree_id WHERE t.code = $1`,
      [code],
    );
    const add = async (nodeCode: string, parent?: string): Promise<Node> =>
      (await api.post(base, { code: nodeCode, name: `Name ${nodeCode}`, parent_id: parent }).expect(201))
        .body;
    const get = async (id: string): Promise<Node> => (await api.get(`${base}/${id}`).expect(200)).body;
    return { code, base, versionId: versionId as string, add, get };
  }

  it('creates roots and children: depth, leaf, aggregations, links and embedded child_nodes', async () => {
    const v = await version();
    const root = await v.add('R');
    expect(root).toMatchObject({ depth: 0, leaf: true, parent_id: null, aggregations: { child_nodes: 0 } });
    expect(root.links).toMatchObject({ child_nodes: expect.stringContaining('/nodes?q=') });
    const a = await v.add('A', root.id);
    const b = await v.add('B', root.id);
    await v.add('A1', a.id);
    expect(a).toMatchObject({ depth: 1, parent_id: root.id, tree_version_id: v.versionId });

    const read = await api.get(`${v.base}/${root.id}?expand=all`).expect(200);
    expect(read.body).toMatchObject({ leaf: false, aggregations: { child_nodes: 2, tree_node_id: root.id } });
    expect(read.body.child_nodes.map((c: Node) => c.code)).toEqual(['A', 'B']);
    expect(Object.keys(read.body.child_nodes[0]).sort()).toEqual(
      [
        'code',
        'created_at',
        'created_by',
        'depth',
        'description',
        'enabled',
        'id',
        'leaf',
        'metadata',
        'name',
        'updated_at',
        'updated_by',
      ].sort(),
    );
    expect(read.body.links.child_nodes).toBeUndefined();
    expect((await v.get(b.id)).leaf).toBe(true);

    const ver = await api.get(`/api/v1/trees/${v.code}/versions/v1?expand=all`).expect(200);
    expect(ver.body.aggregations).toMatchObject({ nodes: 5, levels: 3 });
    expect(ver.body.nodes.map((n: Node) => n.code)).toEqual([v.code, 'R', 'A', 'A1', 'B']);
    const t = await api.get(`/api/v1/trees/${v.code}`).expect(200);
    expect(t.body.aggregations.nodes).toBe(5);
  });

  it('answers 400 for bad ids, bodies and parents, 404 for unknown nodes, 409 for duplicate codes', async () => {
    const v = await version();
    const other = await version();
    const foreign = await other.add('F');
    const a = await v.add('A');
    await api.get(`${v.base}/not-a-uuid`).expect(400);
    await api.get(`${v.base}/${randomUUID()}`).expect(404);
    await api.get(`/api/v1/trees/${v.code}/versions/v9/nodes`).expect(404);
    expect((await api.post(v.base, { code: 'A', name: 'dup' }).expect(409)).body.message).toMatch(/code/);
    expect((await api.post(v.base, { name: 'no code' }).expect(400)).body.message).toMatch(/code/);
    expect(
      (await api.post(v.base, { code: 'X', name: 'x', parent_id: 'nope' }).expect(400)).body.message,
    ).toMatch(/parent_id/);
    expect(
      (await api.post(v.base, { code: 'X', name: 'x', parent_id: foreign.id }).expect(400)).body.message,
    ).toMatch(/another tree version/);
    await api.post(v.base, { code: 'X', name: 'x', parent_id: randomUUID() }).expect(400);
    await api.post(v.base, { code: 'X', name: 'x', depth: 3 }).expect(400);
    await api
      .post(v.base, { code: 'X', name: 'x', metadata: { fields: [{ name: 'n', value: {} }] } })
      .expect(400);
    await api.patch(`${v.base}/${a.id}`, { parent_id: foreign.id }).expect(400);
    await api.patch(`${v.base}/${randomUUID()}`, { name: 'x' }).expect(404);
    await api.patch(`${v.base}/${a.id}`, { leaf: false }).expect(400);
    const b = await v.add('B');
    await api.patch(`${v.base}/${b.id}`, { code: 'A' }).expect(409);
    const renamed = await api
      .patch(`${v.base}/${b.id}`, { code: 'B2', name: 'Bee', enabled: false })
      .expect(200);
    expect(renamed.body).toMatchObject({ code: 'B2', name: 'Bee', enabled: false });
    expect(await treeProblems(tree.built.db, v.versionId)).toEqual(NO_PROBLEMS);
  });

  it('moves subtrees with PATCH parent_id: depths follow, leaf flags follow, cycles are 409', async () => {
    const v = await version();
    const a = await v.add('A');
    const b = await v.add('B', a.id);
    const c = await v.add('C', b.id);
    const d = await v.add('D', c.id);
    const e = await v.add('E');

    const moved = await api.patch(`${v.base}/${b.id}`, { parent_id: e.id }).expect(200);
    expect(moved.body).toMatchObject({ parent_id: e.id, depth: 1 });
    expect((await v.get(d.id)).depth).toBe(3);
    expect((await v.get(a.id)).leaf).toBe(true);
    expect((await v.get(e.id)).leaf).toBe(false);

    expect((await api.patch(`${v.base}/${b.id}`, { parent_id: d.id }).expect(409)).body.message).toMatch(
      /descendant/,
    );
    await api.patch(`${v.base}/${b.id}`, { parent_id: b.id }).expect(409);
    expect((await v.get(b.id)).parent_id).toBe(e.id); // unchanged

    const root = await api.patch(`${v.base}/${c.id}`, { parent_id: null }).expect(200);
    expect(root.body).toMatchObject({ parent_id: null, depth: 0 });
    expect((await v.get(d.id)).depth).toBe(1);
    expect((await v.get(b.id)).leaf).toBe(true);
    expect(await treeProblems(tree.built.db, v.versionId)).toEqual(NO_PROBLEMS);
  });

  it('deletes leaves, refuses parents without cascade, deletes subtrees with cascade', async () => {
    const v = await version();
    const a = await v.add('A');
    const b = await v.add('B', a.id);
    const c = await v.add('C', b.id);
    await v.add('D', b.id);
    await api.post(`${v.base}/${c.id}/translations`, { language: 'mn_MN', name: 'Си' }).expect(201);

    expect((await api.delete(`${v.base}/${b.id}`).expect(409)).body.message).toMatch(/cascade/);
    await api.delete(`${v.base}/${b.id}?cascade=maybe`).expect(400);
    await api.delete(`${v.base}/${c.id}`).expect(204);
    await api.delete(`${v.base}/${c.id}`).expect(404);
    await api.delete(`${v.base}/${b.id}?cascade=true`).expect(204);
    expect((await v.get(a.id)).leaf).toBe(true);
    const list = await api.get(`${v.base}?total_count=true`).expect(200);
    expect(list.body.items.map((n: Node) => n.code)).toEqual([v.code, 'A']);
    const [{ n }] = await tree.built.db.rows(
      `SELECT count(*)::int AS n FROM tree_node_translations WHERE tree_version_id = $1`,
      [v.versionId],
    );
    expect(n).toBe(0);
    expect(await treeProblems(tree.built.db, v.versionId)).toEqual(NO_PROBLEMS);
  });

  it('clones a node, and with deep=true its subtree with codes made unique', async () => {
    const v = await version();
    const a = await v.add('A');
    const b = await v.add('B', a.id);
    const c = await v.add('C', b.id);
    await api.post(`${v.base}/${c.id}/translations`, { language: 'mn_MN', name: 'Си' }).expect(201);

    const flat = await api.post(`${v.base}/${b.id}/clone`, { code: 'B-flat', name: 'Flat' }).expect(201);
    expect(flat.body).toMatchObject({ code: 'B-flat', name: 'Flat', parent_id: a.id, depth: 1, leaf: true });

    const deep = await api.post(`${v.base}/${b.id}/clone?deep=true`, {
      code: 'B-deep',
      name: 'Deep',
      parent_id: null,
    });
    expect(deep.status).toBe(201);
    expect(deep.body).toMatchObject({ code: 'B-deep', parent_id: null, depth: 0, leaf: false });
    const below = await api
      .get(`${v.base}/${deep.body.id}/descendants`)
      .set('Accept-Language', 'mn-MN')
      .expect(200);
    expect(below.body.items).toEqual([expect.objectContaining({ code: 'C-copy-1', name: 'Си', depth: 1 })]);

    await api.post(`${v.base}/${b.id}/clone`, { code: 'A', name: 'dup' }).expect(409);
    await api.post(`${v.base}/${b.id}/clone`, { name: 'no code' }).expect(400);
    await api.post(`${v.base}/${randomUUID()}/clone`, { code: 'Z', name: 'z' }).expect(404);
    await api.post(`${v.base}/${b.id}/clone?deep=yes`, { code: 'Z', name: 'z' }).expect(400);
    expect(await treeProblems(tree.built.db, v.versionId)).toEqual(NO_PROBLEMS);
  });

  it('lists nodes depth-first with q, sort, fields, paging edges and total_count; descendants too', async () => {
    const v = await version();
    const r = await v.add('R');
    const x = await v.add('X', r.id);
    const y = await v.add('Y', r.id);
    await v.add('X1', x.id);
    const y1 = await v.add('Y1', y.id);
    await v.add('X2', x.id);

    const all = await api.get(`${v.base}?total_count=true&fields=code,depth`).expect(200);
    expect(all.body).toMatchObject({ total_count: 7, count: 7, has_more: false, limit: 10, offset: 0 });
    expect(all.body.items).toEqual([
      { code: v.code, depth: 0 },
      { code: 'R', depth: 0 },
      { code: 'X', depth: 1 },
      { code: 'X1', depth: 2 },
      { code: 'X2', depth: 2 },
      { code: 'Y', depth: 1 },
      { code: 'Y1', depth: 2 },
    ]);
    const leaves = await api
      .get(`${v.base}?q=${encodeURIComponent("leaf = true and code like 'X%'")}&sort=code:desc&fields=code`)
      .expect(200);
    expect(leaves.body.items).toEqual([{ code: 'X2' }, { code: 'X1' }]);
    const children = await api.get(
      `${v.base}?q=${encodeURIComponent(`parent_id = '${x.id}'`)}&total_count=true`,
    );
    expect(children.body.total_count).toBe(2);
    const page = await api.get(`${v.base}?limit=2&offset=5`).expect(200);
    expect(page.body).toMatchObject({ count: 2, has_more: false });
    expect((await api.get(`${v.base}?limit=2&offset=4`).expect(200)).body.has_more).toBe(true);
    expect((await api.get(`${v.base}?offset=99`).expect(200)).body).toMatchObject({ count: 0, items: [] });
    expect((await api.get(`${v.base}?limit=1000`).expect(200)).body.limit).toBe(100);
    await api.get(`${v.base}?q=${encodeURIComponent('depth >')}`).expect(400);
    await api.get(`${v.base}?q=${encodeURIComponent('x'.repeat(2001))}`).expect(400);
    await api.get(`${v.base}?sort=path`).expect(400);
    await api.get(`${v.base}?fields=path`).expect(400);

    const desc = await api.get(`${v.base}/${r.id}/descendants?total_count=true&fields=code`).expect(200);
    expect(desc.body.total_count).toBe(5);
    expect(desc.body.items.map((n: Node) => n.code)).toEqual(['X', 'X1', 'X2', 'Y', 'Y1']);
    const descPage = await api.get(`${v.base}/${r.id}/descendants?offset=1&limit=2&fields=code`).expect(200);
    expect(descPage.body).toMatchObject({
      count: 2,
      has_more: true,
      items: [{ code: 'X1' }, { code: 'X2' }],
    });
    const filtered = await api.get(
      `${v.base}/${r.id}/descendants?q=${encodeURIComponent('depth = 1')}&fields=code`,
    );
    expect(filtered.body.items).toEqual([{ code: 'X' }, { code: 'Y' }]);
    await api.get(`${v.base}/${randomUUID()}/descendants`).expect(404);
    await api.get(`${v.base}/bad/descendants`).expect(400);

    // The whole subtree as NDJSON, in the same order.
    const ndjson = async (query: string, language?: string) => {
      const req = request(tree.http)
        .get(`${v.base}/${r.id}/descendants${query}`)
        .set('Authorization', `Bearer ${token}`)
        .set('Accept', 'application/x-ndjson');
      if (language) req.set('Accept-Language', language);
      const res = await req.buffer(true).parse((stream, cb) => {
        let text = '';
        stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
        stream.on('end', () => cb(null, text));
      });
      expect({ status: res.status, body: res.status === 200 ? '' : res.body }).toEqual({
        status: 200,
        body: '',
      });
      expect(res.headers['content-type']).toMatch(/application\/x-ndjson/);
      return (res.body as string)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    };
    // Whole records: the same as the JSON list, also translated.
    await api.post(`${v.base}/${y.id}/translations`, { language: 'mn_MN', name: 'Уай' }).expect(201);
    // Texts JSON must escape, metadata, a translated description: the stream writes them as the JSON list does.
    const tricky = 'q " b \\ t \t n \n r \r bel \u0007 us \u001f del \u007f é 😀 \u2028 </script>';
    await api
      .patch(`${v.base}/${y1.id}`, {
        name: tricky,
        description: "it's",
        metadata: { tags: ['x"y', tricky], fields: [{ name: 'n\\', value: 1.5 }] },
      })
      .expect(200);
    await api
      .post(`${v.base}/${y1.id}/translations`, { language: 'mn_MN', name: 'Уай 1', description: tricky })
      .expect(201);
    for (const language of [undefined, 'mn-MN']) {
      const json = api.get(`${v.base}/${r.id}/descendants`);
      if (language) json.set('Accept-Language', language);
      expect(await ndjson('', language)).toEqual((await json.expect(200)).body.items);
    }
    const lines = await ndjson('?fields=code,depth&limit=1&offset=2');
    expect(lines).toEqual([
      { code: 'X', depth: 1 },
      { code: 'X1', depth: 2 },
      { code: 'X2', depth: 2 },
      { code: 'Y', depth: 1 },
      { code: 'Y1', depth: 2 },
    ]);
    // q (its parameters follow the stream's own), fields with links and aggregations, translated.
    const query = `?q=${encodeURIComponent("depth = 2 and code != 'X2'")}&fields=name,links,aggregations`;
    const filtered2 = api.get(`${v.base}/${r.id}/descendants${query}`).set('Accept-Language', 'mn-MN');
    const streamed = await ndjson(query, 'mn-MN');
    expect(streamed).toEqual((await filtered2.expect(200)).body.items);
    expect(streamed.map((n: Node) => n.name)).toEqual(['Name X1', 'Уай 1']);
  });

  it('honours Accept-Language with fallback to the base name', async () => {
    const v = await version();
    const a = await v.add('A');
    const b = await v.add('B', a.id);
    await api
      .post(`${v.base}/${a.id}/translations`, { language: 'mn_MN', name: 'Эй', description: 'тайлбар' })
      .expect(201);
    await api.post(`${v.base}/${a.id}/translations`, { language: 'en_UK', name: 'Ay' }).expect(201);
    for (const header of ['mn-MN', 'mn_MN', 'fr;q=1, mn-MN;q=0.5']) {
      const res = await api.get(`${v.base}/${a.id}?expand=all`).set('Accept-Language', header).expect(200);
      expect(res.body).toMatchObject({ name: 'Эй', description: 'тайлбар' });
      expect(res.body.child_nodes[0].name).toBe('Name B'); // no translation: base name
    }
    expect((await api.get(`${v.base}/${a.id}`).set('Accept-Language', 'en-GB').expect(200)).body.name).toBe(
      'Ay',
    );
    expect((await api.get(`${v.base}/${a.id}`).set('Accept-Language', 'de-DE').expect(200)).body.name).toBe(
      'Name A',
    );
    expect((await api.get(`${v.base}/${a.id}`).expect(200)).body.name).toBe('Name A');
    const list = await api.get(`${v.base}?fields=code,name`).set('Accept-Language', 'mn-MN').expect(200);
    expect(list.body.items).toEqual([
      { code: v.code, name: v.code },
      { code: 'A', name: 'Эй' },
      { code: 'B', name: 'Name B' },
    ]);
    expect(b.depth).toBe(1);
  });
});
