import { Management, uniq, type Version } from './management-harness.js';

/**
 * Every request example of the identity OpenAPI document is a valid request: each one is sent, as it stands, to the
 * running app and succeeds (2xx). Path parameters name records made here; a create's record is then modified with the
 * modify example and deleted, so the next example starts clean. (Bodies that name the caller's own records by id carry
 * no example: no id could be valid for everyone.)
 */
interface Operation {
  requestBody?: { content?: Record<string, { example?: unknown }> };
}
type Doc = { paths: Record<string, Record<string, Operation>> };

describe.each(['v1', 'v2'] as Version[])('request examples under /api/%s', (v) => {
  let m: Management;
  let doc: Doc;
  const fixtures: Record<string, string> = {};

  beforeAll(async () => {
    // instances answer 501 unless multi-instance mode is on
    m = await Management.start({ MULTI_INSTANCE: 'true' });
    doc = (await m.call('get', '/docs/openapi.json', '').expect(200)).body as Doc;
    const made = async (path: string, body: Record<string, unknown>) =>
      ((await m.call('post', `/api/v1${path}`).send(body).expect(201)).body as { id: string }).id;
    fixtures.client_id = await made('/clients', { client_name: uniq('fx') });
    fixtures.resource_id = await made('/resources', {
      resource_name: uniq('fx'),
      resource_type: 'api',
      resource_metadata: { identifier_url: `https://${uniq('fx')}.test/` },
    });
    fixtures.scope_id = await made(`/resources/${fixtures.resource_id}/scopes`, { scope_name: uniq('fx') });
    fixtures.tenant_id = await made('/tenants', { tenant_name: uniq('fx') });
    fixtures.provider_id = await made(`/tenants/${fixtures.tenant_id}/identity-providers`, {
      identity_provider: 'oidc',
      name: uniq('fx'),
      issuer: `https://${uniq('fx')}.test`,
      client_id: 'fx',
    });
    fixtures.user_id = await made('/users', { user_email: `${uniq('fx')}@example.test` });
    fixtures.role_id = await made('/roles', { role_name: uniq('fx') });
    fixtures.group_id = await made('/groups', { group_name: uniq('fx') });
    const [instance] = await m.ds.rows<{ id: string }>(`SELECT id FROM instances WHERE is_default`);
    fixtures.instance_id = instance.id;
  });
  afterAll(async () => {
    await m?.close();
  });

  const exampleOf = (path: string, method: string) =>
    doc.paths[path]?.[method]?.requestBody?.content?.['application/json']?.example;
  const fill = (path: string, ids: Record<string, string> = {}) =>
    path.replace(/\{([a-z_]+)\}/g, (_all, name: string) => {
      const id = ids[name] ?? fixtures[name];
      if (!id) throw new Error(`no record for {${name}} in ${path}`);
      return id;
    });

  async function send(method: string, path: string, body: unknown, ids: Record<string, string> = {}) {
    const res = await m.call(method as 'post', fill(path, ids)).send(body as object);
    const op = `${method.toUpperCase()} ${path}`;
    expect({
      op,
      body,
      status: res.status < 300 ? 'ok' : res.status,
      answer: res.status < 300 ? '' : res.body,
    }).toEqual({ op, body, status: 'ok', answer: '' });
    return res.body as { id?: string };
  }

  it('each example, sent as it stands, succeeds', async () => {
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith(`/api/${v}/`));
    const done = new Set<string>();
    let sent = 0;
    for (const path of paths) {
      const createExample = exampleOf(path, 'post');
      if (createExample === undefined) continue;
      const one = paths.find((p) => p.startsWith(`${path}/{`) && !p.slice(path.length + 1).includes('/'));
      const created = await send('post', path, createExample);
      done.add(`post ${path}`);
      sent++;
      if (!one || !created.id) continue;
      const param = /\{([a-z_]+)\}$/.exec(one)![1];
      const ids = { [param]: created.id };
      const modify = exampleOf(one, 'patch');
      if (modify !== undefined) {
        await send('patch', one, modify, ids);
        done.add(`patch ${one}`);
        sent++;
      }
      // The record goes, so that the next example's names and addresses are free (instances cannot be deleted).
      if (doc.paths[one].delete) await m.call('delete', fill(one, ids)).expect(204);
    }
    // the rest (a modify or action on a record made here); a record an example makes is deleted after it
    for (const path of paths) {
      for (const method of ['post', 'put', 'patch']) {
        const example = exampleOf(path, method);
        if (example === undefined || done.has(`${method} ${path}`)) continue;
        const answer = await send(method, path, example);
        sent++;
        const parent = path.slice(0, path.lastIndexOf('/'));
        const one = paths.find(
          (p) => p.startsWith(`${parent}/{`) && !p.slice(parent.length + 1).includes('/'),
        );
        if (answer.id && !Object.values(fixtures).includes(answer.id) && one && doc.paths[one].delete) {
          await m.call('delete', fill(one, { [/\{([a-z_]+)\}$/.exec(one)![1]]: answer.id })).expect(204);
        }
      }
    }
    expect(sent).toBeGreaterThanOrEqual(20);
  });

  it('the client example makes a client the token server serves at /authorize (its callbacks are read)', () => {
    const example = exampleOf(`/api/${v}/clients`, 'post') as { client_metadata: Record<string, unknown> };
    if (v === 'v1') {
      expect(example.client_metadata.urls).toEqual({
        callbacks: [expect.stringMatching(/^https:/)],
        logout_urls: [expect.stringMatching(/^https:/)],
      });
    }
    expect(JSON.stringify(doc)).not.toContain('"redirect_uris"');
  });
});
