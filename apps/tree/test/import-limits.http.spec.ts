import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Db } from '@gatehouse/db';
import { eventually } from '@gatehouse/testing';
import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

/**
 * A CSV upload is bounded in bytes, in bytes a line and in idle time; a stalled upload holds no
 * version lock and is aborted with nothing written. Also hostile JSON at the tree API (hole 8).
 */
describe('tree resource exhaustion', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let api: Client;
  let token: string;
  let port: number;

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url, {
      TREE_IMPORT_MAX_BYTES: '20000',
      TREE_IMPORT_MAX_RECORD_BYTES: '1000',
      TREE_IMPORT_IDLE_SEC: '2',
    });
    token = (await treeTokens(auth)).all;
    api = client(tree.http, token);
    await new Promise<void>((resolve) => tree.http.listen(0, '127.0.0.1', resolve));
    port = (tree.http.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  async function newTree() {
    const code = uniq('lim');
    await api.post('/api/v1/trees', { code, name: code }).expect(201);
    return { code, base: `/api/v1/trees/${code}/versions` };
  }

  const importCsv = (path: string, csv: string) =>
    request(tree.http)
      .post(`${path}/import`)
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'text/csv')
      .send(csv);

  /** Nodes of v1 besides the root it was created with. */
  const nodeCount = async (base: string) =>
    (await api.get(`${base}/v1`).expect(200)).body.aggregations.nodes - 1;

  it('an upload larger than TREE_IMPORT_MAX_BYTES is 413 and writes nothing (declared or streamed)', async () => {
    const t = await newTree();
    const big = 'code,parent_code,name\n' + Array.from({ length: 3000 }, (_, i) => `N${i},,n\n`).join('');
    expect(big.length).toBeGreaterThan(20000);
    const declared = await importCsv(`${t.base}/v1`, big);
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({ code: 'payload_too_large', message: expect.stringContaining('20000') });

    // Chunked (no Content-Length): counted as it streams.
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `${t.base}/v1/import`,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'text/csv',
            'transfer-encoding': 'chunked',
          },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 30; i++) req.write(big.slice(i * 1000, (i + 1) * 1000));
      req.end();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).code).toBe('payload_too_large');
    expect(await nodeCount(t.base)).toBe(0);
    // The version is usable at once.
    expect((await importCsv(`${t.base}/v1`, 'code,parent_code,name\nA,,a\n').expect(200)).body.imported).toBe(
      1,
    );
  });

  it('a line longer than TREE_IMPORT_MAX_RECORD_BYTES is 413 and writes nothing', async () => {
    const t = await newTree();
    const res = await importCsv(`${t.base}/v1`, `code,parent_code,name\nA,,a\nB,,${'x'.repeat(5000)}\n`);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    expect(await nodeCount(t.base)).toBe(0);
  });

  it('a stalled upload is aborted after TREE_IMPORT_IDLE_SEC with nothing written, and holds no lock meanwhile', async () => {
    const t = await newTree();
    const started = Date.now();
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `${t.base}/v1/import`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv', 'content-length': 10000 },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body });
          });
        },
      );
      req.on('error', reject);
      req.write('code,parent_code,name\nS1,,s\nS2,S1,s\n'); // then nothing
    });
    // While the upload stalls, structural writes of the version go through (no version lock is held). Stalled:
    // its transaction has staged what arrived and waits for the rest.
    await eventually(
      async () =>
        (
          await tree.built.app.get(Db).rows(
            `SELECT 1 FROM pg_stat_activity
              WHERE datname = current_database() AND state = 'idle in transaction' AND query LIKE '%import_rows%'`,
          )
        ).length === 1,
      { what: 'the import waiting for the rest of the upload' },
    );
    const during = Date.now();
    await api.post(`${t.base}/v1/nodes`, { code: 'X', name: 'x' }).expect(201);
    expect(Date.now() - during).toBeLessThan(1200);

    const res = await answer;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      code: 'invalid_request',
      message: expect.stringContaining('sent nothing'),
    });
    expect(await nodeCount(t.base)).toBe(1); // only X
  });

  it('JSON nested 4,000 levels and __proto__ keys are 400 at the tree API', async () => {
    const deep = `${'{"a":'.repeat(4000)}1${'}'.repeat(4000)}`;
    const nested = await request(tree.http)
      .post('/api/v1/trees')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .send(`{"code":"deep","name":"d","metadata":${deep}}`);
    expect(nested.status).toBe(400);
    expect(nested.body.code).toBe('invalid_request');
    const proto = await request(tree.http)
      .post('/api/v1/trees')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .send(`{"code":"proto","name":"p","metadata":{"__proto__":{"x":1}}}`);
    expect(proto.status).toBe(400);
    await api.get('/api/v1/trees/deep').expect(404);
    await api.get('/api/v1/trees/proto').expect(404);
    const nul = await api.post('/api/v1/trees', { code: 'n\u0000ul', name: 'n' });
    expect(nul.status).toBe(400);
  });
});
