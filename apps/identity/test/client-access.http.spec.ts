import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

let m: Management;
let reader: { token: string };

beforeAll(async () => {
  m = await Management.start();
  reader = await m.caller(['clients:read', 'resources:read']);
});
afterAll(async () => {
  await m?.close();
});

/** A resource with scopes, made through the API; returns its id and scope ids by name. */
async function resourceWithScopes(names: string[], tenantId?: string) {
  const r = (
    await m
      .call('post', '/api/v1/resources')
      .send({
        resource_type: 'api',
        resource_name: uniq('api'),
        resource_metadata: { identifier_url: `urn:test:${uniq('r')}` },
      })
      .expect(201)
  ).body;
  if (tenantId) await m.ds.rows(`UPDATE resources SET tenant_id = $2 WHERE id = $1`, [r.id, tenantId]);
  const scopes: Record<string, string> = {};
  for (const name of names) {
    scopes[name] = (
      await m.call('post', `/api/v1/resources/${r.id}/scopes`).send({ scope_name: name }).expect(201)
    ).body.id;
  }
  return { id: r.id as string, identifier: r.resource_metadata.identifier_url as string, scopes };
}

const newClient = async (extra: Record<string, unknown> = {}) =>
  (
    await m
      .call('post', '/api/v1/clients')
      .send({ client_name: uniq('app'), ...extra })
      .expect(201)
  ).body as {
    id: string;
    client_secret: string;
  };

const countRows = async (table: string, clientId: string) =>
  Number(
    (await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE client_id = $1`, [clientId]))[0]
      .n,
  );

describe.each(VERSIONS)(
  'Client Resources, Client Permissions, Resource Clients under /api/%s',
  (v: Version) => {
    const api = `/api/${v}`;
    const total = ENVELOPE[v].total;

    describe('client resources', () => {
      it('authorize (204, idempotent), list with resource_data of the presentation, revoke (204) with its permissions', async () => {
        const r = await resourceWithScopes(['read', 'write']);
        const c = await newClient();
        const path = `${api}/clients/${c.id}/resources`;
        expect((await m.call('get', path).expect(200)).body).toMatchObject({ count: 0, items: [] });
        await m
          .call('post', path)
          .send({ resources: [r.id] })
          .expect(204);
        await m
          .call('post', path)
          .send({ resources: [r.id, r.id.toUpperCase()] })
          .expect(204);
        expect(await countRows('client_resources', c.id)).toBe(1);

        const list = await m.call('get', `${path}?${total}=true`, reader.token).expect(200);
        expect(list.body).toMatchObject({ [total]: 1, count: 1 });
        const item = list.body.items[0];
        expect(item).toMatchObject({ client_id: c.id, resource_id: r.id, created_by: m.auth.clientId });
        expect(item.resource_data).toMatchObject({ id: r.id, resource_type: 'api' });
        if (v === 'v1')
          expect(item.resource_data.resource_metadata).toMatchObject({
            identifier_url: r.identifier,
            is_system: false,
          });
        else
          expect(item.resource_data.resource_metadata.api).toMatchObject({
            identifier_url: r.identifier,
            is_system: false,
          });
        expect(item.resource_data.resource_metadata).not.toHaveProperty('signing_secret');

        const q = encodeURIComponent(`resource_id = '${r.id}' and resource_data.resource_type = 'api'`);
        expect((await m.call('get', `${path}?q=${q}&fields=resource_id`).expect(200)).body.items).toEqual([
          { resource_id: r.id },
        ]);

        await m
          .call('post', `${api}/clients/${c.id}/permissions`)
          .send({ permissions: [{ resource_id: r.id, scopes: [r.scopes.read] }] })
          .expect(204);
        expect(await countRows('client_permissions', c.id)).toBe(1);
        await m
          .call('delete', path)
          .send({ resources: [r.id] })
          .expect(204);
        await m
          .call('delete', path)
          .send({ resources: [r.id] })
          .expect(204);
        expect(await countRows('client_resources', c.id)).toBe(0);
        expect(await countRows('client_permissions', c.id)).toBe(0);
      });

      it('404 for an unknown client or resource (nothing written), 400 for bad bodies, 403 without clients:write', async () => {
        const r = await resourceWithScopes([]);
        const c = await newClient();
        const path = `${api}/clients/${c.id}/resources`;
        const missing = missingId();
        const res = await m
          .call('post', path)
          .send({ resources: [r.id, missing] })
          .expect(404);
        expect(res.body).toEqual({ code: 'not_found', message: expect.stringContaining(missing) });
        expect(await countRows('client_resources', c.id)).toBe(0);
        await m
          .call('post', `${api}/clients/${missingId()}/resources`)
          .send({ resources: [r.id] })
          .expect(404);
        await m.call('get', `${api}/clients/${missingId()}/resources`).expect(404);
        await m
          .call('delete', path)
          .send({ resources: [missing] })
          .expect(404);
        for (const body of [
          {},
          { resources: [] },
          { resources: ['x'] },
          { resources: r.id },
          { resources: [r.id], more: 1 },
        ]) {
          const bad = await m.call('post', path).send(body);
          expect([JSON.stringify(body), bad.status]).toEqual([JSON.stringify(body), 400]);
        }
        await m.call('get', `${path}?sort=nope`).expect(400);
        await m
          .call('post', path, reader.token)
          .send({ resources: [r.id] })
          .expect(403);
        await m.call('get', path, '').expect(401);
        await m.call('patch', path).send({}).expect(405);
      });

      it('409 for a resource of another tenant than the client', async () => {
        const [t1, t2] = [await m.tenant(), await m.tenant()];
        const r = await resourceWithScopes([], t1);
        const c = await newClient({ tenant_id: t2 });
        const res = await m
          .call('post', `${api}/clients/${c.id}/resources`)
          .send({ resources: [r.id] })
          .expect(409);
        expect(res.body.code).toBe('conflict');
      });

      it('403 when revoking a system resource from the default client', async () => {
        const mgmt = await m.managementResource();
        const res = await m
          .call('delete', `${api}/clients/${m.auth.clientId}/resources`)
          .send({ resources: [mgmt.id] })
          .expect(403);
        expect(res.body.code).toBe('forbidden');
      });
    });

    describe('client permissions', () => {
      it('grant (204, idempotent), list in the shape of the presentation, revoke (204, idempotent)', async () => {
        const r = await resourceWithScopes(['a', 'b', 'c']);
        const c = await newClient();
        await m
          .call('post', `${api}/clients/${c.id}/resources`)
          .send({ resources: [r.id] })
          .expect(204);
        const path = `${api}/clients/${c.id}/permissions`;
        const body = { permissions: [{ resource_id: r.id, scopes: [r.scopes.a, r.scopes.b] }] };
        await m.call('post', path).send(body).expect(204);
        await m.call('post', path).send(body).expect(204);
        const list = await m.call('get', `${path}?sort=created_at&${total}=true`, reader.token).expect(200);
        expect(list.body[total]).toBe(2);
        for (const item of list.body.items) {
          expect(item).toMatchObject({ client_id: c.id, resource_id: r.id, scope_id: expect.any(String) });
          if (v === 'v1') {
            expect(item.resource_data.id).toBe(r.id);
            expect(item.scope_data).toMatchObject({
              id: item.scope_id,
              resource_id: r.id,
              scope_name: expect.any(String),
            });
          } else {
            expect(Object.keys(item).sort()).toEqual(
              [
                'client_id',
                'created_at',
                'created_by',
                'id',
                'resource_id',
                'scope_id',
                'updated_at',
                'updated_by',
              ].sort(),
            );
          }
        }
        if (v === 'v1') {
          const q = encodeURIComponent(`scope_data.scope_name = 'b'`);
          expect(
            (await m.call('get', `${path}?q=${q}`).expect(200)).body.items.map(
              (p: { scope_id: string }) => p.scope_id,
            ),
          ).toEqual([r.scopes.b]);
        }
        const expanded = await m.call('get', `${api}/clients/${c.id}?expand=all`).expect(200);
        expect(expanded.body.permissions).toHaveLength(2);
        expect(expanded.body[ENVELOPE[v].aggregations]).toMatchObject({ resources: 1, permissions: 2 });

        await m
          .call('delete', path)
          .send({ permissions: [{ resource_id: r.id, scopes: [r.scopes.a, r.scopes.c] }] })
          .expect(204);
        const left = await m.call('get', path).expect(200);
        expect(left.body.items.map((p: { scope_id: string }) => p.scope_id)).toEqual([r.scopes.b]);
      });

      it('409 when the resource is not authorized to the client; 404 for unknown or foreign scopes; 400 for bad bodies; nothing written', async () => {
        const r = await resourceWithScopes(['x']);
        const other = await resourceWithScopes(['y']);
        const c = await newClient();
        const path = `${api}/clients/${c.id}/permissions`;
        const conflict = await m
          .call('post', path)
          .send({ permissions: [{ resource_id: r.id, scopes: [r.scopes.x] }] })
          .expect(409);
        expect(conflict.body).toEqual({
          code: 'conflict',
          message: expect.stringContaining('not authorized'),
        });
        await m
          .call('post', `${api}/clients/${c.id}/resources`)
          .send({ resources: [r.id] })
          .expect(204);
        await m
          .call('post', path)
          .send({ permissions: [{ resource_id: r.id, scopes: [other.scopes.y] }] })
          .expect(404);
        await m
          .call('post', path)
          .send({ permissions: [{ resource_id: r.id, scopes: [r.scopes.x, missingId()] }] })
          .expect(404);
        await m
          .call('post', path)
          .send({ permissions: [{ resource_id: missingId(), scopes: [r.scopes.x] }] })
          .expect(404);
        await m
          .call('post', `${api}/clients/${missingId()}/permissions`)
          .send({ permissions: [{ resource_id: r.id, scopes: [r.scopes.x] }] })
          .expect(404);
        expect(await countRows('client_permissions', c.id)).toBe(0);
        for (const body of [
          {},
          { permissions: [] },
          { permissions: [{ resource_id: r.id, scopes: [] }] },
          { permissions: [{ resource_id: r.id, scopes: ['nope'] }] },
        ]) {
          await m.call('post', path).send(body).expect(400);
        }
        const withoutResource = await m.call('post', path).send({ permissions: [{ scopes: [r.scopes.x] }] });
        if (v === 'v1') expect(withoutResource.status).toBe(400);
        else {
          expect(withoutResource.status).toBe(204);
          expect(await countRows('client_permissions', c.id)).toBe(1);
        }
        await m
          .call('post', path, reader.token)
          .send({ permissions: [{ resource_id: r.id, scopes: [r.scopes.x] }] })
          .expect(403);
        await m.call('put', path).send({}).expect(405);
      });

      it("403 when revoking a system resource's permissions from the default client", async () => {
        const mgmt = await m.managementResource();
        await m
          .call('delete', `${api}/clients/${m.auth.clientId}/permissions`)
          .send({ permissions: [{ resource_id: mgmt.id, scopes: [mgmt.scopes['users:read']] }] })
          .expect(403);
      });
    });

    describe('resource clients', () => {
      it('lists every client with authorized; authorize and revoke from the resource side (204, idempotent)', async () => {
        const r = await resourceWithScopes(['s']);
        const [a, b] = [await newClient(), await newClient()];
        const path = `${api}/resources/${r.id}/clients`;
        await m
          .call('post', path)
          .send({ clients: [a.id] })
          .expect(204);
        await m
          .call('post', path)
          .send({ clients: [a.id] })
          .expect(204);
        const ids = encodeURIComponent(`client_id in ('${a.id}', '${b.id}')`);
        const list = await m
          .call('get', `${path}?q=${ids}&sort=authorized:desc&${total}=true`, reader.token)
          .expect(200);
        expect(list.body[total]).toBe(2);
        expect(
          list.body.items.map((x: { client_id: string; authorized: boolean }) => [x.client_id, x.authorized]),
        ).toEqual([
          [a.id, true],
          [b.id, false],
        ]);
        const [auth, not] = list.body.items;
        expect(auth).toMatchObject({
          id: expect.any(String),
          resource_id: r.id,
          created_by: m.auth.clientId,
        });
        expect(not).toMatchObject({ id: null, resource_id: r.id, created_at: null });
        expect(auth.client_data).toMatchObject({ id: a.id, client_name: expect.any(String) });
        expect(auth.client_data).not.toHaveProperty('client_secret');
        expect(auth.client_data).toHaveProperty('is_global');
        if (v === 'v1') expect(auth.client_data).toHaveProperty('client_type');
        else expect(auth.client_data).not.toHaveProperty('client_type');
        const onlyAuth = encodeURIComponent(`authorized = true and client_id in ('${a.id}', '${b.id}')`);
        expect((await m.call('get', `${path}?q=${onlyAuth}`).expect(200)).body.count).toBe(1);

        const expanded = await m.call('get', `${api}/resources/${r.id}?expand=all`).expect(200);
        expect(expanded.body.clients.map((x: { client_id: string }) => x.client_id)).toEqual([a.id]);
        expect(expanded.body.scopes.map((s: { scope_name: string }) => s.scope_name)).toEqual(['s']);

        await m
          .call('delete', path)
          .send({ clients: [a.id, b.id] })
          .expect(204);
        expect((await m.call('get', `${path}?q=${onlyAuth}`).expect(200)).body.count).toBe(0);
      });

      it('404 for unknown resources and clients, 409 across tenants, 403 for the default client on a system resource, 400 for bad bodies', async () => {
        const r = await resourceWithScopes([]);
        await m.call('get', `${api}/resources/${missingId()}/clients`).expect(404);
        await m
          .call('post', `${api}/resources/${missingId()}/clients`)
          .send({ clients: [m.auth.clientId] })
          .expect(404);
        await m
          .call('post', `${api}/resources/${r.id}/clients`)
          .send({ clients: [missingId()] })
          .expect(404);
        await m.call('post', `${api}/resources/${r.id}/clients`).send({ clients: 'x' }).expect(400);
        await m
          .call('post', `${api}/resources/${r.id}/clients`, reader.token)
          .send({ clients: [m.auth.clientId] })
          .expect(403);
        const [t1, t2] = [await m.tenant(), await m.tenant()];
        const tr = await resourceWithScopes([], t1);
        const tc = await newClient({ tenant_id: t2 });
        await m
          .call('post', `${api}/resources/${tr.id}/clients`)
          .send({ clients: [tc.id] })
          .expect(409);
        const mgmt = await m.managementResource();
        await m
          .call('delete', `${api}/resources/${mgmt.id}/clients`)
          .send({ clients: [m.auth.clientId] })
          .expect(403);
      });
    });
  },
);
