import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { MANAGEMENT_AUDIENCE } from '@gatehouse/identity-data';
import { Management, uniq } from './management-harness.js';

/**
 * End to end (real token server in-process, real tokens): an instance created through the API gets its
 * own default client, whose client_credentials token for urn:gatehouse:management works at once and reaches only its
 * own instance; the default instance's caller does not reach the new instance's records either. Users sign in only
 * through clients of their own instance, and /tokeninfo shows a token only to callers of its instance.
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start({ MULTI_INSTANCE: 'true' });
});
afterAll(async () => {
  await m?.close();
});

interface Side {
  token: string;
  clientId: string;
  secret: string;
  /** Records made through this side's API. */
  client: string;
  user: string;
  userEmail: string;
  resource: string;
  resourceIdentifier: string;
  role: string;
  group: string;
  /** A password-grant client authorized on `resource`, and its secret. */
  loginClient: { id: string; secret: string };
}

const ids = (body: { items: { id: string }[] }) => body.items.map((i) => i.id);

/** A client, a user (with a password), a resource, a role and a group made with `token`. */
async function populate(token: string, clientId: string, secret: string, email: string): Promise<Side> {
  const call = (method: 'get' | 'post', path: string) => m.call(method, path, token);
  const client = (
    await call('post', '/api/v1/clients')
      .send({ client_name: uniq('c') })
      .expect(201)
  ).body.id;
  const user = (
    await call('post', '/api/v2/users').send({ user_email: email, password: 'same-password-1' }).expect(201)
  ).body.id;
  const resourceIdentifier = `https://${uniq('api')}.test`;
  const resource = (
    await call('post', '/api/v1/resources')
      .send({
        resource_type: 'api',
        resource_name: uniq('api'),
        resource_metadata: { identifier_url: resourceIdentifier },
      })
      .expect(201)
  ).body.id;
  const role = (
    await call('post', '/api/v1/roles')
      .send({ role_name: uniq('role') })
      .expect(201)
  ).body.id;
  const group = (
    await call('post', '/api/v1/groups')
      .send({ group_name: uniq('group') })
      .expect(201)
  ).body.id;
  const login = (
    await call('post', '/api/v2/clients')
      .send({ client_name: uniq('login'), client_metadata: { grant_types: ['password'] } })
      .expect(201)
  ).body as { id: string; client_secret: string };
  await call('post', `/api/v1/clients/${login.id}/resources`)
    .send({ resources: [resource] })
    .expect(204);
  return {
    token,
    clientId,
    secret,
    client,
    user,
    userEmail: email,
    resource,
    resourceIdentifier,
    role,
    group,
    loginClient: { id: login.id, secret: login.client_secret },
  };
}

/** `viewer` reaches none of `other`'s records: its lists lack them, their ids are 404 to read, change and link. */
async function seesNothingOf(viewer: Side, other: Side) {
  const call = (method: 'get' | 'post' | 'patch' | 'delete', path: string) =>
    m.call(method, path, viewer.token);
  for (const v of ['v1', 'v2']) {
    const clients = (await call('get', `/api/${v}/clients?limit=100`).expect(200)).body;
    expect(ids(clients)).not.toEqual(expect.arrayContaining([other.clientId]));
    expect(ids(clients)).not.toContain(other.client);
    expect(ids(clients)).not.toContain(other.loginClient.id);
    const users = (await call('get', `/api/${v}/users?limit=100`).expect(200)).body;
    expect(ids(users)).not.toContain(other.user);
    const resources = (await call('get', `/api/${v}/resources?limit=100`).expect(200)).body;
    expect(ids(resources)).not.toContain(other.resource);
    const otherResources = await m.ds.rows<{ id: string }>(
      `SELECT id FROM resources WHERE instance_id = (SELECT instance_id FROM clients WHERE id = $1)`,
      [other.clientId],
    );
    for (const r of otherResources) expect(ids(resources)).not.toContain(r.id);
    expect(ids((await call('get', `/api/${v}/roles?limit=100`).expect(200)).body)).not.toContain(other.role);
    expect(ids((await call('get', `/api/${v}/groups?limit=100`).expect(200)).body)).not.toContain(
      other.group,
    );

    for (const path of [
      `/api/${v}/clients/${other.clientId}`,
      `/api/${v}/clients/${other.client}`,
      `/api/${v}/clients/${other.client}/permissions`,
      `/api/${v}/users/${other.user}`,
      `/api/${v}/users/${other.user}/roles`,
      `/api/${v}/resources/${other.resource}`,
      `/api/${v}/resources/${other.resource}/scopes`,
      `/api/${v}/roles/${other.role}`,
      `/api/${v}/groups/${other.group}`,
    ]) {
      const res = await call('get', path);
      expect([path, res.status]).toEqual([path, 404]);
    }
  }
  await call('patch', `/api/v1/clients/${other.client}`).send({ client_description: 'x' }).expect(404);
  await call('patch', `/api/v2/users/${other.user}`).send({ user_nickname: 'x' }).expect(404);
  await call('delete', `/api/v1/resources/${other.resource}`).expect(404);
  await call('delete', `/api/v1/roles/${other.role}`).expect(404);
  await call('post', `/api/v1/clients/${other.client}/rotate-secret`).expect(404);
  // Linking its own records to the other's: 404, nothing written.
  await call('post', `/api/v1/clients/${viewer.client}/resources`)
    .send({ resources: [other.resource] })
    .expect(404);
  await call('post', `/api/v1/roles/${viewer.role}/members`)
    .send({ users: [other.user] })
    .expect(404);
  await call('post', `/api/v1/groups/${viewer.group}/roles`)
    .send({ roles: [other.role] })
    .expect(404);
}

describe('a second instance is a closed world', () => {
  let a: Side;
  let b: Side;
  let bInstance: string;

  beforeAll(async () => {
    const email = `${uniq('same')}@example.test`;
    a = await populate(m.adminToken, m.auth.clientId, m.auth.clientSecret, email);
    const created = await m
      .call('post', '/api/v2/instances')
      .send({ instance_name: uniq('B') })
      .expect(201);
    bInstance = created.body.id;
    const { client_id: clientId, client_secret: secret } = created.body.default_client;
    // B's default client: a client_credentials token for the management API, carrying every management scope.
    const token = await m.token(clientId, secret, MANAGEMENT_AUDIENCE);
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ aud: MANAGEMENT_AUDIENCE, client_id: clientId, sub: clientId });
    expect(String(claims.scope).split(' ')).toEqual(expect.arrayContaining(['clients:write', 'users:write']));
    // The same e-mail in both instances: users are unique per instance only.
    b = await populate(token, clientId, secret, email);
  });

  it("B's default client works on its own instance: its lists hold its own records and its system resources", async () => {
    const clients = ids((await m.call('get', '/api/v1/clients?limit=100', b.token).expect(200)).body);
    expect(clients.sort()).toEqual([b.clientId, b.client, b.loginClient.id].sort());
    const users = ids((await m.call('get', '/api/v2/users?limit=100', b.token).expect(200)).body);
    expect(users).toEqual([b.user]);
    const resources = (await m.call('get', '/api/v1/resources?limit=100', b.token).expect(200)).body
      .items as {
      id: string;
      instance_id: string;
    }[];
    expect(resources).toHaveLength(3);
    expect(resources.every((r) => r.instance_id === bInstance)).toBe(true);
    const instance = (await m.call('get', `/api/v2/instances/${bInstance}`, b.token).expect(200)).body;
    // roles: the one made here and the instance's admin role, seeded with the instance
    expect(instance.aggregates).toMatchObject({ clients: 3, users: 1, resources: 3, roles: 2, tenants: 0 });
  });

  it("B's client cannot see A's clients, users, resources, roles or groups (lists empty of them, ids 404)", async () => {
    await seesNothingOf(b, a);
  });

  it("A's client (the default instance's) cannot see B's either", async () => {
    await seesNothingOf(a, b);
  });

  it('a user signs in only through clients of its own instance', async () => {
    const login = async (side: Side, resource: string) => {
      const config = await m.oidcConfig(side.loginClient.id, side.loginClient.secret);
      return oidc.genericGrantRequest(config, 'password', {
        username: side.userEmail,
        password: 'same-password-1',
        resource,
      });
    };
    // Same e-mail and password in both instances: each client signs in its own instance's user.
    const inB = await login(b, b.resourceIdentifier);
    expect(decodeJwt(inB.access_token)).toMatchObject({ sub: b.user, client_id: b.loginClient.id });
    const inA = await login(a, a.resourceIdentifier);
    expect(decodeJwt(inA.access_token).sub).toBe(a.user);
    // A's user is unknown to B's client.
    await m.call('delete', `/api/v2/users/${b.user}`, b.token).expect(204);
    await expect(login(b, b.resourceIdentifier)).rejects.toMatchObject({ error: 'invalid_grant' });
    // An audience is looked up in the client's own instance: A's resource is no audience for B's client.
    await expect(login(b, a.resourceIdentifier)).rejects.toMatchObject({ error: 'invalid_target' });
  });

  it('/tokeninfo shows a token only to callers of its own instance', async () => {
    // Both default clients are authorized on their own instance's urn:gatehouse:management.
    const asA = { id: m.auth.clientId, secret: m.auth.clientSecret };
    const asB = { id: b.clientId, secret: b.secret };
    expect(await m.tokenInfo(b.token, asA)).toEqual({ active: false });
    expect(await m.tokenInfo(m.adminToken, asB)).toEqual({ active: false });
    expect(await m.tokenInfo(b.token, asB)).toMatchObject({ active: true, client_id: b.clientId });
    // A resource server of B checking a token of B's other client: active.
    const other = await m
      .call('post', '/api/v1/clients', b.token)
      .send({ client_name: uniq('rs') })
      .expect(201);
    const mgmt = (await m.call('get', '/api/v1/resources?limit=100', b.token).expect(200)).body.items.find(
      (r: { resource_metadata?: { identifier_url?: string }; identifier_url?: string }) =>
        (r.resource_metadata?.identifier_url ?? r.identifier_url) === MANAGEMENT_AUDIENCE,
    );
    await m
      .call('post', `/api/v1/clients/${other.body.id}/resources`, b.token)
      .send({ resources: [mgmt.id] })
      .expect(204);
    const otherToken = await m.token(other.body.id, other.body.client_secret);
    expect(await m.tokenInfo(otherToken, asB)).toMatchObject({ active: true, client_id: other.body.id });
    expect(await m.tokenInfo(otherToken, asA)).toEqual({ active: false });
    // The management API itself resolves each caller to its own instance.
    await m.call('get', `/api/v1/clients/${other.body.id}`, b.token).expect(200);
    await m.call('get', `/api/v1/clients/${other.body.id}`).expect(404);
  });
});
