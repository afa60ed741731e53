import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { packageVersion } from '@gatehouse/service';
import { client, startTree, startTreeOn, treeTokens, uniq, type TreeApp } from './support/app.js';
import { treeTestDatabase } from './support/db.js';
import {
  startTokenServer,
  SwitchableProxy,
  TcpProxy,
  type TokenServer,
} from '@gatehouse/token-server-testing';

describe('security, settings and health over HTTP', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let tokens: Awaited<ReturnType<typeof treeTokens>>;

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url);
    tokens = await treeTokens(auth);
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  it('guards every /api/v1 route of the OpenAPI document: no token is 401 with a Bearer challenge', async () => {
    const doc = (await request(tree.http).get('/docs/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(doc.paths).filter(([p]) => p.startsWith('/api/v1/'));
    expect(routes.length).toBeGreaterThanOrEqual(14);
    let checked = 0;
    for (const [pattern, ops] of routes) {
      const path = pattern
        .replace('{tree_node_id}', randomUUID())
        .replace('{language}', 'mn_MN')
        .replace(/\{[^}]+\}/g, 'x');
      for (const method of Object.keys(ops).filter((m) =>
        ['get', 'post', 'patch', 'delete', 'put'].includes(m),
      )) {
        const res = await request(tree.http)[method as 'get'](path);
        expect({ route: `${method} ${pattern}`, status: res.status }).toEqual({
          route: `${method} ${pattern}`,
          status: 401,
        });
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(res.body.code).toBe('unauthorized');
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(35);
  });

  it('documents the decisions, scopes and response shapes in the OpenAPI document', async () => {
    const doc = (await request(tree.http).get('/docs/openapi.json').expect(200)).body;
    expect(doc.info.description).toMatch(/next\s+free `vN`/);
    expect(doc.info.description).toMatch(/-copy-<n>/);
    const list = doc.paths['/api/v1/trees'].get;
    expect(list['x-required-scopes']).toEqual(['trees:read']);
    expect(list.responses['200'].content['application/json'].schema.properties.items.items.$ref).toMatch(
      /TreeDoc$/,
    );
    const move = doc.paths['/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}'].patch;
    expect(move['x-required-scopes']).toEqual(['trees:write']);
    expect(move.responses['409']).toBeDefined();
    expect(doc.paths['/api/v1/settings'].patch['x-required-scopes']).toEqual(['settings:write']);
    const imp = doc.paths['/api/v1/trees/{tree_code}/versions/{tree_version}/import'].post;
    expect(imp.description).toMatch(/code,parent_code,name,description/);
    expect(doc.components.schemas.NodeDoc.properties.aggregations).toBeDefined();
  });

  it('401 for malformed or unknown tokens, 403 for another audience or a missing scope', async () => {
    await request(tree.http).get('/api/v1/trees').set('Authorization', 'Basic abc').expect(401);
    await request(tree.http).get('/api/v1/trees').set('Authorization', 'Bearer not-a-real-token').expect(401);
    const other = await request(tree.http)
      .get('/api/v1/trees')
      .set('Authorization', `Bearer ${tokens.management}`);
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('forbidden');

    const reader = client(tree.http, tokens.read);
    await reader.get('/api/v1/trees').expect(200);
    const refused = await reader.post('/api/v1/trees', { code: uniq('r'), name: 'r' }).expect(403);
    expect(refused.body.message).toMatch(/trees:write/);
    await reader.get('/api/v1/settings').expect(200);
    await reader.patch('/api/v1/settings', { environment: 'staging' }).expect(403);
    const writer = client(tree.http, tokens.write);
    await writer.post('/api/v1/trees', { code: uniq('w'), name: 'w' }).expect(201);
    expect(
      (await writer.patch('/api/v1/settings', { environment: 'staging' }).expect(403)).body.message,
    ).toMatch(/settings:write/);
  });

  it('405 with Allow for a known path and a wrong method, 404 for an unknown route', async () => {
    const api = client(tree.http, tokens.all);
    const res = await api.put('/api/v1/trees', {}).expect(405);
    expect(res.body.code).toBe('method_not_allowed');
    expect(res.headers.allow).toMatch(/GET/);
    expect(res.headers.allow).toMatch(/POST/);
    await api.raw('post', `/api/v1/trees/x/versions/v1/nodes/${randomUUID()}/descendants`).expect(405);
    await api.raw('delete', '/api/v1/settings').expect(405);
    expect((await api.get('/api/v1/forests').expect(404)).body.code).toBe('not_found');
  });

  it('reads and updates settings', async () => {
    const api = client(tree.http, tokens.all);
    expect((await api.get('/api/v1/settings').expect(200)).body).toEqual({ environment: 'development' });
    expect((await api.patch('/api/v1/settings', { environment: 'production' }).expect(200)).body).toEqual({
      environment: 'production',
    });
    expect((await api.get('/api/v1/settings?fields=environment').expect(200)).body.environment).toBe(
      'production',
    );
    expect((await api.patch('/api/v1/settings', { environment: 'moon' }).expect(400)).body.message).toMatch(
      /environment/,
    );
    await api.patch('/api/v1/settings', { mode: 'x' }).expect(400);
    expect((await api.patch('/api/v1/settings', {}).expect(200)).body.environment).toBe('development');
  });

  it('health is Active with the package version', async () => {
    const res = await client(tree.http, tokens.read).get('/api/v1/health').expect(200);
    expect(res.body).toMatchObject({
      server_name: 'gatehouse-tree',
      server_version: packageVersion(),
      server_status: 'Active',
    });
    expect(res.body.server_description).toMatch(/database: reachable; token server: reachable/);
  });

  it('rate limits per endpoint and caller: 429 with the X-RateLimit headers', async () => {
    const limited = await startTree(auth.url, { RATE_LIMIT_POINTS: '3' });
    try {
      const api = client(limited.http, tokens.read);
      for (let i = 0; i < 3; i++) {
        const ok = await api.get('/api/v1/settings').expect(200);
        expect(ok.headers['x-ratelimit-limit']).toBe('3');
      }
      const over = await api.get('/api/v1/settings').expect(429);
      expect(over.body.code).toBe('too_many_requests');
      expect(over.headers['x-ratelimit-remaining']).toBe('0');
      expect(over.headers['x-ratelimit-reset']).toBeDefined();
      await api.get('/api/v1/trees').expect(200); // another endpoint has its own budget
    } finally {
      await limited.close();
    }
  });

  it('token server unreachable: a cached token still works and health says Warning; a new token is 503', async () => {
    const proxy = await new SwitchableProxy(auth.url).start();
    const app = await startTree(proxy.url, { BEARER_TIMEOUT_MS: '1000' });
    try {
      const cached = await auth.token('urn:gatehouse:tree');
      const fresh = await auth.token('urn:gatehouse:tree');
      await client(app.http, cached).get('/api/v1/trees').expect(200);
      proxy.up = false;
      const health = await client(app.http, cached).get('/api/v1/health').expect(200);
      expect(health.body.server_status).toBe('Warning');
      expect(health.body.server_description).toMatch(/token server: unreachable/);
      const refused = await client(app.http, fresh).get('/api/v1/trees').expect(503);
      expect(refused.body.code).toBe('service_unavailable');
    } finally {
      await app.close();
      await proxy.stop();
    }
  });

  it('database unreachable: health says Error and data routes answer 503', async () => {
    const db = await treeTestDatabase();
    const url = new URL(db.url);
    const proxy = await new TcpProxy(url.hostname, Number(url.port || 5432)).start();
    url.host = `127.0.0.1:${proxy.listenPort}`;
    const app = await startTreeOn(url.toString(), auth.url);
    try {
      const api = client(app.http, await auth.token('urn:gatehouse:tree'));
      expect((await api.get('/api/v1/health').expect(200)).body.server_status).toBe('Active');
      await proxy.cut();
      const health = await api.get('/api/v1/health').expect(200);
      expect(health.body.server_status).toBe('Error');
      expect(health.body.server_description).toMatch(/database: unreachable/);
      expect((await api.get('/api/v1/trees').expect(503)).body.code).toBe('service_unavailable');
    } finally {
      await app.built.close().catch(() => undefined);
      await proxy.cut();
      await db.drop();
    }
  });
});
