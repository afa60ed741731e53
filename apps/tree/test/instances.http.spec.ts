import request from 'supertest';
import { TREE_AUDIENCE } from '../src/common/scopes.js';
import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type InstanceClient, type TokenServer } from '@gatehouse/token-server-testing';

/**
 * Every tree record belongs to an instance and every tree request is confined to the caller's instance
 * (the instance of its token's client, as /tokeninfo names it). Instance A is the default instance (the bootstrap
 * client); instance B is seeded as POST /instances seeds it, with its own `urn:gatehouse:tree` and default client.
 */
describe('trees are confined to their instance', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let a: Client;
  let b: Client;
  let instanceB: InstanceClient;
  let tokenB: string;

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url);
    a = client(tree.http, (await treeTokens(auth)).all);
    instanceB = await auth.newInstance();
    tokenB = await instanceB.token(TREE_AUDIENCE);
    b = client(tree.http, tokenB);
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  /** A tree of A with a second version, two nodes and a translation on each level. */
  async function treeOfA() {
    const code = uniq('a');
    await a.post('/api/v1/trees', { code, name: 'Tree of A' }).expect(201);
    const path = `/api/v1/trees/${code}`;
    const root = (await a.post(`${path}/versions/v1/nodes`, { code: 'R', name: 'Root' }).expect(201)).body;
    await a.post(`${path}/versions/v1/nodes`, { code: 'C', name: 'Child', parent_id: root.id }).expect(201);
    await a.post(`${path}/translations`, { language: 'mn_MN', name: 'Мод' }).expect(201);
    await a.post(`${path}/versions/v1/translations`, { language: 'mn_MN', name: 'Хувилбар' }).expect(201);
    await a
      .post(`${path}/versions/v1/nodes/${root.id}/translations`, { language: 'mn_MN', name: 'Үндэс' })
      .expect(201);
    await a.post(`${path}/versions`, { version: 'v2' }).expect(201);
    const snapshot = async () => ({
      tree: (await a.get(`${path}?expand=all`).expect(200)).body,
      nodes: (await a.get(`${path}/versions/v1/nodes?expand=all`).expect(200)).body,
      translations: (await a.get(`${path}/versions/v1/nodes/${root.id}/translations`).expect(200)).body,
    });
    return { code, path, rootId: root.id as string, snapshot };
  }

  it("another instance's token does not see, read, modify, export or delete a tree (404), and it stays as it was", async () => {
    const t = await treeOfA();
    const before = await t.snapshot();
    const v1 = `${t.path}/versions/v1`;
    const node = `${v1}/nodes/${t.rootId}`;

    const listed = (await b.get(`/api/v1/trees?limit=100&total_count=true`).expect(200)).body;
    expect(listed.items.map((i: { code: string }) => i.code)).not.toContain(t.code);
    expect(listed.total_count).toBe(0);
    expect(
      (await b.get(`/api/v1/trees?q=${encodeURIComponent(`code = '${t.code}'`)}`).expect(200)).body.items,
    ).toEqual([]);

    const attempts: [string, () => request.Test][] = [
      ['get tree', () => b.get(t.path)],
      ['update tree', () => b.patch(t.path, { name: 'taken over' })],
      ['clone tree', () => b.post(`${t.path}/clone`, { code: uniq('b'), name: 'copy' })],
      ['change tree code', () => b.post(`${t.path}/change-code`, { new_code: uniq('b') })],
      ['list versions', () => b.get(`${t.path}/versions`)],
      ['create version', () => b.post(`${t.path}/versions`, { version: 'v9' })],
      ['get version', () => b.get(v1)],
      ['update version', () => b.patch(v1, { name: 'x' })],
      ['clone version', () => b.post(`${v1}/clone`, { version: 'v9', name: 'x' })],
      ['change version code', () => b.post(`${v1}/change-code`, { new_version: 'v9' })],
      ['list nodes', () => b.get(`${v1}/nodes`)],
      ['create node', () => b.post(`${v1}/nodes`, { code: 'X', name: 'X' })],
      ['get node', () => b.get(node)],
      ['descendants', () => b.get(`${node}/descendants`)],
      ['descendants as NDJSON', () => b.get(`${node}/descendants`).set('Accept', 'application/x-ndjson')],
      ['update node', () => b.patch(node, { name: 'x' })],
      ['clone node', () => b.post(`${node}/clone`, { code: 'X2', name: 'x' })],
      ['tree translations', () => b.get(`${t.path}/translations`)],
      ['create tree translation', () => b.post(`${t.path}/translations`, { language: 'en_UK', name: 'x' })],
      ['update tree translation', () => b.patch(`${t.path}/translations/mn_MN`, { name: 'x' })],
      ['version translations', () => b.get(`${v1}/translations`)],
      ['node translations', () => b.get(`${node}/translations`)],
      ['get node translation', () => b.get(`${node}/translations/mn_MN`)],
      ['export CSV', () => b.get(`${v1}/export`)],
      [
        'import CSV',
        () =>
          b.raw('post', `${v1}/import`).set('Content-Type', 'text/csv').send('code,parent_code,name\nZ,,Z\n'),
      ],
      ['delete node translation', () => b.delete(`${node}/translations/mn_MN`)],
      ['delete tree translation', () => b.delete(`${t.path}/translations/mn_MN`)],
      ['delete node', () => b.delete(`${node}?cascade=true`)],
      ['delete version', () => b.delete(`${t.path}/versions/v2`)],
      ['delete tree', () => b.delete(t.path)],
    ];
    for (const [what, send] of attempts) {
      const res = await send();
      expect({ what, status: res.status, code: res.body?.code }).toEqual({
        what,
        status: 404,
        code: 'not_found',
      });
    }

    expect(await t.snapshot()).toEqual(before);
    await a.get(`${t.path}/versions/v2`).expect(200);
  });

  it('both instances use the same tree code, each for its own tree; codes stay unique within an instance', async () => {
    const code = uniq('same');
    const ofA = (await a.post('/api/v1/trees', { code, name: 'A' }).expect(201)).body;
    const ofB = (await b.post('/api/v1/trees', { code, name: 'B' }).expect(201)).body;
    expect(ofB.id).not.toBe(ofA.id);
    expect((await a.post('/api/v1/trees', { code, name: 'again' }).expect(409)).body.code).toBe('conflict');
    expect((await b.post('/api/v1/trees', { code, name: 'again' }).expect(409)).body.code).toBe('conflict');

    const path = `/api/v1/trees/${code}`;
    await b.post(`${path}/versions/v1/nodes`, { code: 'R', name: 'Root of B' }).expect(201);
    await a.post(`${path}/versions/v1/nodes`, { code: 'R', name: 'Root of A' }).expect(201);
    const nodesOf = async (c: Client) =>
      (await c.get(`${path}/versions/v1/nodes`).expect(200)).body.items.map((n: { name: string }) => n.name);
    // First the root each version was created with, named after its own tree.
    expect(await nodesOf(a)).toEqual(['A', 'Root of A']);
    expect(await nodesOf(b)).toEqual(['B', 'Root of B']);
    expect((await a.get(path).expect(200)).body).toMatchObject({ id: ofA.id, name: 'A' });
    expect((await b.get(path).expect(200)).body).toMatchObject({ id: ofB.id, name: 'B' });

    // Clone and change-code check codes within the instance only.
    const other = uniq('other');
    await a.post('/api/v1/trees', { code: other, name: 'A only' }).expect(201);
    await b.post(`${path}/clone`, { code: other, name: 'clone of B' }).expect(201);
    expect((await a.get(`/api/v1/trees/${other}`).expect(200)).body.name).toBe('A only');
    // The clone of B's tree: B's root (kept, named after B's tree) and R.
    expect(
      (await b.get(`/api/v1/trees/${other}/versions/v1/nodes`).expect(200)).body.items.map(
        (n: { name: string }) => n.name,
      ),
    ).toEqual(['B', 'Root of B']);
    await b.post(`/api/v1/trees/${other}/change-code`, { new_code: `${other}-x` }).expect(200);
    await a.get(`/api/v1/trees/${other}`).expect(200);
    await b.post(`/api/v1/trees/${other}-x/change-code`, { new_code: code }).expect(409);

    // Deleting B's tree leaves A's tree of the same code.
    await b.delete(path).expect(204);
    await b.get(path).expect(404);
    expect(await nodesOf(a)).toEqual(['A', 'Root of A']);

    const codesOf = async (c: Client) =>
      (await c.get('/api/v1/trees?limit=100').expect(200)).body.items.map((t: { code: string }) => t.code);
    expect(await codesOf(b)).toEqual([`${other}-x`]);
    expect(await codesOf(a)).toEqual(expect.arrayContaining([code, other]));
    expect(await codesOf(a)).not.toContain(`${other}-x`);
  });

  it('each instance has its own settings', async () => {
    await a.patch('/api/v1/settings', { environment: 'staging' }).expect(200);
    expect((await b.get('/api/v1/settings').expect(200)).body).toEqual({ environment: 'development' });
    expect((await b.patch('/api/v1/settings', { environment: 'production' }).expect(200)).body).toEqual({
      environment: 'production',
    });
    expect((await a.get('/api/v1/settings').expect(200)).body).toEqual({ environment: 'staging' });
    expect((await b.get('/api/v1/settings').expect(200)).body).toEqual({ environment: 'production' });
    await b.patch('/api/v1/settings', {}).expect(200, { environment: 'development' });
    await a.patch('/api/v1/settings', {}).expect(200, { environment: 'development' });
  });

  it("/tokeninfo names instance B for B's tree token: what the tree API confines B's requests by", async () => {
    const info = await fetch(`${auth.url}/tokeninfo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenB}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokenB }).toString(),
    });
    expect(await info.json()).toMatchObject({
      active: true,
      aud: TREE_AUDIENCE,
      instance_id: instanceB.instanceId,
      default_instance: false,
    });
  });
});
