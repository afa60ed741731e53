import { randomUUID } from 'node:crypto';
import { TREE_AUDIENCE } from '@gatehouse/identity-data';
import { Management, VERSIONS } from './management-harness.js';
import { OPERATIONS, pathOf, scopeOf } from './management-operations.js';

/**
 * Every operation in both presentations: no token is 401 with a Bearer challenge, a token for another API or
 * without the operation's scope is 403 naming what is missing, and none of them reads or writes anything.
 */
let m: Management;
let noScopes: string;
let wrongScopes: Record<string, string>;
let treeToken: string;

beforeAll(async () => {
  // every operation in both presentations sends a bad token twice: more than the default failed-auth allowance
  m = await Management.start({ RATE_LIMIT_AUTH_FAILURES: '10000' });
  noScopes = (await m.caller([])).token;
  // For each scope, a token with every management scope but that one.
  const all = [
    'clients:read',
    'clients:write',
    'resources:read',
    'resources:write',
    'users:read',
    'users:write',
    'roles:read',
    'roles:write',
    'groups:read',
    'groups:write',
    'tenants:read',
    'tenants:write',
    'instances:read',
    'instances:write',
    'tickets:read',
    'tickets:write',
    'logs:read',
    'log_streams:write',
  ];
  wrongScopes = {};
  for (const scope of all) wrongScopes[scope] = (await m.caller(all.filter((s) => s !== scope))).token;
  treeToken = await m.token(m.auth.clientId, m.auth.clientSecret, TREE_AUDIENCE);
});
afterAll(async () => {
  await m?.close();
});

const send = (op: string, path: string, token: string) => {
  const method = op.split(' ')[0].toLowerCase() as 'get';
  const req = m.call(method, path, token);
  return method === 'get' ? req : req.send({});
};

describe.each(VERSIONS)('authorization under /api/%s', (v) => {
  it.each(OPERATIONS)('%s: 401 without a token, 403 for another API or without its scope', async (op) => {
    const path = pathOf(v, op, randomUUID());
    const none = await send(op, path, '');
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('unauthorized');
    expect(none.headers['www-authenticate']).toMatch(/^Bearer /);
    const expired = await send(op, path, 'not.a.token');
    expect(expired.status).toBe(401);
    const tree = await send(op, path, treeToken);
    expect(tree.status).toBe(403);
    expect(tree.body.message).toContain('urn:gatehouse:management');
    for (const token of [noScopes, wrongScopes[scopeOf(op)]]) {
      const res = await send(op, path, token);
      expect([res.status, res.body.code]).toEqual([403, 'forbidden']);
      expect(res.body.message).toContain(scopeOf(op));
    }
  });
});
