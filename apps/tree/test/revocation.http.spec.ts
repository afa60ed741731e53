import pg from 'pg';
import request from 'supertest';
import { eventually } from '@gatehouse/testing';
import { TreeChangeFeed } from '../src/common/change-feed.js';
import { startTree, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

/**
 * The tree service caches token checks (BEARER_CACHE_TTL_SEC) but drops them as soon as the
 * identity service announces a change on its database (DATABASE_URL): a revoked scope does not outlive the cache.
 */
describe('tree drops cached validations on the identity change feed', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let identityDb: pg.Client;

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url, { DATABASE_URL: auth.databaseUrl, BEARER_CACHE_TTL_SEC: '600' });
    identityDb = new pg.Client({ connectionString: auth.databaseUrl });
    await identityDb.connect();
  });
  afterAll(async () => {
    await identityDb?.end();
    await tree?.close();
    await auth?.stop();
  });

  it('a scope revoked from the client is refused at once though the token check was cached', async () => {
    const token = await auth.token('urn:gatehouse:tree', 'trees:read trees:write');
    const get = () => request(tree.http).get('/api/v1/trees').set('Authorization', `Bearer ${token}`);
    await get().expect(200);
    await get().expect(200); // from the cache now

    // What the management API does when a permission is revoked: delete it and announce the client, in one
    // transaction.
    const feed = tree.built.app.get(TreeChangeFeed);
    const before = feed.applied;
    await identityDb.query('BEGIN');
    await identityDb.query(
      `DELETE FROM client_permissions p USING scopes s
        WHERE s.id = p.scope_id AND p.client_id = $1 AND s.scope_name = 'trees:read'`,
      [auth.clientId],
    );
    await identityDb.query(`SELECT pg_notify('gatehouse_identity_changes', $1)`, [`client:${auth.clientId}`]);
    await identityDb.query('COMMIT');
    await eventually(() => feed.applied > before, { what: 'the change notification' });

    const refused = await get().expect(403);
    expect(refused.body).toEqual({ code: 'forbidden', message: expect.stringContaining('trees:read') });
  });
});
