// Foundation error shapes on the tree API: bodies over the limit, malformed JSON and unknown fields.
import { client, startTree, treeTokens, type TreeApp } from './support/app.js';
import { startTokenServer, type TokenServer } from '@gatehouse/token-server-testing';

describe('tree: request bodies', () => {
  let auth: TokenServer;
  let tree: TreeApp;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    auth = await startTokenServer();
    tree = await startTree(auth.url);
    api = client(tree.http, (await treeTokens(auth)).all);
  });
  afterAll(async () => {
    await tree?.close();
    await auth?.stop();
  });

  it('413 payload_too_large for a body over 1 MiB, and nothing is written', async () => {
    const before = await api.get('/api/v1/trees?total_count=true').expect(200);
    const res = await api
      .raw('post', '/api/v1/trees')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ code: 'big', name: 'x'.repeat(1024 * 1024 + 1) }))
      .expect(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large' });
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    const after = await api.get('/api/v1/trees?total_count=true').expect(200);
    expect(after.body.total_count).toBe(before.body.total_count);
  });

  it('400 invalid_request for malformed JSON and for an unknown body field, naming it', async () => {
    const bad = await api
      .raw('post', '/api/v1/trees')
      .set('Content-Type', 'application/json')
      .send('{"code": "x",')
      .expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request' });
    const unknown = await api
      .post('/api/v1/trees', { code: 'unknown-field', name: 'n', colour: 'red' })
      .expect(400);
    expect(unknown.body).toMatchObject({ code: 'invalid_request' });
    expect(unknown.body.message).toContain('colour');
  });
});
