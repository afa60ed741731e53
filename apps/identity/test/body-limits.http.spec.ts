// Foundation error shapes on the management API: bodies over the limit, malformed JSON, unknown fields, unknown
// routes; nothing is written on any of them.
import { Management, uniq } from './management-harness.js';

let m: Management;
beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

const count = async () => Number((await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM clients`))[0].n);

describe('identity: request bodies and routes', () => {
  it('413 payload_too_large for a body over 1 MiB, with rate-limit headers, writing nothing', async () => {
    const before = await count();
    const res = await m
      .call('post', '/api/v1/clients')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ client_name: uniq('big'), client_description: 'x'.repeat(1024 * 1024 + 1) }))
      .expect(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large' });
    expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(await count()).toBe(before);
  });

  it('400 invalid_request for malformed JSON and for an unknown field (named), writing nothing', async () => {
    const before = await count();
    const bad = await m
      .call('post', '/api/v2/clients')
      .set('Content-Type', 'application/json')
      .send('{"client_name": ')
      .expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request' });
    const unknown = await m
      .call('post', '/api/v1/clients')
      .send({ client_name: uniq('u'), colour: 'red' })
      .expect(400);
    expect(unknown.body.message).toContain('colour');
    expect(await count()).toBe(before);
  });

  it('404 not_found for an unknown route and for a malformed id is 400', async () => {
    const res = await m.call('get', '/api/v1/no-such-thing').expect(404);
    expect(res.body).toMatchObject({ code: 'not_found' });
    await m.call('get', '/api/v1/clients/not-a-uuid').expect(400);
  });
});
