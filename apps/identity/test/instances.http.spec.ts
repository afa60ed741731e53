import request from 'supertest';
import { DEFAULT_PASSWORD_VALIDATORS, MANAGEMENT_AUDIENCE, TREE_AUDIENCE } from '@gatehouse/identity-data';
import { buildService, type BuiltService } from '@gatehouse/service';
import { identityService } from '../src/identity.service-definition.js';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';
import type { IdentityEnv } from './support.js';

/**
 * Instances and Instance Admins (document 2, multi-instance mode) over HTTP, in both presentations: every
 * operation's success, every 4xx, who reaches which instance, and 501 on a service running without the mode.
 * Confinement of everything else to its instance: instances.e2e.spec.ts.
 */
let m: Management;
let defaultId: string;

beforeAll(async () => {
  m = await Management.start({ MULTI_INSTANCE: 'true' });
  defaultId = (await m.ds.one<{ id: string }>(`SELECT id FROM instances WHERE is_default`))!.id;
});
afterAll(async () => {
  await m?.close();
});

const counts = async (instanceId: string) =>
  (await m.ds.one<Record<string, number>>(
    `SELECT (SELECT count(*) FROM clients WHERE instance_id = $1)::int AS clients,
            (SELECT count(*) FROM tenants WHERE instance_id = $1)::int AS tenants,
            (SELECT count(*) FROM resources WHERE instance_id = $1)::int AS resources,
            (SELECT count(*) FROM users WHERE instance_id = $1)::int AS users,
            (SELECT count(*) FROM roles WHERE instance_id = $1)::int AS roles`,
    [instanceId],
  ))!;

/** Everything instance creation and admin changes write, to show an error wrote nothing. */
const snapshot = async () =>
  m.ds.one<Record<string, unknown>>(
    `SELECT (SELECT count(*) FROM instances)::int AS instances, (SELECT count(*) FROM clients)::int AS clients,
            (SELECT count(*) FROM resources)::int AS resources, (SELECT count(*) FROM scopes)::int AS scopes,
            (SELECT count(*) FROM client_permissions)::int AS permissions,
            (SELECT count(*) FROM instance_admins)::int AS admins,
            (SELECT json_agg(i ORDER BY i.id) FROM instances i) AS rows`,
  );

interface Created {
  id: string;
  clientId: string;
  secret: string;
  token: string;
}

/** A new instance through the API, and a management token of its default client. */
async function newInstance(v: Version = 'v2', extra: Record<string, unknown> = {}): Promise<Created> {
  const res = await m
    .call('post', `/api/${v}/instances`)
    .send({ instance_name: uniq('inst'), ...extra })
    .expect(201);
  const { client_id: clientId, client_secret: secret } = res.body.default_client;
  return { id: res.body.id, clientId, secret, token: await m.token(clientId, secret) };
}

async function userOf(token: string, extra: Record<string, unknown> = {}) {
  return (
    await m
      .call('post', '/api/v2/users', token)
      .send({ user_email: `${uniq('u')}@example.test`, password: 'user-password-1', ...extra })
      .expect(201)
  ).body as { id: string; user_email: string };
}

describe.each(VERSIONS)('instances under /api/%s', (v: Version) => {
  const api = `/api/${v}`;
  const { total, hasMore, aggregations } = ENVELOPE[v];

  it('get and list: every field of the Instance, real counts in aggregations, admins linked or expanded', async () => {
    const got = await m.call('get', `${api}/instances/${defaultId}`).expect(200);
    const c = await counts(defaultId);
    expect(got.body).toEqual({
      id: defaultId,
      instance_name: 'default',
      instance_description: 'Default instance',
      is_default: true,
      instance_metadata: {
        identity_providers: [],
        supported_locales: ['en', 'mn'],
        password_validators: DEFAULT_PASSWORD_VALIDATORS,
      },
      app_metadata: [],
      mfa: null,
      created_by: null,
      created_at: expect.any(String),
      updated_by: null,
      updated_at: expect.any(String),
      [aggregations]: {
        id: defaultId,
        instance_id: defaultId,
        ...c,
        created_by: null,
        created_at: got.body.created_at,
        updated_by: null,
        updated_at: got.body.updated_at,
      },
      links: { admins: `${api}/instances/${defaultId}/admins` },
    });
    expect(c.clients).toBeGreaterThanOrEqual(1);
    expect(c.resources).toBeGreaterThanOrEqual(2);

    // The bootstrap admin user is the default instance's first admin.
    const expanded = await m.call('get', `${api}/instances/${defaultId}?expand=all`).expect(200);
    expect(expanded.body.links).toBeUndefined();
    expect(expanded.body.admins).toEqual([
      expect.objectContaining({ user_email: 'admin@gatehouse.local', user_name: 'admin' }),
    ]);
    expect(JSON.stringify(expanded.body.admins)).not.toContain('password');

    const fields = await m.call('get', `${api}/instances/${defaultId}?fields=id,instance_name`).expect(200);
    expect(fields.body).toEqual({ id: defaultId, instance_name: 'default' });

    const list = await m
      .call(
        'get',
        `${api}/instances?${total}=true&sort=instance_name:asc&q=${encodeURIComponent("instance_name = 'default'")}`,
      )
      .expect(200);
    expect(list.body).toMatchObject({ [total]: 1, count: 1, [hasMore]: false, limit: 10, offset: 0 });
    expect(list.body.items[0]).toMatchObject({ id: defaultId, [aggregations]: { instance_id: defaultId } });
    expect(list.body.items[0].default_client).toBeUndefined();
  });

  it('create: 201 with the default client once; own system resources and client granted every system scope', async () => {
    const name = uniq('Acme');
    const res = await m
      .call('post', `${api}/instances?fields=id`)
      .send({ instance_name: name, instance_description: 'ACME' })
      .expect(201);
    // `fields` never hides the credentials: they are shown this once.
    expect(res.body).toEqual({
      id: expect.any(String),
      default_client: { client_id: expect.any(String), client_secret: expect.any(String) },
    });
    const id = res.body.id as string;
    const { client_id: clientId, client_secret: secret } = res.body.default_client;
    expect(secret.length).toBeGreaterThanOrEqual(32);

    const got = await m.call('get', `${api}/instances/${id}`).expect(200);
    expect(got.body).toMatchObject({
      id,
      instance_name: name,
      instance_description: 'ACME',
      is_default: false,
      instance_metadata: {
        identity_providers: [],
        supported_locales: ['en', 'mn'],
        password_validators: DEFAULT_PASSWORD_VALIDATORS,
      },
      app_metadata: [],
      // its one role: the instance's admin role, seeded with it (its admins hold their scopes through it)
      [aggregations]: { id, instance_id: id, clients: 1, tenants: 0, resources: 2, users: 0, roles: 1 },
    });
    const [adminRole] = await m.ds.rows<{ id: string; permissions: number; all: number }>(
      `SELECT r.id,
              (SELECT count(*) FROM role_permissions p WHERE p.role_id = r.id)::int AS permissions,
              (SELECT count(*) FROM scopes s JOIN resources x ON x.id = s.resource_id
                WHERE x.instance_id = $1 AND x.is_system)::int AS all
         FROM roles r WHERE r.instance_id = $1 AND r.system_role = 'instance_admin'`,
      [id],
    );
    expect(adminRole.permissions).toBe(adminRole.all);
    expect(got.body.default_client).toBeUndefined();
    expect(
      JSON.stringify((await m.call('get', `${api}/instances?limit=100`).expect(200)).body),
    ).not.toContain(secret);

    // Its own system resources with every scope, all granted to its own default client.
    const resources = await m.ds.rows<{
      identifier_url: string;
      is_system: boolean;
      scopes: number;
      granted: number;
    }>(
      `SELECT r.identifier_url, r.is_system,
              (SELECT count(*) FROM scopes s WHERE s.resource_id = r.id)::int AS scopes,
              (SELECT count(*) FROM client_permissions p WHERE p.resource_id = r.id AND p.client_id = $2)::int AS granted
         FROM resources r WHERE r.instance_id = $1 ORDER BY r.identifier_url`,
      [id, clientId],
    );
    expect(resources.map((r) => r.identifier_url)).toEqual([MANAGEMENT_AUDIENCE, TREE_AUDIENCE]);
    for (const r of resources) {
      expect(r.is_system).toBe(true);
      expect(r.granted).toBe(r.scopes);
    }
    const client = await m.ds.one<{ instance_id: string; is_default: boolean; is_global: boolean }>(
      `SELECT instance_id, is_default, is_global FROM clients WHERE id = $1`,
      [clientId],
    );
    expect(client).toEqual({ instance_id: id, is_default: true, is_global: true });
    // Its credentials work at once, for both system APIs, with every scope.
    const info = await m.tokenInfo(await m.token(clientId, secret));
    expect(info).toMatchObject({ active: true, client_id: clientId });
    expect(String(info.scope).split(' ')).toEqual(expect.arrayContaining(['instances:write', 'users:write']));
    expect((await m.tokenInfo(await m.token(clientId, secret, TREE_AUDIENCE))).active).toBe(true);

    // instance_metadata and app_metadata may be given at creation; lists not given get the defaults.
    const withMeta = await m
      .call('post', `${api}/instances`)
      .send({
        instance_name: uniq('meta'),
        instance_metadata: { supported_locales: ['mn-MN', 'en'] },
        app_metadata: [{ key: 'plan', value: 'gold' }],
      })
      .expect(201);
    expect(withMeta.body).toMatchObject({
      instance_metadata: {
        supported_locales: ['mn-MN', 'en'],
        password_validators: DEFAULT_PASSWORD_VALIDATORS,
        identity_providers: [],
      },
      app_metadata: [{ key: 'plan', value: 'gold' }],
    });
  });

  it('modify: fields not given stay, each instance_metadata list given replaces that list', async () => {
    const b = await newInstance(v);
    const validators = [
      { order: 2, validator: 'digit', description: 'A digit', rules: '\\d' },
      { order: 1, validator: 'length', description: 'At least 12 characters', rules: '^[\\s\\S]{12,}$' },
    ];
    const res = await m
      .call('patch', `${api}/instances/${b.id}`)
      .send({
        instance_description: 'changed',
        instance_metadata: {
          password_validators: validators,
          identity_providers: [{ identity_provider: 'google', enabled: true }],
        },
        app_metadata: [{ key: 'k', value: 'v' }],
      })
      .expect(200);
    expect(res.body).toMatchObject({
      id: b.id,
      instance_description: 'changed',
      instance_metadata: {
        password_validators: validators,
        identity_providers: [{ identity_provider: 'google', enabled: true }],
        supported_locales: ['en', 'mn'],
      },
      app_metadata: [{ key: 'k', value: 'v' }],
      [aggregations]: { clients: 1, resources: 2 },
    });
    expect(res.body.updated_by).toBe(m.auth.clientId.toLowerCase()); // the token's subject: the calling client
    const renamed = uniq('renamed');
    const again = await m
      .call('patch', `${api}/instances/${b.id}`)
      .send({ instance_name: renamed, instance_metadata: { supported_locales: ['mn', 'en_US'] } })
      .expect(200);
    expect(again.body).toMatchObject({
      instance_name: renamed,
      instance_description: 'changed',
      instance_metadata: { password_validators: validators, supported_locales: ['mn', 'en_US'] },
    });
    // An empty list is no rule at all.
    const none = await m
      .call('patch', `${api}/instances/${b.id}`)
      .send({ instance_metadata: { password_validators: [] } })
      .expect(200);
    expect(none.body.instance_metadata.password_validators).toEqual([]);
  });

  it('mfa: set at creation, changed, cleared (null inherits); another value is 400 and changes nothing', async () => {
    const created = (
      await m
        .call('post', `${api}/instances`)
        .send({ instance_name: uniq('mfa'), mfa: 'required' })
        .expect(201)
    ).body;
    expect(created.mfa).toBe('required');
    const path = `${api}/instances/${created.id}`;
    expect((await m.call('patch', path).send({ mfa: 'off' }).expect(200)).body.mfa).toBe('off');
    const bad = await m.call('patch', path).send({ mfa: 'always', instance_description: 'x' }).expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('mfa') });
    expect((await m.call('get', path).expect(200)).body).toMatchObject({ mfa: 'off' });
    expect((await m.call('get', path).expect(200)).body.instance_description).not.toBe('x');
    expect((await m.call('patch', path).send({ mfa: null }).expect(200)).body.mfa).toBeNull();
    await m
      .call('post', `${api}/instances`)
      .send({ instance_name: uniq('mfa'), mfa: true })
      .expect(400);
  });

  it('a PATCHed password rule is enforced at PUT /users/:id/password and at user create', async () => {
    const b = await newInstance(v);
    const user = await userOf(b.token);
    await m
      .call('patch', `${api}/instances/${b.id}`, b.token)
      .send({
        instance_metadata: {
          password_validators: [
            { order: 1, validator: 'upper', description: 'An upper-case letter', rules: '[A-Z]' },
            { order: 2, validator: 'length', description: 'At least 10 characters', rules: '^.{10,}$' },
          ],
        },
      })
      .expect(200);
    const weak = await m
      .call('put', `${api}/users/${user.id}/password`, b.token)
      .send({ password: 'lowercase1' })
      .expect(400);
    expect(weak.body.message).toContain('An upper-case letter');
    expect(weak.body.message).not.toContain('At least 10 characters');
    await m
      .call('put', `${api}/users/${user.id}/password`, b.token)
      .send({ password: 'Uppercase-ok' })
      .expect(200);
    const created = await m
      .call('post', `${api}/users`, b.token)
      .send({ user_email: `${uniq('w')}@example.test`, password: 'Short1' })
      .expect(400);
    expect(created.body.message).toContain('At least 10 characters');
    // The default instance's rule is untouched: its users still need 8 characters only.
    await userOf(m.adminToken, { password: 'eight-ch' });
  });

  it('admins: add (204, idempotent), list as Users with q/sort/paging, remove (204, idempotent)', async () => {
    const b = await newInstance(v);
    const [u1, u2, u3] = [await userOf(b.token), await userOf(b.token), await userOf(b.token)];
    const admins = `${api}/instances/${b.id}/admins`;
    await m
      .call('post', admins)
      .send({ users: [u1.id, u2.id] })
      .expect(204);
    await m
      .call('post', admins)
      .send({ users: [u1.id, u2.id.toUpperCase()] })
      .expect(204);
    const list = await m.call('get', `${admins}?${total}=true&sort=user_email:desc&limit=1`).expect(200);
    const emails = [u1.user_email, u2.user_email].sort().reverse();
    expect(list.body).toMatchObject({ [total]: 2, count: 1, [hasMore]: true, limit: 1, offset: 0 });
    expect(list.body.items[0]).toMatchObject({
      user_email: emails[0],
      instance_id: b.id,
      links: expect.any(Object),
      [aggregations]: expect.objectContaining({ user_id: list.body.items[0].id }),
    });
    const q = await m
      .call(
        'get',
        `${admins}?q=${encodeURIComponent(`user_email = '${u2.user_email}'`)}&fields=id,user_email`,
      )
      .expect(200);
    expect(q.body.items).toEqual([{ id: u2.id, user_email: u2.user_email }]);
    const expanded = await m.call('get', `${api}/instances/${b.id}?expand=all&fields=id,admins`).expect(200);
    expect(expanded.body.admins.map((a: { id: string }) => a.id).sort()).toEqual([u1.id, u2.id].sort());

    await m
      .call('delete', admins)
      .send({ users: [u1.id, u3.id] })
      .expect(204);
    await m
      .call('delete', admins)
      .send({ users: [u1.id] })
      .expect(204);
    const after = await m.call('get', admins).expect(200);
    expect(after.body.items.map((a: { id: string }) => a.id)).toEqual([u2.id]);
    // Deleting the user drops the admin link.
    await m.call('delete', `${api}/users/${u2.id}`, b.token).expect(204);
    expect((await m.call('get', admins).expect(200)).body.items).toEqual([]);
    // Its own caller (B's default client) manages B's admins too.
    await m
      .call('post', admins, b.token)
      .send({ users: [u3.id] })
      .expect(204);
    expect((await m.call('get', admins, b.token).expect(200)).body.count).toBe(1);
  });

  it('admins 4xx: users of another instance or unknown 409, bad bodies 400, unknown instance 404; nothing written', async () => {
    const b = await newInstance(v);
    const mine = await userOf(b.token);
    const theirs = await userOf(m.adminToken);
    const admins = `${api}/instances/${b.id}/admins`;
    const before = await snapshot();
    for (const method of ['post', 'delete'] as const) {
      const other = await m
        .call(method, admins)
        .send({ users: [mine.id, theirs.id] })
        .expect(409);
      expect(other.body).toEqual({ code: 'conflict', message: expect.stringContaining(theirs.id) });
      const unknown = missingId();
      expect(
        (
          await m
            .call(method, admins)
            .send({ users: [unknown] })
            .expect(409)
        ).body.message,
      ).toContain(unknown);
      for (const body of [
        {},
        { users: [] },
        { users: ['nope'] },
        { users: 'x' },
        { users: [mine.id], extra: 1 },
      ]) {
        const bad = await m.call(method, admins).send(body).expect(400);
        expect(bad.body.code).toBe('invalid_request');
      }
      await m
        .call(method, `${api}/instances/${missingId()}/admins`)
        .send({ users: [mine.id] })
        .expect(404);
      await m
        .call(method, `${api}/instances/not-a-uuid/admins`)
        .send({ users: [mine.id] })
        .expect(400);
    }
    await m.call('get', `${api}/instances/${missingId()}/admins`).expect(404);
    await m.call('get', `${api}/instances/not-a-uuid/admins`).expect(400);
    await m.call('get', `${admins}?sort=nope:asc`).expect(400);
    await m.call('get', `${admins}?q=${encodeURIComponent('nope = 1')}`).expect(400);
    expect(await snapshot()).toEqual(before);
  });

  it('4xx of instances: 400 naming the field (a catastrophic regex among them), 409 on a taken name, 404; nothing written', async () => {
    const b = await newInstance(v);
    const before = await snapshot();
    const rule = (rules: unknown) => ({
      instance_metadata: { password_validators: [{ order: 1, validator: 'x', description: 'x', rules }] },
    });
    const bad: [Record<string, unknown>, string][] = [
      [{ ...rule('^(a+)+$') }, 'instance_metadata.password_validators.0.rules'],
      [{ ...rule('(x+x+)+y') }, 'catastrophic backtracking'],
      [{ ...rule('^a*a*a*b$') }, 'polynomial of degree 3'],
      [{ ...rule('([') }, 'not a valid regular expression'],
      [{ ...rule('') }, 'instance_metadata.password_validators.0.rules'],
      [{ ...rule(5) }, 'instance_metadata.password_validators.0.rules'],
      [
        {
          instance_metadata: {
            password_validators: [{ order: 1.5, validator: 'x', description: 'x', rules: 'a' }],
          },
        },
        'instance_metadata.password_validators.0.order',
      ],
      [
        {
          instance_metadata: {
            password_validators: [{ order: 1, validator: '', description: 'x', rules: 'a' }],
          },
        },
        'instance_metadata.password_validators.0.validator',
      ],
      [
        { instance_metadata: { password_validators: [{ order: 1, validator: 'x', rules: 'a' }] } },
        'instance_metadata.password_validators.0.description',
      ],
      [
        {
          instance_metadata: {
            password_validators: [{ order: 1, validator: 'x', description: 'x', rules: 'a', y: 1 }],
          },
        },
        'instance_metadata.password_validators.0.y',
      ],
      [
        { instance_metadata: { supported_locales: ['en', 'not a locale'] } },
        'instance_metadata.supported_locales',
      ],
      [{ instance_metadata: { supported_locales: 'en' } }, 'instance_metadata.supported_locales'],
      [{ instance_metadata: { supported_locales: ['en', 'en'] } }, 'instance_metadata.supported_locales'],
      [
        { instance_metadata: { identity_providers: [{ identity_provider: 'g' }] } },
        'instance_metadata.identity_providers.0.enabled',
      ],
      [
        { instance_metadata: { identity_providers: [{ identity_provider: '', enabled: true }] } },
        'instance_metadata.identity_providers.0.identity_provider',
      ],
      [
        {
          instance_metadata: {
            identity_providers: [
              { identity_provider: 'g', enabled: true },
              { identity_provider: 'g', enabled: false },
            ],
          },
        },
        'instance_metadata.identity_providers',
      ],
      [{ instance_metadata: { colour: 'red' } }, 'instance_metadata.colour'],
      [{ instance_metadata: null }, 'instance_metadata'],
      [{ instance_metadata: [] }, 'instance_metadata'],
      [{ instance_name: '' }, 'instance_name'],
      [{ instance_name: null }, 'instance_name'],
      [{ instance_name: 5 }, 'instance_name'],
      [{ instance_description: 5 }, 'instance_description'],
      [{ app_metadata: [{ key: 1 }] }, 'app_metadata.0.key'],
      [{ is_default: true }, 'is_default'],
    ];
    for (const [body, field] of bad) {
      const res = await m.call('patch', `${api}/instances/${b.id}`).send(body);
      expect([JSON.stringify(body), res.status, res.body.code]).toEqual([
        JSON.stringify(body),
        400,
        'invalid_request',
      ]);
      expect([JSON.stringify(body), res.body.message]).toEqual([
        JSON.stringify(body),
        expect.stringContaining(field),
      ]);
      const created = await m.call('post', `${api}/instances`).send({ instance_name: uniq('bad'), ...body });
      expect([JSON.stringify(body), created.status]).toEqual([JSON.stringify(body), 400]);
    }
    for (const body of [{}, { instance_description: 'no name' }, { instance_name: '   ' }]) {
      const res = await m.call('post', `${api}/instances`).send(body).expect(400);
      expect(res.body.message).toContain('instance_name');
    }
    expect(await snapshot()).toEqual(before);

    const taken = (await m.call('get', `${api}/instances/${b.id}`).expect(200)).body.instance_name as string;
    const dup = await m
      .call('post', `${api}/instances`)
      .send({ instance_name: taken.toUpperCase() })
      .expect(409);
    expect(dup.body).toEqual({ code: 'conflict', message: expect.stringContaining('instance_name') });
    await m.call('patch', `${api}/instances/${defaultId}`).send({ instance_name: taken }).expect(409);
    await m.call('get', `${api}/instances/${missingId()}`).expect(404);
    await m.call('patch', `${api}/instances/${missingId()}`).send({ instance_description: 'x' }).expect(404);
    await m.call('get', `${api}/instances/not-a-uuid`).expect(400);
    await m.call('patch', `${api}/instances/not-a-uuid`).send({}).expect(400);
    await m.call('get', `${api}/instances?fields=nope`).expect(400);
    await m.call('get', `${api}/instances?expand=some`).expect(400);
    await m.call('get', `${api}/instances/${b.id}?expand=some`).expect(400);
    expect(await snapshot()).toEqual(before);
  });

  it('reach: another instance sees only itself (404 for others, 403 to create); a tenant-bound caller changes nothing', async () => {
    const b = await newInstance(v);
    const c = await newInstance(v);
    const listB = await m.call('get', `${api}/instances?${total}=true`, b.token).expect(200);
    expect(listB.body).toMatchObject({ [total]: 1, count: 1 });
    expect(listB.body.items[0].id).toBe(b.id);
    for (const other of [defaultId, c.id]) {
      await m.call('get', `${api}/instances/${other}`, b.token).expect(404);
      await m
        .call('patch', `${api}/instances/${other}`, b.token)
        .send({ instance_description: 'x' })
        .expect(404);
      await m.call('get', `${api}/instances/${other}/admins`, b.token).expect(404);
      await m
        .call('post', `${api}/instances/${other}/admins`, b.token)
        .send({ users: [missingId()] })
        .expect(404);
    }
    const before = await snapshot();
    const create = await m
      .call('post', `${api}/instances`, b.token)
      .send({ instance_name: uniq('no') })
      .expect(403);
    expect(create.body.code).toBe('forbidden');
    expect(await snapshot()).toEqual(before);
    await m
      .call('patch', `${api}/instances/${b.id}`, b.token)
      .send({ instance_description: 'mine' })
      .expect(200);
    // The default instance's global caller reaches them all.
    const all = await m.call('get', `${api}/instances?limit=100`).expect(200);
    expect(all.body.items.map((i: { id: string }) => i.id)).toEqual(
      expect.arrayContaining([defaultId, b.id, c.id]),
    );

    // A client bound to a tenant of the default instance: its own instance to read, nothing to change.
    const tenantId = await m.tenant();
    const bound = await m.caller(['instances:read', 'instances:write'], { tenantId, isGlobal: false });
    const seen = await m.call('get', `${api}/instances`, bound.token).expect(200);
    expect(seen.body.items.map((i: { id: string }) => i.id)).toEqual([defaultId]);
    await m.call('get', `${api}/instances/${b.id}`, bound.token).expect(404);
    const snap = await snapshot();
    for (const [method, path, body] of [
      ['post', `${api}/instances`, { instance_name: uniq('t') }],
      ['patch', `${api}/instances/${defaultId}`, { instance_description: 'x' }],
      ['post', `${api}/instances/${defaultId}/admins`, { users: [missingId()] }],
      ['delete', `${api}/instances/${defaultId}/admins`, { users: [missingId()] }],
    ] as const) {
      const res = await m.call(method, path, bound.token).send(body);
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'forbidden']);
    }
    expect(await snapshot()).toEqual(snap);
    // It sees the admins of its own tenant only (the bootstrap admin has no tenant).
    const tenantUser = await userOf(m.adminToken, { tenant_id: tenantId });
    await m
      .call('post', `${api}/instances/${defaultId}/admins`)
      .send({ users: [tenantUser.id] })
      .expect(204);
    const boundAdmins = await m.call('get', `${api}/instances/${defaultId}/admins`, bound.token).expect(200);
    expect(boundAdmins.body.items.map((u: { id: string }) => u.id)).toEqual([tenantUser.id]);
    const allAdmins = await m.call('get', `${api}/instances/${defaultId}/admins`).expect(200);
    expect(allAdmins.body.items.map((u: { id: string }) => u.id)).toContain(tenantUser.id);
    expect(allAdmins.body.count).toBeGreaterThanOrEqual(2);
    await m
      .call('delete', `${api}/instances/${defaultId}/admins`)
      .send({ users: [tenantUser.id] })
      .expect(204);
  });
});

describe('without multi-instance mode (MULTI_INSTANCE=false)', () => {
  let off: BuiltService<IdentityEnv>;

  beforeAll(async () => {
    off = (await buildService(identityService, {
      ...m.env,
      MULTI_INSTANCE: false,
    })) as BuiltService<IdentityEnv>;
  });
  afterAll(async () => {
    await off?.close();
  });

  const ops = (v: Version, id: string): [string, string, object | undefined][] => [
    ['get', `/api/${v}/instances`, undefined],
    ['post', `/api/${v}/instances`, { instance_name: uniq('off') }],
    ['get', `/api/${v}/instances/${id}`, undefined],
    ['patch', `/api/${v}/instances/${id}`, { instance_description: 'x' }],
    ['get', `/api/${v}/instances/${id}/admins`, undefined],
    ['post', `/api/${v}/instances/${id}/admins`, { users: [missingId()] }],
    ['delete', `/api/${v}/instances/${id}/admins`, { users: [missingId()] }],
  ];

  it.each(VERSIONS)(
    'every instance operation under /api/%s answers 501 after the token and scope checks',
    async (v) => {
      const noScopes = (await m.caller([])).token;
      const before = await snapshot();
      for (const id of [defaultId, 'not-a-uuid']) {
        for (const [method, path, body] of ops(v, id)) {
          const call = (token: string) => {
            const r = request(off.app.getHttpServer())[method as 'get'](path);
            return (token ? r.set('Authorization', `Bearer ${token}`) : r).send(body ?? (undefined as never));
          };
          const res = await call(m.adminToken);
          expect([method, path, res.status, res.body.code]).toEqual([method, path, 501, 'not_implemented']);
          expect(res.body.message).toContain('MULTI_INSTANCE');
          expect((await call('')).status).toBe(401);
          expect((await call(noScopes)).status).toBe(403);
        }
      }
      // A body that would be 400 is 501 too: the mode is checked before the body is read.
      const bad = await request(off.app.getHttpServer())
        .post(`/api/${v}/instances`)
        .set('Authorization', `Bearer ${m.adminToken}`)
        .send({ nope: 1 });
      expect(bad.status).toBe(501);
      expect(await snapshot()).toEqual(before);
      // The rest of the service works as ever.
      await request(off.app.getHttpServer())
        .get(`/api/${v}/clients`)
        .set('Authorization', `Bearer ${m.adminToken}`)
        .expect(200);
    },
  );
});
