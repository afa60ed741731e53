import request from 'supertest';
import { NO_PROBLEMS, treeProblems } from './support/consistency.js';
import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

interface Node {
  id: string;
  code: string;
  name: string;
  description: string | null;
  depth: number;
  leaf: boolean;
  parent_id: string | null;
  [k: string]: unknown;
}

/**
 * Document 3: each tree version contains at least one root node. A new version gets one, the last root cannot be
 * deleted nor moved under another node, an import cannot leave a version without one, and clones keep theirs.
 */
describe('every tree version has a root node', () => {
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

  const nodesOf = async (path: string): Promise<Node[]> =>
    (await api.get(`${path}/nodes?limit=100&sort=code`).expect(200)).body.items;
  const roots = async (path: string) => (await nodesOf(path)).filter((n) => n.parent_id === null);
  const versionId = async (path: string) => (await api.get(path).expect(200)).body.id as string;

  async function newTree(extra: Record<string, unknown> = {}) {
    const code = uniq('roots');
    const name = `Tree ${code}`;
    await api.post('/api/v1/trees', { code, name, ...extra }).expect(201);
    return { code, name, base: `/api/v1/trees/${code}/versions` };
  }

  it('a new tree: its version v1 has one root named after the tree', async () => {
    const t = await newTree({ description: 'what it is' });
    const nodes = await nodesOf(`${t.base}/v1`);
    expect(nodes).toEqual([
      expect.objectContaining({
        code: t.code,
        name: t.name,
        description: 'what it is',
        depth: 0,
        leaf: true,
        parent_id: null,
        enabled: true,
      }),
    ]);
    const version = (await api.get(`${t.base}/v1`).expect(200)).body;
    expect(version.aggregations).toMatchObject({ nodes: 1, levels: 1 });
    const read = (await api.get(`/api/v1/trees/${t.code}`).expect(200)).body;
    expect(read.aggregations).toMatchObject({ versions: 1, nodes: 1 });
    expect(await treeProblems(tree.built.db, version.id)).toEqual(NO_PROBLEMS);
  });

  it('a new version: a root named after the tree as it is now, with the tree translations', async () => {
    const t = await newTree();
    await api.patch(`/api/v1/trees/${t.code}`, { name: 'Renamed', description: 'now' }).expect(200);
    await api
      .post(`/api/v1/trees/${t.code}/translations`, {
        language: 'mn_MN',
        name: 'Мод',
        description: 'тайлбар',
      })
      .expect(201);
    const created = await api.post(t.base, { version: 'v2', name: 'Second' }).expect(201);
    expect(created.body.aggregations).toMatchObject({ nodes: 1 });
    const [root] = await nodesOf(`${t.base}/v2`);
    expect(root).toMatchObject({
      code: t.code,
      name: 'Renamed',
      description: 'now',
      depth: 0,
      parent_id: null,
    });
    const translations = (await api.get(`${t.base}/v2/nodes/${root.id}/translations`).expect(200)).body.items;
    expect(translations).toEqual([
      expect.objectContaining({ language: 'mn_MN', name: 'Мод', description: 'тайлбар' }),
    ]);
    const mn = await api.get(`${t.base}/v2/nodes/${root.id}`).set('Accept-Language', 'mn-MN').expect(200);
    expect(mn.body).toMatchObject({ name: 'Мод', description: 'тайлбар' });
    // v1 was created before the rename: its root keeps the name it was given.
    expect((await roots(`${t.base}/v1`)).map((n) => n.name)).toEqual([t.name]);
    // A version created without a code (next vN) gets one too.
    const next = await api.post(t.base, {}).expect(201);
    expect(await roots(`${t.base}/${next.body.version}`)).toHaveLength(1);
  });

  it('the last root cannot be deleted, not even with cascade (409); another root can', async () => {
    const t = await newTree();
    const path = `${t.base}/v1`;
    const [root] = await roots(path);
    const child = (await api.post(`${path}/nodes`, { code: 'C', name: 'C', parent_id: root.id }).expect(201))
      .body;

    const leafOnly = await newTree();
    const [lone] = await roots(`${leafOnly.base}/v1`);
    const refused = await api.delete(`${leafOnly.base}/v1/nodes/${lone.id}`).expect(409);
    expect(refused.body).toEqual({
      code: 'conflict',
      message: expect.stringContaining('at least one root node'),
    });
    expect(await roots(`${leafOnly.base}/v1`)).toHaveLength(1);

    const cascade = await api.delete(`${path}/nodes/${root.id}?cascade=true`).expect(409);
    expect(cascade.body.message).toContain('at least one root node');
    expect((await nodesOf(path)).map((n) => n.code).sort()).toEqual(['C', t.code].sort());

    // A second root: now either may go, the last one left may not.
    const other = (await api.post(`${path}/nodes`, { code: 'R2', name: 'R2' }).expect(201)).body;
    await api.delete(`${path}/nodes/${root.id}?cascade=true`).expect(204);
    await api.get(`${path}/nodes/${child.id}`).expect(404);
    await api.delete(`${path}/nodes/${other.id}`).expect(409);
    expect((await nodesOf(path)).map((n) => n.code)).toEqual(['R2']);
    expect(await treeProblems(tree.built.db, await versionId(path))).toEqual(NO_PROBLEMS);
  });

  it('two roots deleted at once: one goes, the other stays (the version lock orders them)', async () => {
    const t = await newTree();
    const path = `${t.base}/v1`;
    const [first] = await roots(path);
    const second = (await api.post(`${path}/nodes`, { code: 'R2', name: 'R2' }).expect(201)).body;
    const statuses = await Promise.all(
      [first.id, second.id].map(async (id) => (await api.delete(`${path}/nodes/${id}`)).status),
    );
    expect(statuses.sort()).toEqual([204, 409]);
    expect(await roots(path)).toHaveLength(1);
  });

  it('the last root cannot be moved under another node (409); one of two roots can', async () => {
    const t = await newTree();
    const path = `${t.base}/v1`;
    const [root] = await roots(path);
    const child = (await api.post(`${path}/nodes`, { code: 'C', name: 'C', parent_id: root.id }).expect(201))
      .body;
    const refused = await api.patch(`${path}/nodes/${root.id}`, { parent_id: child.id }).expect(409);
    expect(refused.body).toEqual({
      code: 'conflict',
      message: expect.stringContaining('at least one root node'),
    });

    // Moving a child up to be a second root, then the first root under it, is fine: one root remains.
    await api.patch(`${path}/nodes/${child.id}`, { parent_id: null }).expect(200);
    const moved = await api.patch(`${path}/nodes/${root.id}`, { parent_id: child.id }).expect(200);
    expect(moved.body).toMatchObject({ depth: 1, parent_id: child.id });
    expect((await roots(path)).map((n) => n.id)).toEqual([child.id]);
    await api.patch(`${path}/nodes/${child.id}`, { parent_id: root.id }).expect(409);
    expect(await treeProblems(tree.built.db, await versionId(path))).toEqual(NO_PROBLEMS);
  });

  it('an import that would leave no root is 400 and writes nothing; one that brings roots replaces', async () => {
    const t = await newTree();
    const path = `${t.base}/v1`;
    const importCsv = (csv: string, query = '') =>
      request(tree.http)
        .post(`${path}/import${query}`)
        .set('Authorization', `Bearer ${token}`)
        .set('Content-Type', 'text/csv')
        .send(csv);
    const before = await nodesOf(path);

    const empty = await importCsv('code,parent_code,name\n', '?replace=true').expect(400);
    expect(empty.body).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('root') });
    const blank = await importCsv('', '?replace=true').expect(400);
    expect(blank.body.code).toBe('invalid_request');
    expect(await nodesOf(path)).toEqual(before);

    // Appending nothing keeps the root; appending nodes under it too.
    expect((await importCsv('code,parent_code,name\n').expect(200)).body).toEqual({
      imported: 0,
      replaced: 0,
      nodes: 1,
    });
    expect((await importCsv(`code,parent_code,name\nA,${t.code},A\n`).expect(200)).body).toEqual({
      imported: 1,
      replaced: 0,
      nodes: 2,
    });

    // Replacing with a file that has its own root.
    const replaced = await importCsv('code,parent_code,name\nTOP,,Top\nX,TOP,X\n', '?replace=true').expect(
      200,
    );
    expect(replaced.body).toEqual({ imported: 2, replaced: 2, nodes: 2 });
    expect((await roots(path)).map((n) => n.code)).toEqual(['TOP']);
    expect(await treeProblems(tree.built.db, await versionId(path))).toEqual(NO_PROBLEMS);
  });

  it('clones keep their roots: a cloned version and a cloned tree', async () => {
    const t = await newTree();
    const [root] = await roots(`${t.base}/v1`);
    await api.post(`${t.base}/v1/nodes`, { code: 'C', name: 'C', parent_id: root.id }).expect(201);
    await api.post(`${t.base}/v1/nodes`, { code: 'R2', name: 'Second root' }).expect(201);

    await api.post(`${t.base}/v1/clone`, { version: 'copy', name: 'Copy' }).expect(201);
    const copied = await roots(`${t.base}/copy`);
    expect(copied.map((n) => `${n.code}: ${n.name}`).sort()).toEqual(
      ['R2: Second root', `${t.code}: ${t.name}`].sort(),
    );
    expect(await nodesOf(`${t.base}/copy`)).toHaveLength(3);

    const code = uniq('roots-clone');
    await api.post(`/api/v1/trees/${t.code}/clone`, { code, name: 'Cloned tree' }).expect(201);
    for (const v of ['v1', 'copy']) {
      const path = `/api/v1/trees/${code}/versions/${v}`;
      // The clone keeps the roots as they were (named after the original tree), no extra root is added.
      expect((await roots(path)).map((n) => n.code).sort()).toEqual(['R2', t.code].sort());
      expect(await nodesOf(path)).toHaveLength(3);
    }
  });
});
