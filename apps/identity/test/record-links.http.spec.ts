import { Management, uniq, VERSIONS, type Version } from './management-harness.js';

/**
 * Every `links.*` of every record type leads somewhere: a record read without `expand` links its child collections,
 * and following each link answers 200 with a collection, never 404. Also GET /roles/:role_id/groups itself: the
 * groups that hold a role, as a list with the usual parameters.
 */
let m: Management;

beforeAll(async () => {
  // Multi-instance mode, so instance records (and their links) are served too.
  m = await Management.start({ MULTI_INSTANCE: 'true' });
});
afterAll(async () => {
  await m?.close();
});

type Rec = { id: string; links?: Record<string, string> };

async function create(path: string, body: Record<string, unknown>): Promise<Rec> {
  return (await m.call('post', `/api/v1/${path}`).send(body).expect(201)).body as Rec;
}

describe.each(VERSIONS)('links of records under /api/%s', (v: Version) => {
  const api = `/api/${v}`;

  it('every link of a user, role, group, client, resource, tenant and instance answers 200', async () => {
    const user = await create('users', {
      user_email: `${uniq('u')}@example.test`,
      password: 'user-password-1',
    });
    const role = await create('roles', { role_name: uniq('role') });
    const group = await create('groups', { group_name: uniq('group') });
    const client = await create('clients', { client_name: uniq('client') });
    const resource = await create('resources', {
      resource_type: 'api',
      resource_name: uniq('api'),
      resource_metadata: { identifier_url: `urn:test:${uniq('r')}` },
    });
    const tenant = await create('tenants', { tenant_name: uniq('tenant') });
    const instance = ((await m.call('get', `${api}/instances?limit=1`).expect(200)).body as { items: Rec[] })
      .items[0];
    const records: [string, string][] = [
      ['users', user.id],
      ['roles', role.id],
      ['groups', group.id],
      ['clients', client.id],
      ['resources', resource.id],
      ['tenants', tenant.id],
      ['instances', instance.id],
    ];
    const followed: string[] = [];
    for (const [path, id] of records) {
      const rec = (await m.call('get', `${api}/${path}/${id}`).expect(200)).body as Rec;
      expect([path, rec.links && Object.keys(rec.links).length > 0]).toEqual([path, true]);
      for (const [name, link] of Object.entries(rec.links!)) {
        expect(link).toBe(`${api}/${path}/${id}/${name}`);
        const res = await m.call('get', link);
        expect([link, res.status]).toEqual([link, 200]);
        expect([link, Array.isArray(res.body.items)]).toEqual([link, true]);
        followed.push(`${path}.${name}`);
      }
    }
    expect(followed).toEqual(expect.arrayContaining(['roles.groups', 'roles.members', 'groups.roles']));
  });

  it('GET /roles/:role_id/groups lists the groups that hold the role, with the list parameters', async () => {
    const role = await create('roles', { role_name: uniq('role') });
    const other = await create('roles', { role_name: uniq('role') });
    const groups: Rec[] = [];
    for (let i = 0; i < 3; i++) {
      const g = await create('groups', { group_name: uniq(`g${i}`) });
      await m
        .call('post', `/api/v1/groups/${g.id}/roles`)
        .send({ roles: [role.id] })
        .expect(204);
      groups.push(g);
    }
    await m
      .call('post', `/api/v1/groups/${groups[0].id}/roles`)
      .send({ roles: [other.id] })
      .expect(204);

    const total = v === 'v1' ? 'total_count' : 'totalCount';
    const hasMore = v === 'v1' ? 'has_more' : 'hasMore';
    const all = (await m.call('get', `${api}/roles/${role.id}/groups?${total}=true`).expect(200)).body;
    expect(all[total]).toBe(3);
    expect(all.items.map((l: { group_id: string }) => l.group_id).sort()).toEqual(
      groups.map((g) => g.id).sort(),
    );
    expect(all.items[0]).toMatchObject({
      id: expect.any(String),
      role_id: role.id,
      group_id: expect.any(String),
      created_at: expect.any(String),
    });

    const page = (
      await m.call('get', `${api}/roles/${role.id}/groups?limit=2&offset=1&sort=created_at:desc`).expect(200)
    ).body;
    expect(page.items).toHaveLength(2);
    expect(page[hasMore]).toBe(false);
    expect(page.items.map((l: { group_id: string }) => l.group_id)).toEqual([groups[1].id, groups[0].id]);

    const picked = (await m.call('get', `${api}/roles/${role.id}/groups?fields=group_id`).expect(200)).body;
    expect(picked.items[0]).toEqual({ group_id: expect.any(String) });

    const q = encodeURIComponent(`group_id = '${groups[2].id}'`);
    const one = (await m.call('get', `${api}/roles/${role.id}/groups?q=${q}`).expect(200)).body;
    expect(one.items.map((l: { group_id: string }) => l.group_id)).toEqual([groups[2].id]);

    // The same links as the role record embeds on expand=all.
    const expanded = (await m.call('get', `${api}/roles/${role.id}?expand=all`).expect(200)).body;
    expect(expanded.groups.map((l: { id: string }) => l.id).sort()).toEqual(
      all.items.map((l: { id: string }) => l.id).sort(),
    );

    await m.call('get', `${api}/roles/${role.id}/groups?fields=nope`).expect(400);
    await m.call('get', `${api}/roles/${role.id}/groups?limit=0`).expect(400);
    await m.call('get', `${api}/roles/not-a-uuid/groups`).expect(400);
    const missing = await m
      .call('get', `${api}/roles/00000000-0000-4000-8000-000000000000/groups`)
      .expect(404);
    expect(missing.body).toMatchObject({ code: 'not_found' });
  });

  it('needs roles:read, and a tenant caller sees only the roles of its reach', async () => {
    const role = await create('roles', { role_name: uniq('role') });
    const noScope = await m.caller(['users:read']);
    await m.call('get', `${api}/roles/${role.id}/groups`, noScope.token).expect(403);
    const reader = await m.caller(['roles:read']);
    await m.call('get', `${api}/roles/${role.id}/groups`, reader.token).expect(200);

    const tenant = await create('tenants', { tenant_name: uniq('tenant') });
    const other = await create('tenants', { tenant_name: uniq('tenant') });
    const foreign = await create('roles', { role_name: uniq('role'), tenant_id: other.id });
    const tenantCaller = await m.caller(['roles:read'], { tenantId: tenant.id, isGlobal: false });
    await m.call('get', `${api}/roles/${foreign.id}/groups`, tenantCaller.token).expect(404);
    await m.call('get', `${api}/roles/${foreign.id}/members`, tenantCaller.token).expect(404);
    const own = await create('roles', { role_name: uniq('role'), tenant_id: tenant.id });
    const ownGroup = await create('groups', { group_name: uniq('group'), tenant_id: tenant.id });
    await m
      .call('post', `/api/v1/groups/${ownGroup.id}/roles`)
      .send({ roles: [own.id] })
      .expect(204);
    const listed = (await m.call('get', `${api}/roles/${own.id}/groups`, tenantCaller.token).expect(200))
      .body;
    expect(listed.items.map((l: { group_id: string }) => l.group_id)).toEqual([ownGroup.id]);
  });
});
