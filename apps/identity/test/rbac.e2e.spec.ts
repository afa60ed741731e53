import * as oidc from 'openid-client';
import { Management, uniq } from './management-harness.js';

/**
 * End to end: user tokens for an RBAC resource (real token server, `openid-client` as the client) carry the
 * intersection of the client's grants and the user's effective scopes, and every change to where those come from
 * shows in the next token and in /tokeninfo of tokens already issued.
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

const scopeSet = (s: unknown) =>
  String(s ?? '')
    .split(' ')
    .filter(Boolean)
    .sort();

/** An RBAC API with scopes, a password client granted all of them, and a user. */
async function setup(scopeNames: string[]) {
  const identifier = `https://${uniq('rbac')}.test`;
  const api = (
    await m
      .call('post', '/api/v1/resources')
      .send({
        resource_type: 'api',
        resource_name: uniq('Rbac'),
        resource_metadata: { identifier_url: identifier, rbac_enabled: true },
      })
      .expect(201)
  ).body as { id: string };
  const scopes: Record<string, string> = {};
  for (const name of scopeNames) {
    scopes[name] = (
      await m.call('post', `/api/v1/resources/${api.id}/scopes`).send({ scope_name: name }).expect(201)
    ).body.id;
  }
  const client = (
    await m
      .call('post', '/api/v2/clients')
      .send({ client_name: uniq('c'), client_metadata: { grant_types: ['password', 'refresh_token'] } })
      .expect(201)
  ).body as { id: string; client_secret: string };
  await m
    .call('post', `/api/v1/clients/${client.id}/resources`)
    .send({ resources: [api.id] })
    .expect(204);
  await m
    .call('post', `/api/v1/clients/${client.id}/permissions`)
    .send({ permissions: [{ resource_id: api.id, scopes: Object.values(scopes) }] })
    .expect(204);
  const email = `${uniq('user')}@example.test`;
  const user = (
    await m.call('post', '/api/v2/users').send({ user_email: email, password: 'user-password-1' }).expect(201)
  ).body as { id: string };
  const config = await m.oidcConfig(client.id, client.client_secret);
  const login = () =>
    oidc.genericGrantRequest(config, 'password', {
      username: email,
      password: 'user-password-1',
      resource: identifier,
      scope: 'offline_access',
    });
  const grant = (target: string, names: string[]) =>
    m
      .call('post', `/api/v1/${target}/permissions`)
      .send({ permissions: [{ resource_id: api.id, scopes: names.map((n) => scopes[n]) }] })
      .expect(204);
  return { api, scopes, client, user, config, login, grant };
}

const newRole = async () =>
  (
    await m
      .call('post', '/api/v1/roles')
      .send({ role_name: uniq('role') })
      .expect(201)
  ).body.id as string;
const newGroup = async () =>
  (
    await m
      .call('post', '/api/v1/groups')
      .send({ group_name: uniq('group') })
      .expect(201)
  ).body.id as string;

describe('effective permissions in user tokens', () => {
  it("a user in a group nested three deep under a group holding a role gets exactly that role's scopes; un-nested, loses them", async () => {
    const s = await setup(['orders:read', 'orders:write', 'orders:delete']);
    const role = await newRole();
    await s.grant(`roles/${role}`, ['orders:read', 'orders:write']);
    const [top, mid, low, leaf] = [await newGroup(), await newGroup(), await newGroup(), await newGroup()];
    await m
      .call('post', `/api/v1/groups/${top}/roles`)
      .send({ roles: [role] })
      .expect(204);
    await m
      .call('post', `/api/v1/groups/${top}/groups`)
      .send({ groups: [mid] })
      .expect(204);
    await m
      .call('post', `/api/v1/groups/${mid}/groups`)
      .send({ groups: [low] })
      .expect(204);
    await m
      .call('post', `/api/v1/groups/${low}/groups`)
      .send({ groups: [leaf] })
      .expect(204);

    const before = await s.login();
    expect(scopeSet(before.scope)).toEqual([]);
    await m
      .call('post', `/api/v2/groups/${leaf}/members`)
      .send({ users: [s.user.id] })
      .expect(204);

    const t = await s.login();
    expect(scopeSet(t.scope)).toEqual(['orders:read', 'orders:write']);
    expect(scopeSet((await m.tokenInfo(t.access_token)).scope)).toEqual(['orders:read', 'orders:write']);
    const refreshed = await oidc.refreshTokenGrant(s.config, t.refresh_token!);
    expect(scopeSet((await m.tokenInfo(refreshed.access_token)).scope)).toEqual([
      'orders:read',
      'orders:write',
    ]);

    // un-nest the middle: the issued token loses them at once, the next token does not get them
    await m
      .call('delete', `/api/v1/groups/${mid}/groups`)
      .send({ groups: [low] })
      .expect(204);
    expect(await m.tokenInfo(t.access_token)).toMatchObject({ active: true, scope: '' });
    expect(scopeSet((await s.login()).scope)).toEqual([]);
    const again = await oidc.refreshTokenGrant(s.config, refreshed.refresh_token ?? t.refresh_token!);
    expect(scopeSet(again.scope)).toEqual([]);
  });

  it('a second path keeps what one cut path gave (the ancestry counts paths)', async () => {
    const s = await setup(['p:read']);
    const role = await newRole();
    await s.grant(`roles/${role}`, ['p:read']);
    const [top, left, right, bottom] = [
      await newGroup(),
      await newGroup(),
      await newGroup(),
      await newGroup(),
    ];
    await m
      .call('post', `/api/v1/groups/${top}/roles`)
      .send({ roles: [role] })
      .expect(204);
    await m
      .call('post', `/api/v1/groups/${top}/groups`)
      .send({ groups: [left, right] })
      .expect(204);
    await m
      .call('post', `/api/v1/groups/${left}/groups`)
      .send({ groups: [bottom] })
      .expect(204);
    await m
      .call('post', `/api/v1/groups/${right}/groups`)
      .send({ groups: [bottom] })
      .expect(204);
    await m
      .call('post', `/api/v1/users/${s.user.id}/groups`)
      .send({ groups: [bottom] })
      .expect(204);
    expect(scopeSet((await s.login()).scope)).toEqual(['p:read']);
    await m
      .call('delete', `/api/v1/groups/${left}/groups`)
      .send({ groups: [bottom] })
      .expect(204);
    expect(scopeSet((await s.login()).scope)).toEqual(['p:read']);
    await m
      .call('delete', `/api/v1/groups/${top}/groups`)
      .send({ groups: [right] })
      .expect(204);
    expect(scopeSet((await s.login()).scope)).toEqual([]);
  });

  it('own permissions, role permissions, member removal and role deletion all show at once', async () => {
    const s = await setup(['a:one', 'a:two', 'a:three']);
    await s.grant(`users/${s.user.id}`, ['a:one']);
    const role = await newRole();
    await s.grant(`roles/${role}`, ['a:two', 'a:three']);
    await m
      .call('post', `/api/v1/roles/${role}/members`)
      .send({ users: [s.user.id] })
      .expect(204);
    const t = await s.login();
    expect(scopeSet(t.scope)).toEqual(['a:one', 'a:three', 'a:two']);

    // a role permission revoked
    await m
      .call('delete', `/api/v1/roles/${role}/permissions`)
      .send({ permissions: [{ resource_id: s.api.id, scopes: [s.scopes['a:three']] }] })
      .expect(204);
    expect(scopeSet((await m.tokenInfo(t.access_token)).scope)).toEqual(['a:one', 'a:two']);
    // the member removed
    await m
      .call('delete', `/api/v1/roles/${role}/members`)
      .send({ users: [s.user.id] })
      .expect(204);
    expect(scopeSet((await m.tokenInfo(t.access_token)).scope)).toEqual(['a:one']);
    expect(scopeSet((await s.login()).scope)).toEqual(['a:one']);
    // back in, then the role deleted
    await m
      .call('post', `/api/v1/users/${s.user.id}/roles`)
      .send({ roles: [role] })
      .expect(204);
    expect(scopeSet((await m.tokenInfo(t.access_token)).scope)).toEqual(['a:one', 'a:two']);
    await m.call('delete', `/api/v1/roles/${role}`).expect(204);
    expect(scopeSet((await m.tokenInfo(t.access_token)).scope)).toEqual(['a:one']);
    // the client's grants still bound what a user may get: a scope the client lacks is never in the token
    await m
      .call('delete', `/api/v1/clients/${s.client.id}/permissions`)
      .send({ permissions: [{ resource_id: s.api.id, scopes: [s.scopes['a:one']] }] })
      .expect(204);
    expect(scopeSet((await s.login()).scope)).toEqual([]);
  });
});
