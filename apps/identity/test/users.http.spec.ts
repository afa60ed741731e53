import { verifyPassword } from '@gatehouse/identity-data';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

let m: Management;
let reader: { id: string; token: string };

beforeAll(async () => {
  m = await Management.start();
  reader = await m.caller(['users:read']);
  // Two rules, so a 400 can name more than one.
  await m.ds.rows(
    `UPDATE instances SET settings = jsonb_set(settings, '{password_validators}', $1::jsonb) WHERE is_default`,
    [
      JSON.stringify([
        {
          order: 1,
          validator: 'min_length',
          description: 'At least 10 characters',
          rules: '^[\\s\\S]{10,}$',
        },
        { order: 2, validator: 'digit', description: 'At least one digit', rules: '\\d' },
      ]),
    ],
  );
});
afterAll(async () => {
  await m?.close();
});

const GOOD_PASSWORD = 'correct-horse-42';
const email = () => `${uniq('u')}@example.test`;

describe.each(VERSIONS)('Users under /api/%s', (v: Version) => {
  const base = `/api/${v}/users`;
  const agg = ENVELOPE[v].aggregations;
  const total = ENVELOPE[v].total;
  const create = (body: Record<string, unknown>) => m.call('post', base).send(body);

  it('create: 201 with the User record (no password), the password hashed with argon2id', async () => {
    const mail = email();
    const res = await create({
      user_email: mail,
      user_name: uniq('bat'),
      user_phone: '+976 9911-' + String(Math.floor(Math.random() * 9000) + 1000),
      password: GOOD_PASSWORD,
      user_nickname: 'Bat',
      user_fullName: 'Bat Dorj',
      user_metadata: { theme: 'dark', nested: { camelKey: 1 } },
      app_metadata: [{ key: 'plan', value: 'gold' }],
    }).expect(201);
    const u = res.body;
    expect(u).toMatchObject({
      id: expect.any(String),
      user_email: mail,
      user_nickname: 'Bat',
      user_fullName: 'Bat Dorj',
      user_email_verified: false,
      user_phone: expect.stringMatching(/^\+9769911\d{4}$/),
      user_phone_verified: false,
      user_metadata: { theme: 'dark', nested: { camelKey: 1 } },
      app_metadata: [{ key: 'plan', value: 'gold' }],
      is_blocked: false,
      is_invited: false,
      invited_at: null,
      created_by: m.auth.clientId,
    });
    expect(u[agg]).toMatchObject({
      user_id: u.id,
      logins: 0,
      identities: 0,
      tokens: 0,
      roles: 0,
      permissions: 0,
      last_sign_in_at: null,
    });
    expect(u.links).toEqual(
      Object.fromEntries(
        ['identities', 'roles', 'permissions', 'groups', 'tenants'].map((c) => [c, `${base}/${u.id}/${c}`]),
      ),
    );
    expect(JSON.stringify(u)).not.toMatch(/password|argon2/);
    const [row] = await m.ds.rows<{ password_hash: string }>(
      `SELECT password_hash FROM users WHERE id = $1`,
      [u.id],
    );
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(row.password_hash, GOOD_PASSWORD)).toBe(true);
  });

  it('create: 400 naming each password rule it fails, missing logins and bad fields; nothing written', async () => {
    const mail = email();
    const weak = await create({ user_email: mail, password: 'short' }).expect(400);
    expect(weak.body).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('At least 10 characters'),
      details: [
        { field: 'password', message: 'At least 10 characters' },
        { field: 'password', message: 'At least one digit' },
      ],
    });
    const oneRule = await create({ user_email: mail, password: 'longenough-but-no-digit' }).expect(400);
    expect(oneRule.body.details).toEqual([{ field: 'password', message: 'At least one digit' }]);
    await create({ user_nickname: 'nobody' }).expect(400);
    await create({ user_email: 'not-an-email' }).expect(400);
    await create({ user_name: 'has@at' }).expect(400);
    await create({ user_phone: '12345' }).expect(400);
    await create({ user_email: mail, is_admin: true }).expect(400);
    await create({ user_email: mail, user_metadata: 'x' }).expect(400);
    await create({ user_email: mail, tenant_id: missingId() }).expect(400);
    expect(await m.ds.rows(`SELECT 1 FROM users WHERE lower(user_email) = lower($1)`, [mail])).toHaveLength(
      0,
    );
    await m.call('post', base, reader.token).send({ user_email: mail }).expect(403);
    await m.call('post', base, '').send({ user_email: mail }).expect(401);
  });

  it('create and modify: 409 for a taken e-mail (any case), login name or phone', async () => {
    const mail = email();
    const name = uniq('login');
    const phone = `+97688${String(Date.now()).slice(-6)}`;
    const first = (await create({ user_email: mail, user_name: name, user_phone: phone }).expect(201)).body;
    for (const body of [
      { user_email: mail.toUpperCase() },
      { user_name: name.toUpperCase() },
      { user_phone: phone },
    ]) {
      const res = await create(body).expect(409);
      expect(res.body.code).toBe('conflict');
    }
    const other = (await create({ user_email: email() }).expect(201)).body;
    await m.call('patch', `${base}/${other.id}`).send({ user_name: name }).expect(409);
    expect(first.id).toBeDefined();
  });

  it('read and list: fields, expand, q, sort, paging and the total count; never a password', async () => {
    const tag = uniq('ul');
    const ids: string[] = [];
    for (const n of ['b', 'a', 'c'])
      ids.push(
        (await create({ user_email: `${tag}-${n}@example.test`, password: GOOD_PASSWORD }).expect(201)).body
          .id,
      );
    const q = encodeURIComponent(`user_email like '${tag}-%'`);
    const list = await m
      .call('get', `${base}?q=${q}&sort=user_email:desc&limit=2&${total}=true`, reader.token)
      .expect(200);
    expect(list.body).toMatchObject({ [total]: 3, count: 2, [ENVELOPE[v].hasMore]: true });
    expect(list.body.items.map((u: { user_email: string }) => u.user_email)).toEqual([
      `${tag}-c@example.test`,
      `${tag}-b@example.test`,
    ]);
    expect(JSON.stringify(list.body)).not.toMatch(/password|argon2/);
    const one = await m.call('get', `${base}/${ids[0]}?fields=id,user_email,${agg}`).expect(200);
    expect(Object.keys(one.body).sort()).toEqual([agg, 'id', 'user_email'].sort());
    await m.ds.rows(
      `INSERT INTO user_identities (instance_id, user_id, provider, provider_user_id, profile)
       SELECT instance_id, id, 'google', $2, '{"name": "Bat G", "email_verified": true}' FROM users WHERE id = $1`,
      [ids[0], `g-${tag}`],
    );
    const expanded = await m.call('get', `${base}/${ids[0]}?expand=all`).expect(200);
    expect(expanded.body).not.toHaveProperty('links');
    expect(expanded.body).toMatchObject({ roles: [], permissions: [], groups: [], tenants: [] });
    expect(expanded.body.identities).toEqual([
      expect.objectContaining({
        user_id: ids[0],
        identity_provider: 'google',
        user_identifier: `g-${tag}`,
        identity_data: expect.objectContaining({ user_fullname: 'Bat G', email_verified: true }),
        access_token: null,
      }),
    ]);
    expect(expanded.body[agg].identities).toBe(1);
    const verified = encodeURIComponent(
      `user_email like '${tag}-%' and user_email_verified = false and user_fullName is null`,
    );
    expect((await m.call('get', `${base}?q=${verified}&${total}=true`).expect(200)).body[total]).toBe(3);
    for (const bad of [
      'sort=password_hash',
      'fields=password',
      `q=${encodeURIComponent("password_hash = 'x'")}`,
      'limit=0',
    ]) {
      const r = await m.call('get', `${base}?${bad}`);
      expect([bad, r.status]).toEqual([bad, 400]);
    }
    await m.call('get', `${base}/${missingId()}`).expect(404);
    await m.call('get', `${base}/xyz`).expect(400);
    await m.call('get', base, '').expect(401);
    const noScope = await m.caller(['clients:read']);
    await m.call('get', base, noScope.token).expect(403);
  });

  it('modify: 200; a changed e-mail becomes unverified; a password is not modifiable here', async () => {
    const u = (await create({ user_email: email(), user_email_verified: true }).expect(201)).body;
    expect(u.user_email_verified).toBe(true);
    const same = await m.call('patch', `${base}/${u.id}`).send({ user_nickname: 'Nick' }).expect(200);
    expect(same.body).toMatchObject({ user_nickname: 'Nick', user_email_verified: true });
    const moved = await m.call('patch', `${base}/${u.id}`).send({ user_email: email() }).expect(200);
    expect(moved.body.user_email_verified).toBe(false);
    await m.call('patch', `${base}/${u.id}`).send({ password: GOOD_PASSWORD }).expect(400);
    await m.call('patch', `${base}/${u.id}`).send({ user_email: null }).expect(400); // no login left
    await m.call('patch', `${base}/${missingId()}`).send({ user_nickname: 'x' }).expect(404);
    await m.call('patch', `${base}/${u.id}`, reader.token).send({ user_nickname: 'x' }).expect(403);
  });

  it('set password: 200 with the user; 400 naming the failing rules; 404', async () => {
    const u = (await create({ user_email: email() }).expect(201)).body;
    const weak = await m.call('put', `${base}/${u.id}/password`).send({ password: 'abc' }).expect(400);
    expect(weak.body.details.map((d: { message: string }) => d.message)).toEqual([
      'At least 10 characters',
      'At least one digit',
    ]);
    await m.call('put', `${base}/${u.id}/password`).send({}).expect(400);
    await m.call('put', `${base}/${u.id}/password`).send({ password: 12345678901 }).expect(400);
    const ok = await m
      .call('put', `${base}/${u.id}/password?fields=id`)
      .send({ password: GOOD_PASSWORD })
      .expect(200);
    expect(ok.body).toEqual({ id: u.id });
    const [row] = await m.ds.rows<{ password_hash: string }>(
      `SELECT password_hash FROM users WHERE id = $1`,
      [u.id],
    );
    expect(await verifyPassword(row.password_hash, GOOD_PASSWORD)).toBe(true);
    await m.call('put', `${base}/${missingId()}/password`).send({ password: GOOD_PASSWORD }).expect(404);
    await m
      .call('put', `${base}/${u.id}/password`, reader.token)
      .send({ password: GOOD_PASSWORD })
      .expect(403);
    await m.call('get', `${base}/${u.id}/password`).expect(405);
  });

  it('block and unblock: 200 with the user, idempotent; 404', async () => {
    const u = (await create({ user_email: email() }).expect(201)).body;
    expect((await m.call('post', `${base}/${u.id}/block`).expect(200)).body).toMatchObject({
      id: u.id,
      is_blocked: true,
    });
    expect((await m.call('post', `${base}/${u.id}/block`).expect(200)).body.is_blocked).toBe(true);
    expect((await m.call('post', `${base}/${u.id}/unblock`).expect(200)).body.is_blocked).toBe(false);
    await m.call('post', `${base}/${missingId()}/block`).expect(404);
    await m.call('post', `${base}/${u.id}/block`, reader.token).expect(403);
  });

  it('delete: 204, then 404', async () => {
    const u = (await create({ user_email: email() }).expect(201)).body;
    await m.call('delete', `${base}/${u.id}`, reader.token).expect(403);
    await m.call('delete', `${base}/${u.id}`).expect(204);
    await m.call('get', `${base}/${u.id}`).expect(404);
    await m.call('delete', `${base}/${u.id}`).expect(404);
  });
});

describe("hole 10: 'already exists in the instance' reveals other tenants' users", () => {
  it('a tenant-bound caller taking a value used in another tenant: 409 that says neither where nor whose', async () => {
    const tenant = async () =>
      (
        await m
          .call('post', '/api/v1/tenants')
          .send({ tenant_name: uniq('t') })
          .expect(201)
      ).body as {
        id: string;
      };
    const [mine, theirs] = [await tenant(), await tenant()];
    const caller = await m.caller(['users:read', 'users:write'], { tenantId: mine.id, isGlobal: false });
    const mail = email();
    const name = uniq('login');
    const phone = `+97699${String(Date.now()).slice(-6)}`;
    await m
      .call('post', '/api/v1/users')
      .send({ user_email: mail, user_name: name, user_phone: phone, tenant_id: theirs.id })
      .expect(201);
    const own = (
      await m.call('post', '/api/v1/users', caller.token).send({ user_email: email() }).expect(201)
    ).body as { id: string };
    for (const [field, value] of [
      ['user_email', mail],
      ['user_name', name],
      ['user_phone', phone],
    ] as const) {
      for (const res of [
        await m.call('post', '/api/v1/users', caller.token).send({ [field]: value }),
        await m.call('patch', `/api/v1/users/${own.id}`, caller.token).send({ [field]: value }),
        await m.call('post', '/api/v1/users/invite', caller.token).send({ user_email: mail }),
      ]) {
        expect(res.status).toBe(409);
        expect(res.body.code).toBe('conflict');
        expect(res.body.message).not.toMatch(/instance|tenant|exists/i);
      }
      const res = await m.call('post', '/api/v1/users', caller.token).send({ [field]: value });
      expect(res.body.message).toBe(`This ${field} is not available`);
    }
  });
});
