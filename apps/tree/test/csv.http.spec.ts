import request from 'supertest';
import { eventually } from '@gatehouse/testing';
import { NO_PROBLEMS, treeProblems } from './support/consistency.js';
import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

describe('CSV export and import over HTTP', () => {
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

  async function newTree() {
    const code = uniq('csv');
    await api.post('/api/v1/trees', { code, name: code }).expect(201);
    const base = `/api/v1/trees/${code}/versions`;
    const versionId = async (v: string) => (await api.get(`${base}/${v}`).expect(200)).body.id as string;
    return { code, base, versionId };
  }

  const exportCsv = async (path: string) => {
    const res = await request(tree.http)
      .get(`${path}/export`)
      .set('Authorization', `Bearer ${token}`)
      .buffer(true)
      .parse((r, cb) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString('utf8')));
        r.on('end', () => cb(null, text));
      })
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    return res.body as string;
  };

  const importCsv = (path: string, csv: string, query = '') =>
    request(tree.http)
      .post(`${path}/import${query}`)
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'text/csv')
      .send(csv);

  it('exports parents first with translation columns, and imports the file back into another version', async () => {
    const t = await newTree();
    const nodes = `${t.base}/v1/nodes`;
    const r = (await api.post(nodes, { code: 'R', name: 'Root', description: 'top, "quoted"' }).expect(201))
      .body;
    const b = (await api.post(nodes, { code: 'B', name: 'Bee', parent_id: r.id }).expect(201)).body;
    const a = (await api.post(nodes, { code: 'A', name: 'Ay', parent_id: r.id }).expect(201)).body;
    await api.post(nodes, { code: 'A1', name: 'Ay one', parent_id: a.id }).expect(201);
    await api.post(nodes, { code: 'S', name: 'Second root' }).expect(201);
    await api
      .post(`${nodes}/${b.id}/translations`, { language: 'mn_MN', name: 'Би', description: 'тайлбар' })
      .expect(201);

    expect(await exportCsv(`${t.base}/v1`)).toBe(
      [
        'code,parent_code,name,description,name@mn_MN,description@mn_MN',
        `${t.code},,${t.code},,,`, // the root v1 was created with
        'R,,Root,"top, ""quoted""",,',
        'B,R,Bee,,Би,тайлбар',
        'A,R,Ay,,,',
        'A1,A,Ay one,,,',
        'S,,Second root,,,',
        '',
      ].join('\n'),
    );

    // A new version has its own root (coded as the tree, as in the file): loading a whole export replaces it.
    await api.post(t.base, { version: 'copy' }).expect(201);
    const exported = await exportCsv(`${t.base}/v1`);
    expect((await importCsv(`${t.base}/copy`, exported).expect(400)).body.message).toContain(
      `code '${t.code}' already exists`,
    );
    const imported = await importCsv(`${t.base}/copy`, exported, '?replace=true').expect(200);
    expect(imported.body).toEqual({ imported: 6, replaced: 1, nodes: 6 });
    expect(await exportCsv(`${t.base}/copy`)).toBe(await exportCsv(`${t.base}/v1`));
    const copyB = (
      await api
        .get(`${t.base}/copy/nodes?q=${encodeURIComponent("code = 'B'")}`)
        .set('Accept-Language', 'mn-MN')
    ).body.items[0];
    expect(copyB).toMatchObject({ name: 'Би', depth: 1, leaf: true });
    expect(await treeProblems(tree.built.db, await t.versionId('copy'))).toEqual(NO_PROBLEMS);
    expect((await api.get(`${t.base}/copy`).expect(200)).body.aggregations).toMatchObject({
      nodes: 6,
      levels: 3,
    });
  });

  it('accepts lines in any order, parents already in the version, a BOM and mn-MN columns; replace=true starts over', async () => {
    const t = await newTree();
    const nodes = `${t.base}/v1/nodes`;
    const existing = (await api.post(nodes, { code: 'E', name: 'Existing' }).expect(201)).body;
    const csv = '\uFEFFname,code,parent_code,name@mn-MN\r\nLeaf,L,M,Навч\r\nMiddle,M,E,\r\n';
    expect((await importCsv(`${t.base}/v1`, csv).expect(200)).body).toEqual({
      imported: 2,
      replaced: 0,
      nodes: 4, // with the version's own root
    });
    expect((await api.get(`${nodes}/${existing.id}`).expect(200)).body.leaf).toBe(false);
    const leaf = (
      await api.get(`${nodes}?q=${encodeURIComponent("code = 'L'")}`).set('Accept-Language', 'mn_MN')
    ).body.items[0];
    expect(leaf).toMatchObject({ name: 'Навч', depth: 2 });
    expect(await treeProblems(tree.built.db, await t.versionId('v1'))).toEqual(NO_PROBLEMS);

    const replaced = await importCsv(
      `${t.base}/v1`,
      'code,parent_code,name\nN,,New\n',
      '?replace=true',
    ).expect(200);
    expect(replaced.body).toEqual({ imported: 1, replaced: 4, nodes: 1 });
    expect(await exportCsv(`${t.base}/v1`)).toBe('code,parent_code,name,description\nN,,New,\n');
    expect(await treeProblems(tree.built.db, await t.versionId('v1'))).toEqual(NO_PROBLEMS);
  });

  it('is all or nothing: every problem is reported with its line number and nothing is written', async () => {
    const t = await newTree();
    const nodes = `${t.base}/v1/nodes`;
    await api.post(nodes, { code: 'TAKEN', name: 'Taken' }).expect(201);
    const before = await exportCsv(`${t.base}/v1`);
    const cases: [string, RegExp[]][] = [
      ['code,parent_code,name\nA,,a\nA,,again\n', [/line 3/, /duplicate code 'A' \(first on line 2\)/]],
      ['code,parent_code,name\nTAKEN,,x\n', [/line 2/, /already exists/]],
      ['code,parent_code,name\nA,,a\nB,NOPE,b\n', [/line 3/, /unknown parent_code 'NOPE'/]],
      ['code,parent_code,name\nA,,a\nX,Y,x\nY,X,y\n', [/line 3/, /cycle/]],
      ['code,parent_code,name\nA,,\n', [/line 2/, /name is empty/]],
      ['code,parent_code,name\nA,,a,extra\n', [/line 2/, /has 4 fields/]],
      ['code,parent,name\nA,,a\n', [/line 1/, /unknown column 'parent'/]],
      ['code,parent_code,name,name@fr_FR\nA,,a,b\n', [/line 1/, /name@fr_FR/]],
      ['code,parent_code,name\nA,,"unterminated\n', [/malformed CSV/]],
      // Found by tools/reliability/fuzz.mjs: csv-parse's INVALID_OPENING_QUOTE (no CSV_ prefix) was a 500.
      ['{"x":"\uFFFD"}\n', [/malformed CSV/, /Invalid Opening Quote/]],
      ['code,parent_code,name\nA,,a"b"\n', [/malformed CSV/]],
      ['', [/missing header/]],
    ];
    for (const [csv, patterns] of cases) {
      const res = await importCsv(`${t.base}/v1`, csv);
      expect({ csv, status: res.status }).toEqual({ csv, status: 400 });
      expect(res.body.code).toBe('invalid_request');
      const text = `${res.body.message} ${JSON.stringify(res.body.details ?? [])}`;
      for (const p of patterns) expect(text).toMatch(p);
    }
    // Several problems at once: all lines listed in details.
    const many = await importCsv(`${t.base}/v1`, 'code,parent_code,name\n,,a\nB,,\nC,,c\nC,,c\n').expect(400);
    expect(many.body.details.map((d: { field: string }) => d.field)).toEqual(['line 2', 'line 3']);
    expect(await exportCsv(`${t.base}/v1`)).toBe(before);
  });

  it('imports nothing when the upload is cut short', async () => {
    const t = await newTree();
    const { port } = await new Promise<import('node:net').AddressInfo>((resolve) => {
      if (tree.http.listening) resolve(tree.http.address() as import('node:net').AddressInfo);
      else
        tree.http.listen(0, '127.0.0.1', () =>
          resolve(tree.http.address() as import('node:net').AddressInfo),
        );
    });
    const http = await import('node:http');
    const head = 'code,parent_code,name\n' + Array.from({ length: 2000 }, (_, i) => `N${i},,n\n`).join('');
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `${t.base}/v1/import`,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'text/csv',
          'content-length': head.length * 4,
        },
      });
      req.on('error', () => resolve());
      req.on('response', (res) => {
        res.resume();
        resolve();
      });
      req.write(head, () => setTimeout(() => req.destroy(), 200));
    });
    // The server notices, rolls back and releases what it held: a later import goes through. (The one node is the
    // root the version was created with.)
    expect((await api.get(`${t.base}/v1`).expect(200)).body.aggregations.nodes).toBe(1);
    let imported = 0;
    await eventually(
      async () => {
        const res = await importCsv(`${t.base}/v1`, 'code,parent_code,name\nA,,a\n');
        imported = res.status === 200 ? (res.body.imported as number) : 0;
        return res.status === 200;
      },
      { what: 'an import after the interrupted one' },
    );
    expect(imported).toBe(1);
    // Nothing of the interrupted upload was written: the version holds its root and the node imported after it.
    expect((await api.get(`${t.base}/v1`).expect(200)).body.aggregations.nodes).toBe(2);
  });

  it('refuses a non-CSV body with 415 and an unknown version with 404', async () => {
    const t = await newTree();
    const json = await api.post(`${t.base}/v1/import`, { code: 'A' });
    expect(json.status).toBe(415);
    expect(json.body.code).toBe('invalid_request');
    await importCsv(`${t.base}/nope`, 'code,parent_code,name\n').expect(404);
    await api.get(`${t.base}/nope/export`).expect(404);
    await importCsv(`${t.base}/v1`, 'code,parent_code,name\n', '?replace=perhaps').expect(400);
  });

  it('streams a 40,000-line import (over the 1 MB JSON body limit) and export', async () => {
    const t = await newTree();
    const lines = ['code,parent_code,name,description'];
    for (let i = 0; i < 40000; i++) {
      lines.push(`N${i},${i === 0 ? '' : `N${Math.floor((i - 1) / 10)}`},Node number ${i},`);
    }
    const csv = `${lines.join('\n')}\n`;
    expect(Buffer.byteLength(csv)).toBeGreaterThan(1024 * 1024);
    expect((await importCsv(`${t.base}/v1`, csv).expect(200)).body).toEqual({
      imported: 40000,
      replaced: 0,
      nodes: 40001, // with the version's own root
    });
    const out = await exportCsv(`${t.base}/v1`);
    expect(out.trim().split('\n')).toHaveLength(40002);
    expect((await api.get(`${t.base}/v1`).expect(200)).body.aggregations).toMatchObject({
      nodes: 40001,
      levels: 6,
    });
    expect(await treeProblems(tree.built.db, await t.versionId('v1'))).toEqual(NO_PROBLEMS);
  });

  describe('hole 10: CSV formula injection', () => {
    it("export prefixes cells starting with = + - @ (tab, CR) with ', and import strips it: exact round trip", async () => {
      const t = await newTree();
      const nodes = `${t.base}/v1/nodes`;
      const r = (
        await api
          .post(nodes, {
            code: '-1',
            name: '=HYPERLINK("http://evil.example","x")',
            description: '@SUM(A1:A2)',
          })
          .expect(201)
      ).body;
      await api
        .post(nodes, {
          code: 'c2',
          name: "'=quoted already",
          description: "'plain apostrophe",
          parent_id: r.id,
        })
        .expect(201);
      await api.post(nodes, { code: '+2', name: 'tab', description: '\tindented' }).expect(201);
      await api
        .post(`${nodes}/${r.id}/translations`, { language: 'mn_MN', name: '+Би', description: '-тайлбар' })
        .expect(201);

      const out = await exportCsv(`${t.base}/v1`);
      expect(out).toBe(
        [
          'code,parent_code,name,description,name@mn_MN,description@mn_MN',
          `${t.code},,${t.code},,,`,
          `'-1,,"'=HYPERLINK(""http://evil.example"",""x"")",'@SUM(A1:A2),'+Би,'-тайлбар`,
          `c2,'-1,''=quoted already,'plain apostrophe,,`,
          `'+2,,tab,'\tindented,,`,
          '',
        ].join('\n'),
      );
      // no cell of a line starts with a formula character
      for (const line of out.split('\n')) {
        for (const cell of line.split(',')) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
      }

      await api.post(t.base, { version: 'copy' }).expect(201);
      expect((await importCsv(`${t.base}/copy`, out, '?replace=true').expect(200)).body).toMatchObject({
        imported: 4,
      });
      expect(await exportCsv(`${t.base}/copy`)).toBe(out);
      const byCode = async (code: string) =>
        (await api.get(`${t.base}/copy/nodes?q=${encodeURIComponent(`code = '${code}'`)}`).expect(200)).body
          .items[0];
      expect(await byCode('-1')).toMatchObject({
        name: '=HYPERLINK("http://evil.example","x")',
        description: '@SUM(A1:A2)',
      });
      expect(await byCode('c2')).toMatchObject({
        name: "'=quoted already",
        description: "'plain apostrophe",
      });
      expect(await byCode('+2')).toMatchObject({ description: '\tindented' });
    });

    it("a hand-written file: '= is read as =, a lone leading ' is kept", async () => {
      const t = await newTree();
      const csv = "code,parent_code,name,description\n'=A,,'=Sum,'note\n";
      expect((await importCsv(`${t.base}/v1`, csv).expect(200)).body).toMatchObject({ imported: 1 });
      const node = (await api.get(`${t.base}/v1/nodes?q=${encodeURIComponent("code = '=A'")}`).expect(200))
        .body.items[0];
      expect(node).toMatchObject({ code: '=A', name: '=Sum', description: "'note" });
    });
  });
});
