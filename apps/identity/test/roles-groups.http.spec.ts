import { randomUUID } from 'node:crypto';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

/**
 * Roles, Role Permissions, Role Members, Groups, Group Members, Group Roles, Nested Groups, User Permissions, User
 * Roles and User Groups over HTTP, in both presentations: every operation's success and the 4xx it can give
 * (missing scopes and tokens: authorization.http.spec.ts).
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

async function newUser(extra: Record<string, unknown> = {}) {
  return (
    await m
      .call('post', '/api/v2/users')
      .send({ user_email: `${uniq('u')}@example.test`, password: 'user-password-1', ...extra })
      .expect(201)
  ).body as { id: string; user_email: string };
}

async function apiWithScopes(names: string[], extra: Record<string, unknown> = {}) {
  const r = (
    await m
      .call('post', '/api/v1/resources')
      .send({
        resource_type: 'api',
        resource_name: uniq('api'),
        resource_metadata: { identifier_url: `urn:test:${uniq('r')}`, rbac_enabled: true },
        ...extra,
      })
      .expect(201)
  ).body as { id: string };
  const scopes: Record<string, string> = {};
  for (const name of names) {
    scopes[name] = (
      await m.call('post', `/api/v1/resources/${r.id}/scopes`).send({ scope_name: name }).expect(201)
    ).body.id;
  }
  return { id: r.id, scopes };
}

const count = async (table: string, where: string, params: unknown[]) =>
  (await m.ds.one<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params))!.n;

describe.each(VERSIONS)('roles and groups under /api/%s', (v: Version) => {
  const api = `/api/${v}`;
  const { total, aggregations, hasMore } = ENVELOPE[v];

  describe.each([
    ['roles', 'role', ['permissions', 'users', 'groups'], ['permissions', 'members', 'groups']],
    ['groups', 'group', ['members', 'roles', 'groups', 'parents'], ['members', 'roles', 'groups']],
  ] as const)('/%s', (path, noun, counts, children) => {
    const name = `${noun}_name`;
    const description = `${noun}_description`;

    it('create (201 with aggregations and links), get, list with q/sort/fields/total, modify, delete', async () => {
      const a = uniq(`${noun}-a`);
      const created = await m
        .call('post', `${api}/${path}`)
        .send({ [name]: a, [description]: 'first', app_metadata: [{ key: 'k', value: 'v' }] })
        .expect(201);
      const rec = created.body;
      expect(rec).toMatchObject({
        id: expect.any(String),
        instance_id: expect.any(String),
        tenant_id: null,
        [name]: a,
        [description]: 'first',
        app_metadata: [{ key: 'k', value: 'v' }],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const expectedCounts = Object.fromEntries(counts.map((c) => [c, 0]));
      expect(rec[aggregations]).toMatchObject({ id: rec.id, [`${noun}_id`]: rec.id, ...expectedCounts });
      expect(Object.keys(rec.links).sort()).toEqual([...children].sort());
      expect(rec.links[children[0]]).toBe(`${api}/${path}/${rec.id}/${children[0]}`);

      const b = uniq(`${noun}-b`);
      await m
        .call('post', `${api}/${path}`)
        .send({ [name]: b })
        .expect(201);

      const got = await m.call('get', `${api}/${path}/${rec.id}?fields=id,${name}`).expect(200);
      expect(got.body).toEqual({ id: rec.id, [name]: a });

      const q = encodeURIComponent(`${name} in ('${a}', '${b}')`);
      const list = await m
        .call('get', `${api}/${path}?q=${q}&sort=${name}:desc&${total}=true&limit=1`)
        .expect(200);
      expect(list.body).toMatchObject({ [total]: 2, count: 1, [hasMore]: true, limit: 1, offset: 0 });
      expect(list.body.items[0][name]).toBe(b);

      const modified = await m
        .call('patch', `${api}/${path}/${rec.id}`)
        .send({ [description]: null })
        .expect(200);
      expect(modified.body).toMatchObject({ [name]: a, [description]: null });
      expect(modified.body.updated_at >= rec.updated_at).toBe(true);

      await m.call('delete', `${api}/${path}/${rec.id}`).expect(204);
      await m.call('get', `${api}/${path}/${rec.id}`).expect(404);
      await m.call('delete', `${api}/${path}/${rec.id}`).expect(404);
    });

    it('4xx: a taken name (any case) 409, missing or bad fields 400, unknown fields 400, bad ids 400, unknown 404', async () => {
      const n = uniq(noun);
      await m
        .call('post', `${api}/${path}`)
        .send({ [name]: n })
        .expect(201);
      const dup = await m
        .call('post', `${api}/${path}`)
        .send({ [name]: n.toUpperCase() })
        .expect(409);
      expect(dup.body.code).toBe('conflict');
      const other = (
        await m
          .call('post', `${api}/${path}`)
          .send({ [name]: uniq(noun) })
          .expect(201)
      ).body;
      await m
        .call('patch', `${api}/${path}/${other.id}`)
        .send({ [name]: n })
        .expect(409);

      const missing = await m.call('post', `${api}/${path}`).send({}).expect(400);
      expect(missing.body.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: name })]),
      );
      await m
        .call('post', `${api}/${path}`)
        .send({ [name]: 42 })
        .expect(400);
      await m
        .call('post', `${api}/${path}`)
        .send({ [name]: uniq(noun), color: 'red' })
        .expect(400);
      await m
        .call('post', `${api}/${path}`)
        .send({ [name]: uniq(noun), tenant_id: randomUUID() })
        .expect(400);
      await m
        .call('patch', `${api}/${path}/${other.id}`)
        .send({ [name]: null })
        .expect(400);
      await m.call('patch', `${api}/${path}/${other.id}`).send({ tenant_id: null }).expect(400);
      await m.call('get', `${api}/${path}/not-a-uuid`).expect(400);
      await m.call('get', `${api}/${path}/${missingId()}`).expect(404);
      await m
        .call('patch', `${api}/${path}/${missingId()}`)
        .send({ [description]: 'x' })
        .expect(404);
      await m.call('get', `${api}/${path}?sort=nope`).expect(400);
      await m.call('get', `${api}/${path}?q=${encodeURIComponent('nope = 1')}`).expect(400);
      await m.call('get', `${api}/${path}?fields=nope`).expect(400);
    });

    it('a tenant-bound caller creates in its tenant and sees only its tenant', async () => {
      const tenant = await m.tenant();
      const mine = await m.caller([`${path}:read`, `${path}:write`], { tenantId: tenant, isGlobal: false });
      const global = (
        await m
          .call('post', `${api}/${path}`)
          .send({ [name]: uniq(noun) })
          .expect(201)
      ).body;
      const own = (
        await m
          .call('post', `${api}/${path}`, mine.token)
          .send({ [name]: uniq(noun) })
          .expect(201)
      ).body;
      expect(own.tenant_id).toBe(tenant);
      await m
        .call('post', `${api}/${path}`, mine.token)
        .send({ [name]: uniq(noun), tenant_id: await m.tenant() })
        .expect(403);
      await m.call('get', `${api}/${path}/${global.id}`, mine.token).expect(404);
      await m.call('delete', `${api}/${path}/${global.id}`, mine.token).expect(404);
      const list = await m.call('get', `${api}/${path}?limit=100`, mine.token).expect(200);
      expect(list.body.items.map((r: { id: string }) => r.id)).toEqual([own.id]);
    });
  });

  describe('links', () => {
    it('Role Members and User Roles: add (204, idempotent), list both ways, counts and expand, remove (204, idempotent)', async () => {
      const role = (
        await m
          .call('post', `${api}/roles`)
          .send({ role_name: uniq('role') })
          .expect(201)
      ).body;
      const [u1, u2] = [await newUser(), await newUser()];
      for (let i = 0; i < 2; i++) {
        await m
          .call('post', `${api}/roles/${role.id}/members`)
          .send({ users: [u1.id, u2.id, u1.id.toUpperCase()] })
          .expect(204);
      }
      const members = await m.call('get', `${api}/roles/${role.id}/members?${total}=true`).expect(200);
      expect(members.body[total]).toBe(2);
      expect(members.body.items[0]).toMatchObject({
        id: expect.any(String),
        role_id: role.id,
        user_id: expect.any(String),
        created_at: expect.any(String),
      });
      const roles = await m.call('get', `${api}/users/${u1.id}/roles`).expect(200);
      expect(roles.body.items.map((r: { role_id: string }) => r.role_id)).toEqual([role.id]);

      const rec = await m.call('get', `${api}/roles/${role.id}?expand=all`).expect(200);
      expect(rec.body[aggregations].users).toBe(2);
      expect(rec.body.members).toHaveLength(2);
      const user = await m.call('get', `${api}/users/${u1.id}?expand=all`).expect(200);
      expect(user.body[aggregations].roles).toBe(1);
      expect(user.body.roles).toEqual([expect.objectContaining({ role_id: role.id, user_id: u1.id })]);

      await m
        .call('delete', `${api}/users/${u1.id}/roles`)
        .send({ roles: [role.id] })
        .expect(204);
      await m
        .call('delete', `${api}/users/${u1.id}/roles`)
        .send({ roles: [role.id] })
        .expect(204);
      expect(await count('user_roles', 'role_id = $1', [role.id])).toBe(1);
      await m
        .call('post', `${api}/users/${u1.id}/roles`)
        .send({ roles: [role.id] })
        .expect(204);
      expect(await count('user_roles', 'role_id = $1', [role.id])).toBe(2);
    });

    it('4xx of links: bad body 400, unknown owner or target 404 with nothing written, tenant mismatch 409', async () => {
      const role = (
        await m
          .call('post', `${api}/roles`)
          .send({ role_name: uniq('role') })
          .expect(201)
      ).body;
      const u = await newUser();
      await m.call('post', `${api}/roles/${role.id}/members`).send({}).expect(400);
      await m.call('post', `${api}/roles/${role.id}/members`).send({ users: [] }).expect(400);
      await m
        .call('post', `${api}/roles/${role.id}/members`)
        .send({ users: ['nope'] })
        .expect(400);
      await m
        .call('post', `${api}/roles/${role.id}/members`)
        .send({ roles: [u.id] })
        .expect(400);
      await m
        .call('post', `${api}/roles/${missingId()}/members`)
        .send({ users: [u.id] })
        .expect(404);
      const partly = await m
        .call('post', `${api}/roles/${role.id}/members`)
        .send({ users: [u.id, missingId()] })
        .expect(404);
      expect(partly.body.code).toBe('not_found');
      expect(await count('user_roles', 'role_id = $1', [role.id])).toBe(0);
      await m.call('get', `${api}/roles/not-a-uuid/members`).expect(400);
      await m.call('get', `${api}/users/${missingId()}/groups`).expect(404);

      const tenant = await m.tenant();
      const tenantRole = (
        await m
          .call('post', `${api}/roles`)
          .send({ role_name: uniq('role'), tenant_id: tenant })
          .expect(201)
      ).body;
      const clash = await m
        .call('post', `${api}/roles/${tenantRole.id}/members`)
        .send({ users: [u.id] })
        .expect(409);
      expect(clash.body.code).toBe('conflict');
      const tenantUser = await newUser({ tenant_id: tenant });
      await m
        .call('post', `${api}/roles/${tenantRole.id}/members`)
        .send({ users: [tenantUser.id] })
        .expect(204);
      const group = (
        await m
          .call('post', `${api}/groups`)
          .send({ group_name: uniq('g') })
          .expect(201)
      ).body;
      // a tenant's role goes only to a group of that tenant
      await m
        .call('post', `${api}/groups/${group.id}/roles`)
        .send({ roles: [tenantRole.id] })
        .expect(409);
      await m
        .call('post', `${api}/groups/${group.id}/roles`)
        .send({ roles: [role.id] })
        .expect(204);
    });

    it('Group Members, User Groups, Group Roles and Nested Groups; a cycle (or self) is 409 and writes nothing', async () => {
      const g = async () =>
        (
          await m
            .call('post', `${api}/groups`)
            .send({ group_name: uniq('g') })
            .expect(201)
        ).body as {
          id: string;
        };
      const [a, b, c] = [await g(), await g(), await g()];
      const u = await newUser();
      await m
        .call('post', `${api}/groups/${c.id}/members`)
        .send({ users: [u.id] })
        .expect(204);
      expect(
        (await m.call('get', `${api}/users/${u.id}/groups`).expect(200)).body.items.map(
          (x: { group_id: string }) => x.group_id,
        ),
      ).toEqual([c.id]);
      await m
        .call('post', `${api}/users/${u.id}/groups`)
        .send({ groups: [b.id] })
        .expect(204);
      expect((await m.call('get', `${api}/groups/${b.id}/members`).expect(200)).body.count).toBe(1);
      await m
        .call('delete', `${api}/groups/${b.id}/members`)
        .send({ users: [u.id] })
        .expect(204);

      await m
        .call('post', `${api}/groups/${a.id}/groups`)
        .send({ groups: [b.id] })
        .expect(204);
      await m
        .call('post', `${api}/groups/${b.id}/groups`)
        .send({ groups: [c.id] })
        .expect(204);
      await m
        .call('post', `${api}/groups/${b.id}/groups`)
        .send({ groups: [c.id] })
        .expect(204);
      const nested = await m.call('get', `${api}/groups/${a.id}/groups`).expect(200);
      expect(nested.body.items).toEqual([expect.objectContaining({ parent_id: a.id, child_id: b.id })]);
      const before = await count('group_closure', 'true', []);
      for (const [parent, child] of [
        [c.id, a.id],
        [c.id, b.id],
        [a.id, a.id],
      ]) {
        const res = await m
          .call('post', `${api}/groups/${parent}/groups`)
          .send({ groups: [child] })
          .expect(409);
        expect(res.body.code).toBe('conflict');
      }
      expect(await count('group_closure', 'true', [])).toBe(before);
      const rec = await m.call('get', `${api}/groups/${b.id}`).expect(200);
      expect(rec.body[aggregations]).toMatchObject({ groups: 1, parents: 1, members: 0 });

      const role = (
        await m
          .call('post', `${api}/roles`)
          .send({ role_name: uniq('role') })
          .expect(201)
      ).body;
      await m
        .call('post', `${api}/groups/${a.id}/roles`)
        .send({ roles: [role.id] })
        .expect(204);
      expect((await m.call('get', `${api}/groups/${a.id}/roles`).expect(200)).body.items[0]).toMatchObject({
        group_id: a.id,
        role_id: role.id,
      });
      await m
        .call('delete', `${api}/groups/${a.id}/groups`)
        .send({ groups: [b.id] })
        .expect(204);
      await m
        .call('delete', `${api}/groups/${a.id}/groups`)
        .send({ groups: [b.id] })
        .expect(204);
      // now c may contain a (no cycle left)
      await m
        .call('post', `${api}/groups/${c.id}/groups`)
        .send({ groups: [a.id] })
        .expect(204);
      // deleting the middle group un-nests it on both sides
      await m.call('delete', `${api}/groups/${c.id}`).expect(204);
      expect(await count('group_children', 'parent_id = $1 OR child_id = $1', [c.id])).toBe(0);
      expect(await count('group_closure', 'descendant_id = $1 OR ancestor_id = $1', [c.id])).toBe(0);
    });
  });

  describe('permissions', () => {
    it('Role Permissions and User Permissions: grant (204, idempotent), list, revoke; 400/404/409', async () => {
      const res = await apiWithScopes(['a:read', 'a:write']);
      const role = (
        await m
          .call('post', `${api}/roles`)
          .send({ role_name: uniq('role') })
          .expect(201)
      ).body;
      const u = await newUser();
      const body = {
        permissions: [{ resource_id: res.id, scopes: [res.scopes['a:read'], res.scopes['a:write']] }],
      };
      for (const target of [`roles/${role.id}`, `users/${u.id}`]) {
        await m.call('post', `${api}/${target}/permissions`).send(body).expect(204);
        await m.call('post', `${api}/${target}/permissions`).send(body).expect(204);
        const list = await m
          .call('get', `${api}/${target}/permissions?${total}=true&sort=scope_id`)
          .expect(200);
        expect(list.body[total]).toBe(2);
        expect(list.body.items[0]).toMatchObject({ resource_id: res.id, scope_id: expect.any(String) });
        await m
          .call('delete', `${api}/${target}/permissions`)
          .send({ permissions: [{ resource_id: res.id, scopes: [res.scopes['a:write']] }] })
          .expect(204);
        expect((await m.call('get', `${api}/${target}/permissions`).expect(200)).body.count).toBe(1);

        await m.call('post', `${api}/${target}/permissions`).send({ permissions: [] }).expect(400);
        await m
          .call('post', `${api}/${target}/permissions`)
          .send({ permissions: [{ resource_id: res.id, scopes: [missingId()] }] })
          .expect(404);
        const otherApi = await apiWithScopes(['b:read']);
        await m
          .call('post', `${api}/${target}/permissions`)
          .send({ permissions: [{ resource_id: res.id, scopes: [otherApi.scopes['b:read']] }] })
          .expect(404);
      }
      await m.call('post', `${api}/roles/${missingId()}/permissions`).send(body).expect(404);
      const user = await m.call('get', `${api}/users/${u.id}`).expect(200);
      expect(user.body[aggregations].permissions).toBe(1);

      const tenant = await m.tenant();
      const tenantRole = (
        await m
          .call('post', `${api}/roles`)
          .send({ role_name: uniq('role'), tenant_id: tenant })
          .expect(201)
      ).body;
      const foreign = await apiWithScopes(['c:read']);
      await m.call('patch', `${api}/resources/${foreign.id}`).send({}).expect(200);
      await m.ds.exec(`UPDATE resources SET tenant_id = $2 WHERE id = $1`, [foreign.id, await m.tenant()]);
      await m
        .call('post', `${api}/roles/${tenantRole.id}/permissions`)
        .send({ permissions: [{ resource_id: foreign.id, scopes: [foreign.scopes['c:read']] }] })
        .expect(409);
    });

    it('a caller grants scopes of a system resource only as it holds them (403)', async () => {
      const caller = await m.caller(['roles:read', 'roles:write', 'users:read']);
      const role = (
        await m
          .call('post', `${api}/roles`, caller.token)
          .send({ role_name: uniq('role') })
          .expect(201)
      ).body;
      const mgmt = await m.managementResource();
      const denied = await m
        .call('post', `${api}/roles/${role.id}/permissions`, caller.token)
        .send({ permissions: [{ resource_id: mgmt.id, scopes: [mgmt.scopes['clients:write']] }] })
        .expect(403);
      expect(denied.body.message).toContain('clients:write');
      await m
        .call('post', `${api}/roles/${role.id}/permissions`, caller.token)
        .send({ permissions: [{ resource_id: mgmt.id, scopes: [mgmt.scopes['users:read']] }] })
        .expect(204);
    });

    it('GET /users/:id/permissions?effective=true lists every source: direct, role, group (ancestors too)', async () => {
      const res = await apiWithScopes(['d:one', 'd:two', 'd:three']);
      const u = await newUser();
      const role = (
        await m
          .call('post', `${api}/roles`)
          .send({ role_name: uniq('role') })
          .expect(201)
      ).body;
      const groupRole = (
        await m
          .call('post', `${api}/roles`)
          .send({ role_name: uniq('role') })
          .expect(201)
      ).body;
      const top = (
        await m
          .call('post', `${api}/groups`)
          .send({ group_name: uniq('top') })
          .expect(201)
      ).body;
      const leaf = (
        await m
          .call('post', `${api}/groups`)
          .send({ group_name: uniq('leaf') })
          .expect(201)
      ).body;
      const grant = (target: string, scopes: string[]) =>
        m
          .call('post', `${api}/${target}/permissions`)
          .send({ permissions: [{ resource_id: res.id, scopes: scopes.map((s) => res.scopes[s]) }] })
          .expect(204);
      await grant(`users/${u.id}`, ['d:one']);
      await grant(`roles/${role.id}`, ['d:one', 'd:two']);
      await grant(`roles/${groupRole.id}`, ['d:three']);
      await m
        .call('post', `${api}/users/${u.id}/roles`)
        .send({ roles: [role.id] })
        .expect(204);
      await m
        .call('post', `${api}/groups/${top.id}/roles`)
        .send({ roles: [groupRole.id] })
        .expect(204);
      await m
        .call('post', `${api}/groups/${top.id}/groups`)
        .send({ groups: [leaf.id] })
        .expect(204);
      await m
        .call('post', `${api}/groups/${leaf.id}/members`)
        .send({ users: [u.id] })
        .expect(204);

      const eff = await m
        .call('get', `${api}/users/${u.id}/permissions?effective=true&${total}=true&limit=100`)
        .expect(200);
      expect(eff.body[total]).toBe(4);
      const rows = eff.body.items.map((i: Record<string, string | null>) => [
        i.scope_name,
        i.source,
        i.role_id,
        i.group_id,
      ]);
      expect(rows).toEqual(
        expect.arrayContaining([
          ['d:one', 'direct', null, null],
          ['d:one', 'role', role.id, null],
          ['d:two', 'role', role.id, null],
          ['d:three', 'group', groupRole.id, top.id],
        ]),
      );
      const only = await m
        .call(
          'get',
          `${api}/users/${u.id}/permissions?effective=true&q=${encodeURIComponent("source = 'group'")}`,
        )
        .expect(200);
      expect(only.body.items).toHaveLength(1);
      await m.call('get', `${api}/users/${u.id}/permissions?effective=maybe`).expect(400);
      await m.call('get', `${api}/users/${missingId()}/permissions?effective=true`).expect(404);
      // the direct list is unchanged by effective ones
      expect((await m.call('get', `${api}/users/${u.id}/permissions`).expect(200)).body.count).toBe(1);
    });
  });
});
