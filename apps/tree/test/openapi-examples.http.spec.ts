import request from 'supertest';
import { client, startTree, treeTokens, uniq, type Client, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

/**
 * Every request example of the tree manager's OpenAPI document is a valid request: each one is sent, as it stands,
 * to the running app and succeeds (2xx). Path parameters name a tree made for that example alone (with its default
 * version `v1`); what the example made is deleted afterwards, so the next one starts clean.
 */
interface Operation {
  requestBody?: { content?: Record<string, { example?: unknown }> };
}

describe('tree request examples', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let api: Client;
  let doc: { paths: Record<string, Record<string, Operation>> };

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url);
    api = client(tree.http, (await treeTokens(auth)).all);
    doc = (await request(tree.http).get('/docs/openapi.json').expect(200)).body as typeof doc;
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  it('each example, sent as it stands, succeeds', async () => {
    let sent = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of ['post', 'put', 'patch'] as const) {
        const example = item[method]?.requestBody?.content?.['application/json']?.example;
        if (example === undefined) continue;
        const code = uniq('ex');
        await api.post('/api/v1/trees', { code, name: 'Example fixture' }).expect(201);
        const filled = path.replace('{tree_code}', code).replace('{tree_version}', 'v1');
        expect(filled).not.toContain('{');
        const res = await api[method](filled, example as object);
        const op = `${method.toUpperCase()} ${path}`;
        expect({
          op,
          example,
          status: res.status < 300 ? 'ok' : res.status,
          answer: res.status < 300 ? '' : res.body,
        }).toEqual({ op, example, status: 'ok', answer: '' });
        sent++;
        // the fixture tree (whatever it is called now) and a tree the example made
        const made = (res.body as { code?: string }).code;
        for (const c of [code, made, (example as { new_code?: string }).new_code]) {
          if (c) await api.delete(`/api/v1/trees/${encodeURIComponent(c)}?cascade=true`);
        }
      }
    }
    expect(sent).toBeGreaterThanOrEqual(7);
  });
});
