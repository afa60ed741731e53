import * as oidc from 'openid-client';
import { randomUUID } from 'node:crypto';
import {
  bootstrapIdentity,
  insertEvents,
  MANAGEMENT_AUDIENCE,
  TREE_AUDIENCE,
} from '@gatehouse/identity-data';
import { Management, uniq } from './management-harness.js';

/**
 * User tokens for the system resources (management API, tree API) carry only what the user itself holds (its
 * permissions, roles and groups, intersected with the client's grants), whatever the client holds; the bootstrap
 * admin and instance / tenant admins hold theirs through admin roles. Real token server, real management API.
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start({ MULTI_INSTANCE: 'true' });
});
afterAll(async () => {
  await m?.close();
});

const scopeSet = (s: unknown) =>
  String(s ?? '')
    .split(' ')
    .filter(Boolean)
    .sort();

/** A global password client authorized on both system resources and granted every scope of both. */
async function powerfulClient(opts: { tenantId?: string; isGlobal?: boolean } = {}) {
  const client = (
    await m
      .call('post', '/api/v2/clients')
      .send({
        client_name: uniq('app'),
        client_metadata: { grant_types: ['password', 'refresh_token'] },
        ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
        ...(opts.isGlobal !== undefined ? { is_global: opts.isGlobal } : {}),
      })
      .expect(201)
  ).body as { id: string; client_secret: string };
  const resources = await m.ds.rows<{ id: string }>(
    `SELECT r.id FROM resources r JOIN instances i ON i.id = r.instance_id AND i.is_default WHERE r.is_system`,
  );
  await m
    .call('post', `/api/v1/clients/${client.id}/resources`)
    .send({ resources: resources.map((r) => r.id) })
    .expect(204);
  const permissions = [];
  for (const r of resources) {
    const scopes = await m.ds.rows<{ id: string }>(`SELECT id FROM scopes WHERE resource_id = $1`, [r.id]);
    permissions.push({ resource_id: r.id, scopes: scopes.map((s) => s.id) });
  }
  await m.call('post', `/api/v1/clients/${client.id}/permissions`).send({ permissions }).expect(204);
  return client;
}

async function signIn(
  client: { id: string; client_secret: string },
  username: string,
  password: string,
  resource: string,
) {
  const config = await m.oidcConfig(client.id, client.client_secret);
  return oidc.genericGrantRequest(config, 'password', {
    username,
    password,
    resource,
    scope: 'offline_access',
  });
}

async function newUser(tenantId?: string) {
  const email = `${uniq('u')}@example.test`;
  const user = (
    await m
      .call('post', '/api/v2/users')
      .send({ user_email: email, password: 'user-password-1', ...(tenantId ? { tenant_id: tenantId } : {}) })
      .expect(201)
  ).body as { id: string };
  return { id: user.id, email, password: 'user-password-1' };
}

const adminEmail = 'admin@gatehouse.local';
const adminPassword = () => m.auth.shared.BOOTSTRAP_ADMIN_PASSWORD!;

describe("hole 2: user tokens carry the client's management and tree scopes", () => {
  it('a new user signing in through a client with every system scope gets none of them (403)', async () => {
    const client = await powerfulClient();
    const user = await newUser();
    const t = await signIn(client, user.email, user.password, MANAGEMENT_AUDIENCE);
    expect(scopeSet(t.scope)).toEqual([]);
    expect((await m.tokenInfo(t.access_token)).scope).toBe('');
    await m.call('get', '/api/v1/users', t.access_token).expect(403);
    await m.call('get', '/api/v1/clients', t.access_token).expect(403);
    // after a refresh too
    const refreshed = await oidc.refreshTokenGrant(
      await m.oidcConfig(client.id, client.client_secret),
      t.refresh_token!,
    );
    expect(scopeSet(refreshed.scope)).toEqual([]);
    await m.call('get', '/api/v1/users', refreshed.access_token).expect(403);

    const tree = await signIn(client, user.email, user.password, TREE_AUDIENCE);
    expect(scopeSet(tree.scope)).toEqual([]);
    const info = await m.tokenInfo(tree.access_token);
    expect(info.active).toBe(true);
    expect(info.scope).toBe('');
  });

  it('a user given management scopes directly holds those alone (client grants ∩ user)', async () => {
    const client = await powerfulClient();
    const user = await newUser();
    const mgmt = await m.managementResource();
    await m
      .call('post', `/api/v1/users/${user.id}/permissions`)
      .send({ permissions: [{ resource_id: mgmt.id, scopes: [mgmt.scopes['users:read']] }] })
      .expect(204);
    const t = await signIn(client, user.email, user.password, MANAGEMENT_AUDIENCE);
    expect(scopeSet(t.scope)).toEqual(['users:read']);
    await m.call('get', '/api/v1/users', t.access_token).expect(200);
    await m.call('get', '/api/v1/clients', t.access_token).expect(403);
  });

  it('the bootstrap admin signing in holds every management and tree scope through its admin role', async () => {
    const client = await powerfulClient();
    const t = await signIn(client, adminEmail, adminPassword(), MANAGEMENT_AUDIENCE);
    expect(scopeSet(t.scope)).toEqual(expect.arrayContaining(['users:read', 'users:write', 'clients:read']));
    await m.call('get', '/api/v1/users', t.access_token).expect(200);
    const tree = await signIn(client, adminEmail, adminPassword(), TREE_AUDIENCE);
    expect(scopeSet(tree.scope)).toEqual(expect.arrayContaining(['trees:read', 'trees:write']));
  });

  it('a tenant admin holds management scopes confined to its tenant; it lists no other tenant’s users', async () => {
    const a = (
      await m
        .call('post', '/api/v1/tenants')
        .send({ tenant_name: uniq('ta') })
        .expect(201)
    ).body.id as string;
    const b = (
      await m
        .call('post', '/api/v1/tenants')
        .send({ tenant_name: uniq('tb') })
        .expect(201)
    ).body.id as string;
    const inA = await newUser(a);
    const inB = await newUser(b);
    const admin = await newUser(a);
    const globalAdmin = await newUser();
    await m
      .call('post', `/api/v1/tenants/${a}/admins`)
      .send({ users: [admin.id, globalAdmin.id] })
      .expect(204);
    const client = await powerfulClient();
    // one event of each tenant and one of no tenant, a day ahead (no other event is that new)
    const [{ id: instanceId }] = await m.ds.rows<{ id: string }>(`SELECT id FROM instances WHERE is_default`);
    const from = new Date(Date.now() + 86_400_000);
    const marker = randomUUID();
    await insertEvents(
      m.ds,
      [a, b, null].map((tenantId, i) => ({
        type: 'signin.success' as const,
        instanceId,
        tenantId,
        userId: marker,
        at: new Date(from.getTime() + i * 1000),
      })),
    );

    for (const who of [admin, globalAdmin]) {
      const t = await signIn(client, who.email, who.password, MANAGEMENT_AUDIENCE);
      expect(scopeSet(t.scope)).toEqual(expect.arrayContaining(['users:read']));
      expect(scopeSet(t.scope)).not.toContain('instances:write');
      expect(scopeSet(t.scope)).not.toContain('clients:read_secrets');
      const list = await m.call('get', '/api/v1/users?per_page=100', t.access_token).expect(200);
      const ids = (list.body.items as { id: string }[]).map((u) => u.id);
      expect(ids).toContain(inA.id);
      expect(ids).not.toContain(inB.id);
      await m.call('get', `/api/v1/users/${inB.id}`, t.access_token).expect(404);
      // its tenant's events only (logs:read comes with the tenant admin role)
      const logs = await m
        .call('get', '/api/v1/logs', t.access_token)
        .query({ user_id: marker, from: from.toISOString() })
        .expect(200);
      expect((logs.body.items as { tenant_id: string }[]).map((e) => e.tenant_id)).toEqual([a]);
      // the tree API is the instance's: a tenant admin holds nothing there
      const tree = await signIn(client, who.email, who.password, TREE_AUDIENCE);
      expect(scopeSet(tree.scope)).toEqual([]);
    }

    // removing the admin takes the scopes away
    await m
      .call('delete', `/api/v1/tenants/${a}/admins`)
      .send({ users: [admin.id] })
      .expect(204);
    const after = await signIn(client, admin.email, admin.password, MANAGEMENT_AUDIENCE);
    expect(scopeSet(after.scope)).toEqual([]);
  });

  it('revoking the admin role takes the scope away at the next /tokeninfo', async () => {
    const client = await powerfulClient();
    const t = await signIn(client, adminEmail, adminPassword(), MANAGEMENT_AUDIENCE);
    await m.call('get', '/api/v1/users', t.access_token).expect(200);
    const [admin] = await m.ds.rows<{ id: string }>(`SELECT id FROM users WHERE user_email = $1`, [
      adminEmail,
    ]);
    const roles = await m.call('get', `/api/v1/users/${admin.id}/roles`).expect(200);
    const roleIds = (roles.body.items as { role_id: string }[]).map((r) => r.role_id);
    expect(roleIds.length).toBeGreaterThan(0);
    await m.call('delete', `/api/v1/users/${admin.id}/roles`).send({ roles: roleIds }).expect(204);
    expect(scopeSet((await m.tokenInfo(t.access_token)).scope)).toEqual([]);
    await m.call('get', '/api/v1/users', t.access_token).expect(403);
    // given back, the same token holds them again
    await m.call('post', `/api/v1/users/${admin.id}/roles`).send({ roles: roleIds }).expect(204);
    await m.call('get', '/api/v1/users', t.access_token).expect(200);
  });

  it('an instance admin holds every system scope while it is an admin; a new instance has its admin role', async () => {
    const client = await powerfulClient();
    const user = await newUser();
    const [instance] = await m.ds.rows<{ id: string }>(`SELECT id FROM instances WHERE is_default`);
    await m
      .call('post', `/api/v1/instances/${instance.id}/admins`)
      .send({ users: [user.id] })
      .expect(204);
    const t = await signIn(client, user.email, user.password, MANAGEMENT_AUDIENCE);
    expect(scopeSet(t.scope)).toEqual(expect.arrayContaining(['instances:write', 'users:write']));
    expect((await m.tokenInfo(t.access_token)).acting_tenant_id).toBeUndefined();
    await m.call('get', '/api/v1/clients', t.access_token).expect(200);
    await m
      .call('delete', `/api/v1/instances/${instance.id}/admins`)
      .send({ users: [user.id] })
      .expect(204);
    expect((await m.tokenInfo(t.access_token)).scope).toBe('');
    await m.call('get', '/api/v1/clients', t.access_token).expect(403);

    const created = await m
      .call('post', '/api/v1/instances')
      .send({ instance_name: uniq('inst') })
      .expect(201);
    const [role] = await m.ds.rows<{ n: number; all: number }>(
      `SELECT (SELECT count(*) FROM role_permissions p WHERE p.role_id = r.id)::int AS n,
              (SELECT count(*) FROM scopes s JOIN resources x ON x.id = s.resource_id
                WHERE x.instance_id = $1 AND x.is_system)::int AS all
         FROM roles r WHERE r.instance_id = $1 AND r.system_role = 'instance_admin'`,
      [created.body.id],
    );
    expect(role.n).toBe(role.all);
    expect(role.n).toBeGreaterThan(20);
  });

  it('a database from before admin roles: the next start gives the instance admins their role', async () => {
    const [admin] = await m.ds.rows<{ id: string }>(`SELECT id FROM users WHERE user_email = $1`, [
      adminEmail,
    ]);
    await m.ds.exec(
      `DELETE FROM roles r USING instances i WHERE i.id = r.instance_id AND i.is_default
          AND r.system_role = 'instance_admin'`,
    );
    const client = await powerfulClient();
    const before = await signIn(client, adminEmail, adminPassword(), MANAGEMENT_AUDIENCE);
    expect(scopeSet(before.scope)).toEqual([]);
    await bootstrapIdentity(m.ds, m.env, { info: () => undefined, warn: () => undefined });
    const after = await signIn(client, adminEmail, adminPassword(), MANAGEMENT_AUDIENCE);
    expect(scopeSet(after.scope)).toEqual(expect.arrayContaining(['users:read', 'clients:write']));
    const roles = await m.call('get', `/api/v1/users/${admin.id}/roles`).expect(200);
    expect(roles.body.items).toHaveLength(1);
  });
});
