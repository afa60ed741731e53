import request from 'supertest';
import { loadTreeEnv, startTree, treeTokens, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

describe('hole 6: one noisy address blocks everyone behind it', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let tokens: Awaited<ReturnType<typeof treeTokens>>;

  beforeAll(async () => {
    auth = await startTokenServer();
    // The test connects from loopback, as a load balancer on the same host would: it is the trusted proxy.
    tree = await startTree(auth.url, { TRUST_PROXY: '127.0.0.1/8, ::1', RATE_LIMIT_AUTH_FAILURES: '3' });
    tokens = await treeTokens(auth);
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  const from = (ip: string, token: string) =>
    request(tree.http)
      .get('/api/v1/trees')
      .set('Authorization', `Bearer ${token}`)
      .set('X-Forwarded-For', ip);

  it('X-Forwarded-For from the trusted proxy separates the callers behind it; a good token is still served', async () => {
    for (let i = 0; i < 3; i++) await from('203.0.113.50', 'bad-token').expect(401);
    const refused = await from('203.0.113.50', 'bad-token').expect(429);
    expect(refused.body.code).toBe('too_many_requests');
    await from('198.51.100.50', 'bad-token').expect(401);
    await from('203.0.113.50', tokens.read).expect(200);
  });

  it('TRUST_PROXY=true is refused at boot: it would believe any client-written X-Forwarded-For', async () => {
    expect(() => loadTreeEnv({ AUTH_URL: auth.url, TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
  });
});
