import * as oidc from 'openid-client';
import { MANAGEMENT_AUDIENCE, purgeOnce } from '@gatehouse/identity-data';
import { TokenServerApp } from '@gatehouse/token-server-testing';
import { Management, uniq } from './management-harness.js';

/**
 * Every management write records its event in its own transaction (docs/events.md "Management writes"): who (the
 * calling client, or the user and the client it came through), what (record type and id), from where (address and
 * user agent), in which instance and tenant, and for a change the fields changed (a secret only as "changed"). A
 * write that fails records nothing. Real token server, real management API; the events table read directly.
 */
let m: Management;
let adminClientId: string;

beforeAll(async () => {
  m = await Management.start({ MULTI_INSTANCE: 'true' });
  adminClientId = m.auth.clientId.toLowerCase();
});
afterAll(async () => {
  await m?.close();
});

const UA = 'audit-spec/1.0';

interface EventRow {
  id: string;
  type: string;
  outcome: string;
  instance_id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string | null;
  via_client_id: string | null;
  user_id: string | null;
  client_id: string | null;
  record_type: string | null;
  record_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown> & {
    changes?: Record<string, unknown>;
    record?: Record<string, unknown>;
  };
}

/** The management API as the default (admin) client, with our user agent. */
const call = (method: 'get' | 'post' | 'patch' | 'put' | 'delete', url: string, token?: string) =>
  m.call(method, url, token).set('User-Agent', UA);

/**
 * The events recorded since `since` (a seq), oldest first; not the token server's token events (a test's callers
 * get their tokens from it, and it writes them in batches, whenever its timer runs).
 */
async function eventsSince(since: string, where = 'true', params: unknown[] = []): Promise<EventRow[]> {
  return m.ds.rows<EventRow>(
    `SELECT * FROM events WHERE seq > $1 AND type NOT LIKE 'token.%' AND (${where}) ORDER BY seq`,
    [since, ...params],
  );
}

async function mark(): Promise<string> {
  // the token server's batched events of what happened before (a sign-in) are written before the mark, not after it
  await m.auth.built.app.get(TokenServerApp).events.flush();
  const [r] = await m.ds.rows<{ s: string }>(`SELECT coalesce(max(seq), 0)::text AS s FROM events`);
  return r.s;
}

/** The one event of `type` about record `recordType` (and `recordId`) since `since`. */
async function oneEvent(since: string, type: string, recordType: string, recordId?: string) {
  const found = await eventsSince(
    since,
    `type = $2 AND record_type = $3 AND ($4::text IS NULL OR record_id = $4)`,
    [type, recordType, recordId ?? null],
  );
  expect(found).toHaveLength(1);
  return found[0];
}

const defaultInstance = async () =>
  (await m.ds.one<{ id: string }>(`SELECT id FROM instances WHERE is_default`))!.id;

/** What every event of the admin client's writes carries. */
async function byAdmin() {
  return {
    outcome: 'success',
    instance_id: await defaultInstance(),
    actor_type: 'client',
    actor_id: adminClientId,
    via_client_id: null,
    ip: expect.stringMatching(/127\.0\.0\.1|::1/),
    user_agent: UA,
  };
}

async function newUser(extra: Record<string, unknown> = {}) {
  const email = `${uniq('u')}@example.test`;
  const user = (
    await call('post', '/api/v1/users')
      .send({ user_email: email, password: 'user-password-1', ...extra })
      .expect(201)
  ).body as { id: string };
  return { id: user.id, email, password: 'user-password-1' };
}

async function apiWithScope() {
  const r = (
    await call('post', '/api/v1/resources')
      .send({
        resource_type: 'api',
        resource_name: uniq('api'),
        resource_metadata: { identifier_url: `urn:test:${uniq('r')}` },
      })
      .expect(201)
  ).body as { id: string };
  const scope = (
    await call('post', `/api/v1/resources/${r.id}/scopes`)
      .send({ scope_name: uniq('read') })
      .expect(201)
  ).body as { id: string };
  return { id: r.id, scope: scope.id };
}

describe('management writes record events', () => {
  it('clients: created, updated (old and new), secret rotated ("changed" only), deleted as one event', async () => {
    const since = await mark();
    const created = (
      await call('post', '/api/v1/clients')
        .send({ client_name: uniq('app') })
        .expect(201)
    ).body as { id: string; client_secret: string; client_name: string };
    const c = await oneEvent(since, 'mgmt.created', 'client', created.id);
    expect(c).toMatchObject({ ...(await byAdmin()), client_id: created.id, tenant_id: null });
    expect(JSON.stringify(c)).not.toContain(created.client_secret);

    const after = await mark();
    const renamed = uniq('renamed');
    await call('patch', `/api/v1/clients/${created.id}`).send({ client_name: renamed }).expect(200);
    const u = await oneEvent(after, 'mgmt.updated', 'client', created.id);
    expect(u).toMatchObject(await byAdmin());
    expect(u.details.changes).toEqual({ client_name: { old: created.client_name, new: renamed } });

    const rotating = await mark();
    const rotated = (await call('post', `/api/v1/clients/${created.id}/rotate-secret`).expect(200)).body as {
      client_secret: string;
    };
    const r = await oneEvent(rotating, 'mgmt.updated', 'client', created.id);
    expect(r.details.changes).toEqual({ client_secret: 'changed' });
    const stored = await m.ds.one<{ client_secret_enc: string }>(
      `SELECT client_secret_enc FROM clients WHERE id = $1`,
      [created.id],
    );
    for (const secret of [rotated.client_secret, created.client_secret, stored!.client_secret_enc]) {
      expect(JSON.stringify(r)).not.toContain(secret);
    }

    // authorized on an API with a permission: deleting the client cascades to both, and records one event
    const api = await apiWithScope();
    const linking = await mark();
    await call('post', `/api/v1/clients/${created.id}/resources`)
      .send({ resources: [api.id] })
      .expect(204);
    await call('post', `/api/v1/clients/${created.id}/permissions`)
      .send({ permissions: [{ resource_id: api.id, scopes: [api.scope] }] })
      .expect(204);
    const linked = await eventsSince(linking);
    expect(linked.map((e) => [e.type, e.record_type])).toEqual([
      ['mgmt.created', 'client_resource'],
      ['mgmt.created', 'client_permission'],
    ]);
    expect(linked[0]).toMatchObject({ ...(await byAdmin()), client_id: created.id });
    expect(linked[0].details.record).toEqual({ client_id: created.id, resource_id: api.id });
    expect(linked[1].details.record).toEqual({
      client_id: created.id,
      resource_id: api.id,
      scope_id: api.scope,
    });

    // revoking the access to the API takes its permissions with it: one event
    const revoking = await mark();
    await call('delete', `/api/v1/clients/${created.id}/resources`)
      .send({ resources: [api.id] })
      .expect(204);
    expect((await eventsSince(revoking)).map((e) => [e.type, e.record_type, e.client_id])).toEqual([
      ['mgmt.deleted', 'client_resource', created.id],
    ]);
    await call('post', `/api/v1/clients/${created.id}/resources`)
      .send({ resources: [api.id] })
      .expect(204);
    await call('post', `/api/v1/clients/${created.id}/permissions`)
      .send({ permissions: [{ resource_id: api.id, scopes: [api.scope] }] })
      .expect(204);

    const deleting = await mark();
    await call('delete', `/api/v1/clients/${created.id}`).expect(204);
    const gone = await eventsSince(deleting);
    expect(gone.map((e) => [e.type, e.record_type, e.record_id])).toEqual([
      ['mgmt.deleted', 'client', created.id],
    ]);
    expect(gone[0]).toMatchObject(await byAdmin());
  });

  it('are counted on /metrics by type and outcome once committed (the trigger writes them, the process counts)', async () => {
    const count = async () => {
      const text = (await m.call('get', '/metrics', '').expect(200)).text;
      const line = text
        .split('\n')
        .find((l) => l.startsWith('gatehouse_events_total{') && l.includes('type="mgmt.created"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await count();
    await call('post', '/api/v1/roles')
      .send({ role_name: uniq('counted') })
      .expect(201);
    expect(await count()).toBe(before + 1);
    // a write that fails commits nothing and counts nothing
    await call('post', '/api/v1/roles').send({}).expect(400);
    expect(await count()).toBe(before + 1);
  });

  it('concurrent writes of two callers, between reads, each record their own caller', async () => {
    const other = await m.caller(['roles:write', 'roles:read']);
    const roles = [];
    for (let i = 0; i < 10; i++) {
      roles.push(
        (
          (
            await call('post', '/api/v1/roles')
              .send({ role_name: uniq('cc') })
              .expect(201)
          ).body as { id: string }
        ).id,
      );
    }
    const since = await mark();
    await Promise.all(
      roles.flatMap((id, i) => [
        call('patch', `/api/v1/roles/${id}`, i % 2 ? other.token : undefined)
          .send({ role_description: `by ${i}` })
          .expect(200),
        call('get', '/api/v1/roles?per_page=5').expect(200),
      ]),
    );
    const events = await eventsSince(since);
    expect(events).toHaveLength(10);
    for (const e of events) {
      const i = roles.indexOf(e.record_id!);
      expect([e.type, e.actor_id, e.details.changes]).toEqual([
        'mgmt.updated',
        i % 2 ? other.id : adminClientId,
        { role_description: { old: null, new: `by ${i}` } },
      ]);
    }
  });

  it('a write that fails (409, 400, 404, 403) records nothing', async () => {
    const name = uniq('role');
    await call('post', '/api/v1/roles').send({ role_name: name }).expect(201);
    const client = (
      await call('post', '/api/v1/clients')
        .send({ client_name: uniq('app') })
        .expect(201)
    ).body as { id: string };
    const reader = await m.caller(['roles:read']);
    const since = await mark();
    await call('post', '/api/v1/roles').send({ role_name: name }).expect(409);
    await call('post', '/api/v1/roles').send({ role_name: 42 }).expect(400);
    await call('post', '/api/v1/users').send({ user_email: 'not an address' }).expect(400);
    await call('patch', `/api/v1/roles/00000000-0000-4000-8000-000000000000`)
      .send({ role_name: uniq('x') })
      .expect(404);
    await call('delete', `/api/v1/clients/00000000-0000-4000-8000-000000000000`).expect(404);
    await call('post', `/api/v1/clients/${client.id}/rotate-secret`)
      .send({ client_secret_expires_at: '2001-01-01T00:00:00Z' })
      .expect(400);
    // a caller without the write scope
    await call('post', '/api/v1/roles', reader.token)
      .send({ role_name: uniq('r') })
      .expect(403);
    expect(await eventsSince(since)).toEqual([]);
  });

  it('an UPDATE that changes nothing records nothing; a write outside the API (no audit context) neither', async () => {
    const role = (
      await call('post', '/api/v1/roles')
        .send({ role_name: uniq('role') })
        .expect(201)
    ).body as {
      id: string;
      role_name: string;
    };
    const since = await mark();
    await call('patch', `/api/v1/roles/${role.id}`).send({ role_name: role.role_name }).expect(200);
    await m.ds.exec(`UPDATE roles SET role_description = 'by hand' WHERE id = $1`, [role.id]);
    await m.ds.transaction((tx) =>
      tx.exec(`UPDATE roles SET role_description = 'by hand again' WHERE id = $1`, [role.id]),
    );
    expect(await eventsSince(since)).toEqual([]);
  });

  it('resources and scopes: created, updated, deleted (a scope is one event, not a resource change too)', async () => {
    const since = await mark();
    const api = await apiWithScope();
    const created = await eventsSince(since);
    expect(created.map((e) => [e.type, e.record_type, e.record_id])).toEqual([
      ['mgmt.created', 'resource', api.id],
      ['mgmt.created', 'scope', api.scope],
    ]);
    expect(created[1].details.record).toEqual({ resource_id: api.id });

    const upd = await mark();
    await call('patch', `/api/v1/resources/${api.id}/scopes/${api.scope}`)
      .send({ scope_name: 'renamed:scope' })
      .expect(200);
    expect((await oneEvent(upd, 'mgmt.updated', 'scope', api.scope)).details.changes).toMatchObject({
      scope_name: { old: expect.any(String), new: 'renamed:scope' },
    });
    await call('patch', `/api/v1/resources/${api.id}`).send({ resource_name: 'Renamed API' }).expect(200);
    expect((await oneEvent(upd, 'mgmt.updated', 'resource', api.id)).details.changes).toMatchObject({
      resource_name: { old: expect.any(String), new: 'Renamed API' },
    });

    const del = await mark();
    await call('delete', `/api/v1/resources/${api.id}/scopes/${api.scope}`).expect(204);
    await call('delete', `/api/v1/resources/${api.id}`).expect(204);
    expect((await eventsSince(del)).map((e) => [e.type, e.record_type, e.record_id])).toEqual([
      ['mgmt.deleted', 'scope', api.scope],
      ['mgmt.deleted', 'resource', api.id],
    ]);
  });

  it('users: created, updated, password set ("changed"), blocked, deleted; the user is the event’s user', async () => {
    const since = await mark();
    const user = await newUser();
    const c = await oneEvent(since, 'mgmt.created', 'user', user.id);
    expect(c).toMatchObject({ ...(await byAdmin()), user_id: user.id });
    expect(JSON.stringify(c)).not.toMatch(/password_hash|\$argon|\$2[aby]\$/);

    const upd = await mark();
    await call('patch', `/api/v1/users/${user.id}`).send({ user_nickname: 'nick' }).expect(200);
    expect((await oneEvent(upd, 'mgmt.updated', 'user', user.id)).details.changes).toEqual({
      nickname: { old: null, new: 'nick' },
    });

    const pw = await mark();
    await call('put', `/api/v1/users/${user.id}/password`)
      .send({ password: 'another-password-2' })
      .expect(200);
    const p = await oneEvent(pw, 'mgmt.updated', 'user', user.id);
    expect(p.details.changes).toEqual({ password: 'changed' });
    expect(JSON.stringify(p)).not.toContain('another-password-2');
    // not locked: no unlock
    expect(await eventsSince(pw, `type = 'account.unlocked'`)).toEqual([]);

    const blk = await mark();
    await call('post', `/api/v1/users/${user.id}/block`).expect(200);
    expect((await oneEvent(blk, 'mgmt.updated', 'user', user.id)).details.changes).toEqual({
      is_blocked: { old: false, new: true },
    });

    const del = await mark();
    await call('delete', `/api/v1/users/${user.id}`).expect(204);
    expect((await eventsSince(del)).map((e) => [e.type, e.record_type, e.record_id, e.user_id])).toEqual([
      ['mgmt.deleted', 'user', user.id, user.id],
    ]);
  });

  it('an administrator setting the password of a locked account records account.unlocked', async () => {
    const user = await newUser();
    // the lock the token server sets after too many failed sign-ins (no audit context: no event of its own)
    const locking = await mark();
    await m.ds.exec(
      `UPDATE users SET failed_login_count = 10, locked_until = now() + interval '1 hour' WHERE id = $1`,
      [user.id],
    );
    expect(await eventsSince(locking)).toEqual([]);
    const since = await mark();
    await call('put', `/api/v1/users/${user.id}/password`)
      .send({ password: 'unlocked-password-3' })
      .expect(200);
    const unlocked = await eventsSince(since, `type = 'account.unlocked'`);
    expect(unlocked).toHaveLength(1);
    expect(unlocked[0]).toMatchObject({
      ...(await byAdmin()),
      user_id: user.id,
      record_type: 'user',
      record_id: user.id,
    });
    const changed = await oneEvent(since, 'mgmt.updated', 'user', user.id);
    expect(changed.details.changes).toMatchObject({
      password: 'changed',
      failed_login_count: { old: 10, new: 0 },
      locked_until: { old: expect.any(String), new: null },
    });
  });

  it('roles, groups and their links: permissions, members, roles, child groups', async () => {
    const api = await apiWithScope();
    const user = await newUser();
    const since = await mark();
    const role = (
      await call('post', '/api/v1/roles')
        .send({ role_name: uniq('role') })
        .expect(201)
    ).body as {
      id: string;
    };
    const group = (
      await call('post', '/api/v1/groups')
        .send({ group_name: uniq('group') })
        .expect(201)
    ).body as { id: string };
    const child = (
      await call('post', '/api/v1/groups')
        .send({ group_name: uniq('child') })
        .expect(201)
    ).body as { id: string };
    await call('post', `/api/v1/roles/${role.id}/permissions`)
      .send({ permissions: [{ resource_id: api.id, scopes: [api.scope] }] })
      .expect(204);
    await call('post', `/api/v1/users/${user.id}/roles`)
      .send({ roles: [role.id] })
      .expect(204);
    await call('post', `/api/v1/users/${user.id}/permissions`)
      .send({ permissions: [{ resource_id: api.id, scopes: [api.scope] }] })
      .expect(204);
    await call('post', `/api/v1/groups/${group.id}/members`)
      .send({ users: [user.id] })
      .expect(204);
    await call('post', `/api/v1/groups/${group.id}/roles`)
      .send({ roles: [role.id] })
      .expect(204);
    await call('post', `/api/v1/groups/${group.id}/groups`)
      .send({ groups: [child.id] })
      .expect(204);
    const made = await eventsSince(since);
    expect(made.map((e) => [e.type, e.record_type])).toEqual([
      ['mgmt.created', 'role'],
      ['mgmt.created', 'group'],
      ['mgmt.created', 'group'],
      ['mgmt.created', 'role_permission'],
      ['mgmt.created', 'user_role'],
      ['mgmt.created', 'user_permission'],
      ['mgmt.created', 'group_member'],
      ['mgmt.created', 'group_role'],
      ['mgmt.created', 'group_child'],
    ]);
    for (const e of made) expect(e).toMatchObject(await byAdmin());
    const rec = Object.fromEntries(made.slice(3).map((e) => [e.record_type, e.details.record]));
    expect(rec).toEqual({
      role_permission: { role_id: role.id, resource_id: api.id, scope_id: api.scope },
      user_role: { user_id: user.id, role_id: role.id },
      user_permission: { user_id: user.id, resource_id: api.id, scope_id: api.scope },
      group_member: { group_id: group.id, user_id: user.id },
      group_role: { group_id: group.id, role_id: role.id },
      group_child: { parent_id: group.id, child_id: child.id },
    });
    expect(made.find((e) => e.record_type === 'user_role')?.user_id).toBe(user.id);

    const upd = await mark();
    await call('patch', `/api/v1/groups/${group.id}`).send({ group_description: 'about' }).expect(200);
    expect((await oneEvent(upd, 'mgmt.updated', 'group', group.id)).details.changes).toEqual({
      group_description: { old: null, new: 'about' },
    });

    const unlink = await mark();
    await call('delete', `/api/v1/users/${user.id}/roles`)
      .send({ roles: [role.id] })
      .expect(204);
    await call('delete', `/api/v1/groups/${group.id}/members`)
      .send({ users: [user.id] })
      .expect(204);
    expect((await eventsSince(unlink)).map((e) => [e.type, e.record_type, e.user_id])).toEqual([
      ['mgmt.deleted', 'user_role', user.id],
      ['mgmt.deleted', 'group_member', user.id],
    ]);

    // deleting the role takes its links with it: one event
    const del = await mark();
    await call('delete', `/api/v1/roles/${role.id}`).expect(204);
    expect((await eventsSince(del)).map((e) => [e.type, e.record_type, e.record_id])).toEqual([
      ['mgmt.deleted', 'role', role.id],
    ]);
  });

  it('tenants, tenant admins, identity providers (the secret only "changed"), instances and instance admins', async () => {
    const since = await mark();
    const tenant = (
      await call('post', '/api/v1/tenants')
        .send({ tenant_name: uniq('t') })
        .expect(201)
    ).body as { id: string };
    const t = await oneEvent(since, 'mgmt.created', 'tenant', tenant.id);
    expect(t).toMatchObject({ ...(await byAdmin()), tenant_id: tenant.id });

    const user = await newUser({ tenant_id: tenant.id });
    const adm = await mark();
    await call('post', `/api/v1/tenants/${tenant.id}/admins`)
      .send({ users: [user.id] })
      .expect(204);
    const admins = await eventsSince(adm, `record_type = 'tenant_admin'`);
    expect(admins).toHaveLength(1);
    expect(admins[0]).toMatchObject({ type: 'mgmt.created', tenant_id: tenant.id, user_id: user.id });

    const idp = await mark();
    const secret = `upstream-${uniq('s')}`;
    const provider = (
      await call('post', `/api/v1/tenants/${tenant.id}/identity-providers`)
        .send({
          identity_provider: 'google',
          name: uniq('Google'),
          issuer: `https://${uniq('idp')}.example.test`,
          client_id: uniq('client'),
          client_secret: secret,
        })
        .expect(201)
    ).body as { id: string };
    await call('patch', `/api/v1/tenants/${tenant.id}/identity-providers/${provider.id}`)
      .send({ client_secret: `${secret}-2`, enabled: false })
      .expect(200);
    const p = await eventsSince(idp, `record_type = 'identity_provider'`);
    expect(p.map((e) => e.type)).toEqual(['mgmt.created', 'mgmt.updated']);
    expect(p[0]).toMatchObject({ tenant_id: tenant.id, record_id: provider.id, client_id: null });
    expect(p[1].details.changes).toEqual({ client_secret: 'changed', enabled: { old: true, new: false } });
    expect(JSON.stringify(p)).not.toContain(secret);

    const upd = await mark();
    await call('patch', `/api/v1/tenants/${tenant.id}`).send({ tenant_name: 'Renamed tenant' }).expect(200);
    expect((await oneEvent(upd, 'mgmt.updated', 'tenant', tenant.id)).details.changes).toMatchObject({
      name: { old: expect.any(String), new: 'Renamed tenant' },
    });

    const inst = await mark();
    const instance = (
      await call('post', '/api/v1/instances')
        .send({ instance_name: uniq('inst') })
        .expect(201)
    ).body as { id: string };
    expect(await oneEvent(inst, 'mgmt.created', 'instance', instance.id)).toMatchObject(await byAdmin());
    await call('patch', `/api/v1/instances/${instance.id}`)
      .send({ instance_description: 'about' })
      .expect(200);
    expect((await oneEvent(inst, 'mgmt.updated', 'instance', instance.id)).details.changes).toEqual({
      description: { old: null, new: 'about' },
    });
    const admin = await newUser();
    const home = await defaultInstance();
    const ia = await mark();
    await call('post', `/api/v1/instances/${home}/admins`)
      .send({ users: [admin.id] })
      .expect(204);
    await call('delete', `/api/v1/instances/${home}/admins`)
      .send({ users: [admin.id] })
      .expect(204);
    expect(
      (await eventsSince(ia, `record_type = 'instance_admin'`)).map((e) => [
        e.type,
        e.user_id,
        e.instance_id,
      ]),
    ).toEqual([
      ['mgmt.created', admin.id, home],
      ['mgmt.deleted', admin.id, home],
    ]);

    const empty = (
      await call('post', '/api/v1/tenants')
        .send({ tenant_name: uniq('t') })
        .expect(201)
    ).body as {
      id: string;
    };
    const del = await mark();
    await call('delete', `/api/v1/tenants/${empty.id}`).expect(204);
    const tenantGone = await eventsSince(del, `record_type = 'tenant'`);
    expect(tenantGone.map((e) => [e.type, e.record_id, e.tenant_id])).toEqual([
      ['mgmt.deleted', empty.id, empty.id],
    ]);
  });

  it('a tenant admin’s write records the user, the client it came through and the tenant', async () => {
    const tenant = (
      await call('post', '/api/v1/tenants')
        .send({ tenant_name: uniq('t') })
        .expect(201)
    ).body as { id: string };
    const admin = await newUser({ tenant_id: tenant.id });
    await call('post', `/api/v1/tenants/${tenant.id}/admins`)
      .send({ users: [admin.id] })
      .expect(204);
    const client = await passwordClient();
    const config = await m.oidcConfig(client.id, client.client_secret);
    const t = await oidc.genericGrantRequest(config, 'password', {
      username: admin.email,
      password: admin.password,
      resource: MANAGEMENT_AUDIENCE,
    });
    const since = await mark();
    const made = (
      await call('post', '/api/v1/users', t.access_token)
        .send({ user_email: `${uniq('ta')}@example.test`, password: 'user-password-1' })
        .expect(201)
    ).body as { id: string };
    const e = await oneEvent(since, 'mgmt.created', 'user', made.id);
    expect(e).toMatchObject({
      actor_type: 'user',
      actor_id: admin.id,
      via_client_id: client.id,
      tenant_id: tenant.id,
      user_id: made.id,
      user_agent: UA,
      ip: expect.stringMatching(/127\.0\.0\.1|::1/),
    });
  });

  it('tickets, invitations, user grants and user identities', async () => {
    const writer = await m.caller(['tickets:write']);
    const user = await newUser();
    const since = await mark();
    await call('post', '/api/v1/tickets/password-change', writer.token)
      .send({ user_id: user.id })
      .expect(201);
    const ticket = await oneEvent(since, 'mgmt.created', 'ticket');
    expect(ticket).toMatchObject({ actor_type: 'client', actor_id: writer.id, user_id: user.id });
    expect(JSON.stringify(ticket)).not.toContain('token_hash');

    const inv = await mark();
    const invited = (
      await call('post', '/api/v1/users/invite')
        .send({ user_email: `${uniq('inv')}@example.test` })
        .expect(201)
    ).body as { id?: string; user_id?: string };
    const invitedUsers = await eventsSince(inv, `type = 'mgmt.created' AND record_type = 'user'`);
    expect(invitedUsers).toHaveLength(1);
    if (invited.id) expect(invitedUsers[0].record_id).toBe(invited.id);

    // a grant of a sign-in, revoked by the administrator
    const client = await passwordClient();
    const config = await m.oidcConfig(client.id, client.client_secret);
    await oidc.genericGrantRequest(config, 'password', {
      username: user.email,
      password: user.password,
      scope: 'openid offline_access',
    });
    const listed = (await call('get', `/api/v1/users/${user.id}/grants`).expect(200)).body as
      { id: string }[] | { items: { id: string }[] };
    const grantId = (Array.isArray(listed) ? listed : listed.items)[0].id;
    const rev = await mark();
    await call('delete', `/api/v1/users/${user.id}/grants/${grantId}`).expect(204);
    expect(await eventsSince(rev)).toEqual([
      expect.objectContaining({
        ...(await byAdmin()),
        type: 'mgmt.deleted',
        record_type: 'user_grant',
        record_id: grantId,
        user_id: user.id,
      }),
    ]);

    // a linked identity (made by a sign-in through an identity provider: no event), removed by the administrator
    const [identity] = await m.ds.rows<{ id: string }>(
      `INSERT INTO user_identities (instance_id, user_id, provider, provider_user_id)
       SELECT instance_id, id, 'google-oauth2', $2 FROM users WHERE id = $1 RETURNING id`,
      [user.id, uniq('sub')],
    );
    const unlink = await mark();
    await call('delete', `/api/v1/users/${user.id}/identities/${identity.id}`).expect(204);
    expect((await eventsSince(unlink)).map((e) => [e.type, e.record_type, e.record_id, e.user_id])).toEqual([
      ['mgmt.deleted', 'user_identity', identity.id, user.id],
    ]);
  });
});

describe('events housekeeping', () => {
  const exists = async (name: string) =>
    (await m.ds.one<{ r: string | null }>(`SELECT to_regclass($1)::text AS r`, [name]))!.r !== null;

  it('a starting replica makes the coming days’ partitions and drops the days past EVENTS_RETENTION_DAYS', async () => {
    await m.ds.exec(`SELECT events_ensure_partitions('2001-02-03'::date, 1)`);
    const ahead = new Date(Date.now() + 6 * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
    await m.ds.exec(`DROP TABLE IF EXISTS events_${ahead}`);
    expect(await exists('events_20010203')).toBe(true);
    await m.replica();
    // made before the replica serves
    expect(await exists(`events_${ahead}`)).toBe(true);
    // dropped in the background
    for (let i = 0; i < 100 && (await exists('events_20010203')); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await exists('events_20010203')).toBe(false);
  });

  it('one replica purges at a time: a replica that finds the purge lock held skips the round', async () => {
    await m.ds.exec(`SELECT events_ensure_partitions('2001-02-04'::date, 1)`);
    await m.ds.connection(async (c) => {
      await c.exec(`SELECT pg_advisory_lock(hashtextextended('gatehouse.events.purge', 0))`);
      try {
        expect(await purgeOnce(m.ds, 90)).toBeUndefined();
        expect(await exists('events_20010204')).toBe(true);
      } finally {
        await c.exec(`SELECT pg_advisory_unlock(hashtextextended('gatehouse.events.purge', 0))`);
      }
    });
    expect(await purgeOnce(m.ds, 90)).toContain('events_20010204');
    expect(await exists('events_20010204')).toBe(false);
  });
});

describe('audited tables', () => {
  /** Operational and derived tables: written by the token server and housekeeping, or derived from another table. */
  const NOT_AUDITED = [
    'bootstrap_markers',
    'cache_subscribers',
    'delivery_outbox',
    'events',
    'group_closure',
    'login_failures',
    'mfa_failures',
    'oidc_payloads',
    'one_time_codes',
    'otp_failures',
    'otp_sends',
    'session_devices',
    'signing_keys',
    'signup_counters',
    'typeorm_migrations',
    // written by the token server at every use of a second factor; the management API's removals are recorded as
    // mfa.removed by its service (docs/events.md)
    'user_authenticators',
  ];

  it('every table of the schema has the audit trigger or is listed as operational', async () => {
    const tables = await m.ds.rows<{ name: string; audited: boolean }>(
      `SELECT c.relname AS name,
              EXISTS (SELECT 1 FROM pg_trigger t
                       WHERE t.tgrelid = c.oid AND t.tgname = 'tr_' || c.relname || '_audit') AS audited
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        ORDER BY c.relname`,
    );
    const unlisted = tables.filter((t) => !t.audited && !NOT_AUDITED.includes(t.name)).map((t) => t.name);
    const auditedOperational = tables
      .filter((t) => t.audited && NOT_AUDITED.includes(t.name))
      .map((t) => t.name);
    expect({ unlisted, auditedOperational }).toEqual({ unlisted: [], auditedOperational: [] });
    expect(tables.filter((t) => t.audited).length).toBe(22);
  });
});

/** A global client that may sign users in with their password and is granted every management scope. */
async function passwordClient() {
  const client = (
    await call('post', '/api/v2/clients')
      .send({ client_name: uniq('app'), client_metadata: { grant_types: ['password', 'refresh_token'] } })
      .expect(201)
  ).body as { id: string; client_secret: string };
  const mgmt = await m.managementResource();
  await call('post', `/api/v1/clients/${client.id}/resources`)
    .send({ resources: [mgmt.id] })
    .expect(204);
  await call('post', `/api/v1/clients/${client.id}/permissions`)
    .send({ permissions: [{ resource_id: mgmt.id, scopes: Object.values(mgmt.scopes) }] })
    .expect(204);
  return client;
}
