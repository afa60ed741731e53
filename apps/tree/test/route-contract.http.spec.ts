import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { startTree, treeTokens, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

/**
 * The scope of every tree route, declared as identity declares its own (`@Scopes()` of @gatehouse/bearer, shown in
 * OpenAPI as `x-required-scopes`): GET needs `trees:read`, `PATCH /settings` needs `settings:write`, every other
 * operation `trees:write`. Checked against the document and against the running service.
 */
describe('tree route contract: a scope on every route', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let tokens: Awaited<ReturnType<typeof treeTokens>>;
  let operations: { method: string; pattern: string; scopes: string[] | undefined }[];

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url);
    tokens = await treeTokens(auth);
    const doc = (await request(tree.http).get('/docs/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { 'x-required-scopes'?: string[] }>>;
    };
    operations = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/api/v1/'))
      .flatMap(([pattern, ops]) =>
        Object.entries(ops)
          .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
          .map(([method, op]) => ({ method, pattern, scopes: op['x-required-scopes'] })),
      );
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  const expected = (method: string, pattern: string) =>
    method === 'get' ? ['trees:read'] : pattern === '/api/v1/settings' ? ['settings:write'] : ['trees:write'];

  it('the OpenAPI document names the scope of every operation, by the rule', () => {
    expect(operations.length).toBeGreaterThanOrEqual(30);
    for (const op of operations) {
      expect({ op: `${op.method} ${op.pattern}`, scopes: op.scopes }).toEqual({
        op: `${op.method} ${op.pattern}`,
        scopes: expected(op.method, op.pattern),
      });
    }
  });

  it('a read-only token is refused (403, before anything is read or written) on every other operation', async () => {
    for (const op of operations.filter((o) => o.method !== 'get')) {
      const path = op.pattern
        .replace('{tree_node_id}', randomUUID())
        .replace('{language}', 'mn_MN')
        .replace(/\{[^}]+\}/g, 'x');
      const res = await request(tree.http)
        [op.method as 'post'](path)
        .set('Authorization', `Bearer ${tokens.read}`)
        .send({});
      expect({ op: `${op.method} ${op.pattern}`, status: res.status }).toEqual({
        op: `${op.method} ${op.pattern}`,
        status: 403,
      });
      expect(res.body.message).toContain(expected(op.method, op.pattern)[0]);
    }
  });
});
