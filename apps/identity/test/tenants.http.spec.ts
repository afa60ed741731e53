import request from 'supertest';
import { buildService, type BuiltService } from '@gatehouse/service';
import { identityService } from '../src/identity.service-definition.js';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';
import type { IdentityEnv } from './support.js';

/**
 * Tenants and Tenant Admins over HTTP in both presentations (every operation's success and its 4xx, nothing written
 * on an error), a tenant-bound caller's reach, the user's `tenants` child, and multi-tenant mode (MULTI_TENANT) on
 * Get resources. Missing tokens and scopes of every route: authorization.http.spec.ts.
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

const count = async (sql: string, params: unknown[] = []) =>
  (await m.ds.one<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))!.n;

async function newTenant(v: Version = 'v1', extra: Record<string, unknown> = {}) {
  return (
    await m
      .call('post', `/api/${v}/tenants`)
      .send({ tenant_name: uniq('tenant'), ...extra })
      .expect(201)
  ).body as { id: string; tenant_name: string; updated_at: string };
}

async function newUser(tenantId: string | null = null) {
  return (
    await m
      .call('post', '/api/v1/users')
      .send({ user_email: `${uniq('u')}@example.test`, ...(tenantId ? { tenant_id: tenantId } : {}) })
      .expect(201)
  ).body as { id: string; user_email: string };
}

describe.each(VERSIONS)('tenants under /api/%s', (v: Version) => {
  const api = `/api/${v}`;
  const { total, aggregations, hasMore } = ENVELOPE[v];

  it('create (201 with aggregations and links), get, list with q/sort/fields/total, modify, delete', async () => {
    const a = uniq('tenant-a');
    const created = await m
      .call('post', `${api}/tenants`)
      .send({ tenant_name: a, tenant_description: 'first', app_metadata: [{ key: 'k', value: 'v' }] })
      .expect(201);
    const rec = created.body;
    expect(rec).toMatchObject({
      id: expect.any(String),
      instance_id: expect.any(String),
      tenant_name: a,
      tenant_description: 'first',
      app_metadata: [{ key: 'k', value: 'v' }],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(rec[aggregations]).toEqual({
      id: rec.id,
      tenant_id: rec.id,
      users: 0,
      clients: 0,
      resources: 0,
      roles: 0,
      groups: 0,
      admins: 0,
      created_by: rec.created_by,
      created_at: rec.created_at,
      updated_by: rec.updated_by,
      updated_at: rec.updated_at,
    });
    expect(rec.links).toEqual({ admins: `${api}/tenants/${rec.id}/admins` });
    expect(rec).not.toHaveProperty(v === 'v1' ? 'aggregates' : 'aggregations');

    const b = uniq('tenant-b');
    await m.call('post', `${api}/tenants`).send({ tenant_name: b }).expect(201);

    const got = await m.call('get', `${api}/tenants/${rec.id}?fields=id,tenant_name`).expect(200);
    expect(got.body).toEqual({ id: rec.id, tenant_name: a });
    const expanded = await m.call('get', `${api}/tenants/${rec.id}?expand=all`).expect(200);
    expect(expanded.body.admins).toEqual([]);
    expect(expanded.body).not.toHaveProperty('links');

    const q = encodeURIComponent(`tenant_name in ('${a}', '${b}')`);
    const list = await m
      .call('get', `${api}/tenants?q=${q}&sort=tenant_name:desc&${total}=true&limit=1`)
      .expect(200);
    expect(list.body).toMatchObject({ [total]: 2, count: 1, [hasMore]: true, limit: 1, offset: 0 });
    expect(list.body.items[0].tenant_name).toBe(b);
    expect(list.body.items[0][aggregations]).toMatchObject({ users: 0, admins: 0 });
    const slim = await m.call('get', `${api}/tenants?q=${q}&fields=id`).expect(200);
    expect(slim.body.items.every((t: object) => Object.keys(t).join() === 'id')).toBe(true);

    const modified = await m
      .call('patch', `${api}/tenants/${rec.id}`)
      .send({ tenant_description: null, app_metadata: [] })
      .expect(200);
    expect(modified.body).toMatchObject({ tenant_name: a, tenant_description: null, app_metadata: [] });
    expect(modified.body.updated_at >= rec.updated_at).toBe(true);
    const renamed = await m
      .call('patch', `${api}/tenants/${rec.id}?fields=tenant_name`)
      .send({ tenant_name: `${a}-x` })
      .expect(200);
    expect(renamed.body).toEqual({ tenant_name: `${a}-x` });

    await m.call('delete', `${api}/tenants/${rec.id}`).expect(204);
    await m.call('get', `${api}/tenants/${rec.id}`).expect(404);
    await m.call('delete', `${api}/tenants/${rec.id}`).expect(404);
  });

  it('4xx: a taken name (any case) 409, bad bodies 400, bad ids 400, unknown 404; nothing written', async () => {
    const t = await newTenant(v);
    const before = await count('tenants');
    const dup = await m.call('post', `${api}/tenants`).send({ tenant_name: t.tenant_name.toUpperCase() });
    expect([dup.status, dup.body.code]).toEqual([409, 'conflict']);
    expect(dup.body.message).toContain('tenant_name');
    for (const body of [
      {},
      { tenant_name: '' },
      { tenant_name: 42 },
      { tenant_name: uniq('t'), extra: 1 },
      { tenant_name: uniq('t'), tenant_id: missingId() },
      { tenant_name: uniq('t'), app_metadata: 'x' },
      { tenant_name: uniq('t'), tenant_description: 7 },
    ]) {
      const r = await m.call('post', `${api}/tenants`).send(body);
      expect([JSON.stringify(body), r.status, r.body.code]).toEqual([
        JSON.stringify(body),
        400,
        'invalid_request',
      ]);
    }
    const notObject = await m.call('post', `${api}/tenants`).send([{ tenant_name: uniq('t') }]);
    expect(notObject.status).toBe(400);
    expect(await count('tenants')).toBe(before);

    const other = await newTenant(v);
    const taken = await m.call('patch', `${api}/tenants/${other.id}`).send({ tenant_name: t.tenant_name });
    expect(taken.status).toBe(409);
    for (const body of [{ tenant_name: null }, { tenant_name: '' }, { nope: 1 }]) {
      await m.call('patch', `${api}/tenants/${other.id}`).send(body).expect(400);
    }
    const unchanged = await m.call('get', `${api}/tenants/${other.id}`).expect(200);
    expect(unchanged.body.tenant_name).toBe(other.tenant_name);
    expect(unchanged.body.updated_at).toBe(other.updated_at);

    for (const method of ['get', 'patch', 'delete'] as const) {
      await m.call(method, `${api}/tenants/not-a-uuid`).send({}).expect(400);
      await m.call(method, `${api}/tenants/${missingId()}`).send({}).expect(404);
    }
    await m.call('get', `${api}/tenants/${t.id}?fields=nope`).expect(400);
    await m.call('get', `${api}/tenants?expand=some`).expect(400);
    await m.call('get', `${api}/tenants?q=${encodeURIComponent('nope = 1')}`).expect(400);
    await m.call('get', `${api}/tenants?sort=nope:asc`).expect(400);
  });

  it('aggregations count what the tenant holds; deleting it is 409 until it holds nothing', async () => {
    const t = await newTenant(v);
    const user = await newUser(t.id);
    const global = await newUser();
    await m
      .call('post', '/api/v1/clients')
      .send({ client_name: uniq('c'), tenant_id: t.id, is_global: false })
      .expect(201);
    const role = await m
      .call('post', '/api/v1/roles')
      .send({ role_name: uniq('r'), tenant_id: t.id })
      .expect(201);
    const group = await m
      .call('post', '/api/v1/groups')
      .send({ group_name: uniq('g'), tenant_id: t.id })
      .expect(201);
    // A resource of the tenant: made by a caller of the tenant (resources take the caller's tenant).
    const bound = await m.caller(['resources:write'], { tenantId: t.id, isGlobal: false });
    const resource = await m
      .call('post', '/api/v1/resources', bound.token)
      .send({
        resource_type: 'api',
        resource_name: uniq('api'),
        resource_metadata: { identifier_url: `urn:test:${uniq('r')}` },
      })
      .expect(201);
    expect(resource.body.tenant_id).toBe(t.id);
    await m
      .call('post', `${api}/tenants/${t.id}/admins`)
      .send({ users: [user.id, global.id] })
      .expect(204);

    const got = await m.call('get', `${api}/tenants/${t.id}?fields=${aggregations}`).expect(200);
    // clients: the one made here and the tenant-bound caller
    expect(got.body[aggregations]).toMatchObject({
      users: 1,
      clients: 2,
      resources: 1,
      roles: 1,
      groups: 1,
      admins: 2,
    });

    const refused = await m.call('delete', `${api}/tenants/${t.id}`).expect(409);
    expect(refused.body.message).toMatch(/1 users, 2 clients, 1 resources, 1 roles, 1 groups/);
    expect(await count('tenant_admins WHERE tenant_id = $1', [t.id])).toBe(2);

    await m.call('delete', `/api/v1/resources/${resource.body.id}`, bound.token).expect(204);
    await m.ds.exec(`DELETE FROM clients WHERE tenant_id = $1`, [t.id]);
    await m.call('delete', `/api/v1/roles/${role.body.id}`).expect(204);
    await m.call('delete', `/api/v1/groups/${group.body.id}`).expect(204);
    expect((await m.call('delete', `${api}/tenants/${t.id}`).expect(409)).body.message).toMatch(/1 users/);
    await m.call('delete', `/api/v1/users/${user.id}`).expect(204);
    // Only admins left (a global user): the tenant goes, and its admin links with it; the user stays.
    await m.call('delete', `${api}/tenants/${t.id}`).expect(204);
    expect(await count('tenant_admins WHERE tenant_id = $1', [t.id])).toBe(0);
    await m.call('get', `/api/v1/users/${global.id}`).expect(200);
  });

  it('admins: add (204, idempotent), list as User records, embed, remove (204, idempotent)', async () => {
    const t = await newTenant(v);
    const own = await newUser(t.id);
    const global = await newUser();
    const url = `${api}/tenants/${t.id}/admins`;
    await m
      .call('post', url)
      .send({ users: [own.id, global.id] })
      .expect(204);
    await m
      .call('post', url)
      .send({ users: [own.id.toUpperCase(), own.id] })
      .expect(204);
    expect(await count('tenant_admins WHERE tenant_id = $1', [t.id])).toBe(2);

    const list = await m.call('get', `${url}?${total}=true&sort=user_email:asc`).expect(200);
    expect(list.body).toMatchObject({ [total]: 2, count: 2, [hasMore]: false });
    expect(list.body.items.map((u: { id: string }) => u.id).sort()).toEqual([own.id, global.id].sort());
    expect(list.body.items[0]).toMatchObject({ user_email: expect.any(String), is_blocked: false });
    expect(list.body.items[0][aggregations]).toMatchObject({ user_id: list.body.items[0].id });
    expect(list.body.items[0].links.tenants).toBe(`${api}/users/${list.body.items[0].id}/tenants`);
    const q = encodeURIComponent(`user_email = '${own.user_email}'`);
    const one = await m.call('get', `${url}?q=${q}&fields=id,user_email`).expect(200);
    expect(one.body.items).toEqual([{ id: own.id, user_email: own.user_email }]);

    const expanded = await m.call('get', `${api}/tenants/${t.id}?expand=all&fields=id,admins`).expect(200);
    expect(expanded.body.admins.map((u: { id: string }) => u.id).sort()).toEqual([own.id, global.id].sort());
    const page = await m
      .call('get', `${api}/tenants?expand=all&q=${encodeURIComponent(`id = '${t.id}'`)}`)
      .expect(200);
    expect(page.body.items[0].admins).toHaveLength(2);

    await m
      .call('delete', url)
      .send({ users: [own.id] })
      .expect(204);
    await m
      .call('delete', url)
      .send({ users: [own.id] })
      .expect(204);
    const left = await m.call('get', url).expect(200);
    expect(left.body.items.map((u: { id: string }) => u.id)).toEqual([global.id]);
  });

  it('admins 4xx: a user of another tenant 409, unknown 404, bad bodies 400, unknown tenant 404; nothing written', async () => {
    const t = await newTenant(v);
    const other = await newTenant(v);
    const own = await newUser(t.id);
    const foreign = await newUser(other.id);
    const url = `${api}/tenants/${t.id}/admins`;
    const clash = await m.call('post', url).send({ users: [own.id, foreign.id] });
    expect([clash.status, clash.body.code]).toEqual([409, 'conflict']);
    expect(clash.body.message).toContain(foreign.id);
    const unknown = await m.call('post', url).send({ users: [own.id, missingId()] });
    expect(unknown.status).toBe(404);
    for (const body of [{}, { users: [] }, { users: ['x'] }, { users: own.id }, { users: [own.id], x: 1 }]) {
      await m.call('post', url).send(body).expect(400);
      await m.call('delete', url).send(body).expect(400);
    }
    expect(await count('tenant_admins WHERE tenant_id = $1', [t.id])).toBe(0);
    await m
      .call('post', url)
      .send({ users: [own.id] })
      .expect(204);
    await m
      .call('delete', url)
      .send({ users: [missingId()] })
      .expect(404);
    expect(await count('tenant_admins WHERE tenant_id = $1', [t.id])).toBe(1);
    for (const method of ['get', 'post', 'delete'] as const) {
      await m
        .call(method, `${api}/tenants/${missingId()}/admins`)
        .send({ users: [own.id] })
        .expect(404);
      await m
        .call(method, `${api}/tenants/nope/admins`)
        .send({ users: [own.id] })
        .expect(400);
    }
    await m.call('get', `${url}?fields=nope`).expect(400);
  });

  it("the user's tenants child: its own tenant and the tenants it administers, one entry each", async () => {
    const [home, managed] = [await newTenant(v), await newTenant(v)];
    const user = await newUser(home.id);
    const lone = await newUser();
    await m
      .call('post', `${api}/tenants/${home.id}/admins`)
      .send({ users: [user.id] })
      .expect(204);
    await m
      .call('post', `${api}/tenants/${managed.id}/admins`)
      .send({ users: [lone.id] })
      .expect(204);

    const rec = await m.call('get', `${api}/users/${user.id}?expand=all&fields=id,tenants`).expect(200);
    expect(rec.body.tenants).toEqual([
      expect.objectContaining({
        id: home.id,
        user_id: user.id,
        tenant_id: home.id,
        is_member: true,
        is_admin: true,
      }),
    ]);
    const loneRec = await m.call('get', `${api}/users/${lone.id}?expand=all`).expect(200);
    expect(loneRec.body.tenants).toEqual([
      {
        id: managed.id,
        user_id: lone.id,
        tenant_id: managed.id,
        is_member: false,
        is_admin: true,
        created_by: expect.any(String),
        created_at: expect.any(String),
        updated_by: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    const linked = await m.call('get', `${api}/users/${lone.id}`).expect(200);
    expect(linked.body.links.tenants).toBe(`${api}/users/${lone.id}/tenants`);
    const listed = await m.call('get', `${api}/users/${lone.id}/tenants?${total}=true`).expect(200);
    expect(listed.body).toMatchObject({ [total]: 1, count: 1 });
    expect(listed.body.items[0]).toMatchObject({ tenant_id: managed.id, is_admin: true });
    const filtered = await m
      .call('get', `${api}/users/${user.id}/tenants?q=${encodeURIComponent('is_member = false')}`)
      .expect(200);
    expect(filtered.body.items).toEqual([]);
    await m.call('get', `${api}/users/${missingId()}/tenants`).expect(404);
    await m.call('get', `${api}/users/nope/tenants`).expect(400);
  });

  it('scopes: tenants:read for reads, tenants:write for changes (403, nothing written)', async () => {
    const t = await newTenant(v);
    const reader = await m.caller(['tenants:read']);
    const nobody = await m.caller(['users:read']);
    await m.call('get', `${api}/tenants/${t.id}`, reader.token).expect(200);
    await m.call('get', `${api}/tenants`, nobody.token).expect(403);
    await m.call('get', `${api}/tenants/${t.id}/admins`, nobody.token).expect(403);
    const before = await count('tenants');
    const denied = await m.call('post', `${api}/tenants`, reader.token).send({ tenant_name: uniq('t') });
    expect([denied.status, denied.body.message]).toEqual([403, expect.stringContaining('tenants:write')]);
    await m.call('patch', `${api}/tenants/${t.id}`, reader.token).send({ tenant_name: 'x' }).expect(403);
    await m.call('delete', `${api}/tenants/${t.id}`, reader.token).expect(403);
    await m
      .call('post', `${api}/tenants/${t.id}/admins`, reader.token)
      .send({ users: [missingId()] })
      .expect(403);
    expect(await count('tenants')).toBe(before);
    await m.call('get', `${api}/tenants`, '').expect(401);
  });
});

describe('a tenant-bound caller (a client with is_global false)', () => {
  it('sees and modifies only its own tenant, manages its admins, and cannot create or delete tenants', async () => {
    const [mine, theirs] = [await newTenant(), await newTenant()];
    const caller = await m.caller(['tenants:read', 'tenants:write', 'users:read'], {
      tenantId: mine.id,
      isGlobal: false,
    });
    for (const v of VERSIONS) {
      const api = `/api/${v}`;
      const { total } = ENVELOPE[v];
      const list = await m.call('get', `${api}/tenants?${total}=true`, caller.token).expect(200);
      expect(list.body[total]).toBe(1);
      expect(list.body.items[0].id).toBe(mine.id);
      await m.call('get', `${api}/tenants/${mine.id}`, caller.token).expect(200);
      await m.call('get', `${api}/tenants/${theirs.id}`, caller.token).expect(404);
      await m
        .call('patch', `${api}/tenants/${theirs.id}`, caller.token)
        .send({ tenant_description: 'x' })
        .expect(404);
      const patched = await m
        .call('patch', `${api}/tenants/${mine.id}`, caller.token)
        .send({ tenant_description: `mine ${v}` })
        .expect(200);
      expect(patched.body.tenant_description).toBe(`mine ${v}`);
      const before = await count('tenants');
      const made = await m.call('post', `${api}/tenants`, caller.token).send({ tenant_name: uniq('t') });
      expect([made.status, made.body.code]).toEqual([403, 'forbidden']);
      await m.call('delete', `${api}/tenants/${mine.id}`, caller.token).expect(403);
      await m.call('delete', `${api}/tenants/${theirs.id}`, caller.token).expect(403);
      expect(await count('tenants')).toBe(before);
      await m.call('get', `${api}/tenants/${theirs.id}/admins`, caller.token).expect(404);
    }
    // Admins among its own tenant's users; a global user or another tenant's is out of its reach (404).
    const own = await newUser(mine.id);
    const global = await newUser();
    const foreign = await newUser(theirs.id);
    const url = `/api/v1/tenants/${mine.id}/admins`;
    await m
      .call('post', url, caller.token)
      .send({ users: [own.id] })
      .expect(204);
    await m
      .call('post', url, caller.token)
      .send({ users: [global.id] })
      .expect(404);
    await m
      .call('post', url, caller.token)
      .send({ users: [foreign.id] })
      .expect(404);
    await m
      .call('post', `/api/v1/tenants/${theirs.id}/admins`, caller.token)
      .send({ users: [own.id] })
      .expect(404);
    // A global admin of its tenant (added by a global caller) is not among the users it sees.
    await m
      .call('post', url)
      .send({ users: [global.id] })
      .expect(204);
    const admins = await m.call('get', url, caller.token).expect(200);
    expect(admins.body.items.map((u: { id: string }) => u.id)).toEqual([own.id]);
    const all = await m.call('get', url).expect(200);
    expect(all.body.items).toHaveLength(2);
  });

  it("creates and sees only its tenant's users, clients and resources", async () => {
    const [mine, theirs] = [await newTenant(), await newTenant()];
    const caller = await m.caller(
      ['users:read', 'users:write', 'clients:read', 'clients:write', 'resources:read', 'resources:write'],
      { tenantId: mine.id, isGlobal: false },
    );
    const foreignUser = await newUser(theirs.id);
    const globalUser = await newUser();
    const user = await m
      .call('post', '/api/v1/users', caller.token)
      .send({ user_email: `${uniq('own')}@example.test` })
      .expect(201);
    const client = await m
      .call('post', '/api/v1/clients', caller.token)
      .send({ client_name: uniq('own') })
      .expect(201);
    const resource = await m
      .call('post', '/api/v1/resources', caller.token)
      .send({
        resource_type: 'api',
        resource_name: uniq('own'),
        resource_metadata: { identifier_url: `urn:test:${uniq('own')}` },
      })
      .expect(201);
    expect(await count('users WHERE id = $1 AND tenant_id = $2', [user.body.id, mine.id])).toBe(1);
    expect(await count('clients WHERE id = $1 AND tenant_id = $2', [client.body.id, mine.id])).toBe(1);
    expect(await count('resources WHERE id = $1 AND tenant_id = $2', [resource.body.id, mine.id])).toBe(1);
    const foreignResource = (
      await m
        .call(
          'post',
          '/api/v1/resources',
          (await m.caller(['resources:write'], { tenantId: theirs.id, isGlobal: false })).token,
        )
        .send({
          resource_type: 'api',
          resource_name: uniq('theirs'),
          resource_metadata: { identifier_url: `urn:test:${uniq('theirs')}` },
        })
        .expect(201)
    ).body;

    for (const [path, own, others] of [
      ['users', user.body.id, [foreignUser.id, globalUser.id]],
      ['clients', client.body.id, []],
      ['resources', resource.body.id, [foreignResource.id]],
    ] as const) {
      const list = await m.call('get', `/api/v1/${path}?limit=100`, caller.token).expect(200);
      const ids = list.body.items.map((r: { id: string }) => r.id);
      expect(ids).toContain(own);
      // the User record carries its tenant in `tenants`; the table says it for every kind
      expect(await count(`${path} WHERE id = ANY($1::uuid[]) AND tenant_id = $2`, [ids, mine.id])).toBe(
        ids.length,
      );
      for (const id of others) await m.call('get', `/api/v1/${path}/${id}`, caller.token).expect(404);
    }
    // Another tenant named on create: 403, nothing written.
    const before = await count('users');
    await m
      .call('post', '/api/v1/users', caller.token)
      .send({ user_email: `${uniq('x')}@example.test`, tenant_id: theirs.id })
      .expect(403);
    expect(await count('users')).toBe(before);
  });
});

describe('multi-tenant mode (MULTI_TENANT, default true)', () => {
  let off: BuiltService<IdentityEnv>;
  beforeAll(async () => {
    off = (await buildService(identityService, {
      ...m.env,
      MULTI_TENANT: false,
    })) as BuiltService<IdentityEnv>;
  });
  afterAll(async () => {
    await off?.close();
  });

  it('on: the tenant_id header of Get resources narrows the list; off: the header is ignored', async () => {
    const t = await newTenant();
    const bound = await m.caller(['resources:write'], { tenantId: t.id, isGlobal: false });
    const r = await m
      .call('post', '/api/v1/resources', bound.token)
      .send({
        resource_type: 'api',
        resource_name: uniq('api'),
        resource_metadata: { identifier_url: `urn:test:${uniq('mt')}` },
      })
      .expect(201);
    for (const v of VERSIONS) {
      const { total } = ENVELOPE[v];
      const on = await m.call('get', `/api/${v}/resources?${total}=true`).set('tenant_id', t.id).expect(200);
      expect(on.body[total]).toBe(1);
      expect(on.body.items[0].id).toBe(r.body.id);
      await m.call('get', `/api/${v}/resources`).set('tenant_id', 'nope').expect(400);

      const ignored = await request(off.app.getHttpServer())
        .get(`/api/${v}/resources?${total}=true`)
        .set('Authorization', `Bearer ${m.adminToken}`)
        .set('tenant_id', t.id)
        .expect(200);
      expect(ignored.body[total]).toBeGreaterThan(1);
      await request(off.app.getHttpServer())
        .get(`/api/${v}/resources`)
        .set('Authorization', `Bearer ${m.adminToken}`)
        .set('tenant_id', 'nope')
        .expect(200);
    }
    // A tenant-bound caller may name only its own tenant.
    const reader = await m.caller(['resources:read'], { tenantId: t.id, isGlobal: false });
    const other = await newTenant();
    await m.call('get', '/api/v1/resources', reader.token).set('tenant_id', other.id).expect(403);
    await m.call('get', '/api/v1/resources', reader.token).set('tenant_id', t.id).expect(200);
  });
});
