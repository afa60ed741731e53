import { randomUUID } from 'node:crypto';
import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

describe('translations over HTTP', () => {
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

  /** The three subjects of one new tree: tree, version v1, and a node. */
  async function subjects() {
    const code = uniq('tr');
    const t = (await api.post('/api/v1/trees', { code, name: 'Base tree', description: 'base' }).expect(201))
      .body;
    const node = (
      await api.post(`/api/v1/trees/${code}/versions/v1/nodes`, { code: 'N', name: 'Base node' }).expect(201)
    ).body;
    const v = (await api.get(`/api/v1/trees/${code}/versions/v1`).expect(200)).body;
    return [
      { kind: 'tree', path: `/api/v1/trees/${code}`, id: t.id as string, base: 'Base tree' as string | null },
      { kind: 'version', path: `/api/v1/trees/${code}/versions/v1`, id: v.id as string, base: null },
      {
        kind: 'node',
        path: `/api/v1/trees/${code}/versions/v1/nodes/${node.id}`,
        id: node.id as string,
        base: 'Base node',
      },
    ];
  }

  it('runs the five operations for trees, versions and nodes, and reads honour Accept-Language', async () => {
    for (const s of await subjects()) {
      const base = `${s.path}/translations`;
      const created = await api
        .post(base, { language: 'mn-MN', name: `Нэр ${s.kind}`, description: 'Тайлбар' })
        .expect(201);
      expect(created.body).toMatchObject({ language: 'mn_MN', name: `Нэр ${s.kind}`, label_id: s.id });
      const dflt = await api.post(base, { name: 'US name' }).expect(201);
      expect(dflt.body.language).toBe('en_US');

      expect((await api.post(base, { language: 'mn_MN', name: 'again' }).expect(409)).body.code).toBe(
        'conflict',
      );
      await api.post(base, { language: 'fr_FR', name: 'x' }).expect(400);
      await api.post(base, { language: 'en_UK', name: 'x', extra: 1 }).expect(400);

      const list = await api
        .get(`${base}?total_count=true&sort=language:desc&fields=language,name`)
        .expect(200);
      expect(list.body).toMatchObject({ total_count: 2, count: 2 });
      expect(list.body.items).toEqual([
        { language: 'mn_MN', name: `Нэр ${s.kind}` },
        { language: 'en_US', name: 'US name' },
      ]);
      expect(
        (await api.get(`${base}?q=${encodeURIComponent("language = 'en_US'")}`).expect(200)).body.count,
      ).toBe(1);

      expect((await api.get(`${base}/mn_MN`).expect(200)).body.description).toBe('Тайлбар');
      expect((await api.get(`${base}/mn-MN`).expect(200)).body.language).toBe('mn_MN');
      await api.get(`${base}/en_UK`).expect(404);
      await api.get(`${base}/xx_XX`).expect(400);

      const translated = await api.get(s.path).set('Accept-Language', 'mn-MN').expect(200);
      expect(translated.body).toMatchObject({ name: `Нэр ${s.kind}`, description: 'Тайлбар' });

      const upd = await api.patch(`${base}/mn_MN`, { description: 'Шинэ' }).expect(200);
      expect(upd.body).toMatchObject({ name: `Нэр ${s.kind}`, description: 'Шинэ' });
      await api.patch(`${base}/en_UK`, { name: 'x' }).expect(404);
      await api.patch(`${base}/mn_MN`, { language: 'en_US' }).expect(400);

      await api.delete(`${base}/mn_MN`).expect(204);
      await api.delete(`${base}/mn_MN`).expect(404);
      const fallback = await api.get(s.path).set('Accept-Language', 'mn-MN').expect(200);
      expect(fallback.body.name).toBe(s.base);
    }
  });

  it('answers 404 for translations of records that do not exist', async () => {
    const [t, , n] = await subjects();
    await api.get(`/api/v1/trees/${uniq('none')}/translations`).expect(404);
    await api.post(`${t.path}/versions/v9/translations`, { name: 'x' }).expect(404);
    const missingNode = n.path.replace(/[0-9a-f-]{36}$/, randomUUID());
    await api.post(`${missingNode}/translations`, { name: 'x' }).expect(404);
    await api.get(`${missingNode}/translations`).expect(404);
  });
});
