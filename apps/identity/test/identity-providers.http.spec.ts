import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

/**
 * Tenant Identity Providers over HTTP, in both presentations: every operation's success and its 4xx; the client
 * secret is sealed at rest and answered by the create operation only.
 */
let m: Management;

beforeAll(async () => {
  // The operator's allow-list of outbound fetches (development and tests): one host name and one private range.
  m = await Management.start({ OUTBOUND_ALLOWLIST: 'idp.dev.test, 10.1.0.0/16' });
});
afterAll(async () => {
  await m?.close();
});

const body = (extra: Record<string, unknown> = {}) => ({
  identity_provider: 'google',
  name: uniq('Google'),
  issuer: `https://${uniq('idp')}.example.test`,
  client_id: uniq('client'),
  ...extra,
});

const count = async (where: string, params: unknown[]) =>
  (await m.ds.one<{ n: number }>(
    `SELECT count(*)::int AS n FROM tenant_identity_providers WHERE ${where}`,
    params,
  ))!.n;

describe.each(VERSIONS)('/tenants/:tenant_id/identity-providers under /api/%s', (v: Version) => {
  const api = `/api/${v}`;
  const { total, hasMore } = ENVELOPE[v];
  const path = (tenant: string) => `${api}/tenants/${tenant}/identity-providers`;

  it('creates (secret answered once, sealed at rest), reads, lists, modifies and deletes', async () => {
    const tenant = await m.tenant();
    const secret = `upstream-secret-${uniq('s')}`;
    const input = body({
      client_secret: secret,
      jwks_uri: 'https://keys.example.test/jwks',
      issuer: 'https://a.example.test/',
    });
    const created = (await m.call('post', path(tenant)).send(input).expect(201)).body;
    expect(created).toEqual({
      id: expect.any(String),
      instance_id: expect.any(String),
      tenant_id: tenant,
      identity_provider: 'google',
      name: input.name,
      issuer: 'https://a.example.test', // trailing slash dropped
      client_id: input.client_id,
      client_secret: secret,
      jwks_uri: 'https://keys.example.test/jwks',
      enabled: true,
      created_by: expect.any(String), // the caller's token subject
      created_at: expect.any(String),
      updated_by: expect.any(String),
      updated_at: expect.any(String),
    });
    const [stored] = await m.ds.rows<{ client_secret_enc: string }>(
      `SELECT client_secret_enc FROM tenant_identity_providers WHERE id = $1`,
      [created.id],
    );
    expect(stored.client_secret_enc).toMatch(/^gh2\./);
    expect(stored.client_secret_enc).not.toContain(secret);

    const got = (await m.call('get', `${path(tenant)}/${created.id}`).expect(200)).body;
    const { client_secret: _s, ...withoutSecret } = created;
    expect(got).toEqual(withoutSecret);
    expect(JSON.stringify(got)).not.toContain(secret);
    // not even when asked for by name
    expect(
      (await m.call('get', `${path(tenant)}/${created.id}?fields=id,client_secret`).expect(200)).body,
    ).toEqual({
      id: created.id,
    });

    await m
      .call('post', path(tenant))
      .send(body({ identity_provider: 'oidc', name: 'Zeta' }))
      .expect(201);
    const list = (await m.call('get', `${path(tenant)}?sort=name:desc&${total}=true&limit=1`).expect(200))
      .body;
    expect(list).toMatchObject({ [total]: 2, count: 1, [hasMore]: true, limit: 1, offset: 0 });
    expect(list.items[0].name).toBe('Zeta');
    expect(JSON.stringify(list)).not.toContain(secret);
    const filtered = (
      await m
        .call('get', `${path(tenant)}?q=${encodeURIComponent("identity_provider = 'google'")}`)
        .expect(200)
    ).body;
    expect(filtered.items.map((i: { id: string }) => i.id)).toEqual([created.id]);

    const patched = (
      await m
        .call('patch', `${path(tenant)}/${created.id}`)
        .send({ enabled: false, jwks_uri: null, client_secret: 'another-secret', name: 'Renamed' })
        .expect(200)
    ).body;
    expect(patched).toMatchObject({
      enabled: false,
      jwks_uri: null,
      name: 'Renamed',
      client_id: input.client_id,
    });
    expect(patched.client_secret).toBeUndefined();
    expect(JSON.stringify(patched)).not.toContain('another-secret');

    await m.call('delete', `${path(tenant)}/${created.id}`).expect(204);
    await m.call('get', `${path(tenant)}/${created.id}`).expect(404);
    expect(await count('id = $1', [created.id])).toBe(0);
  });

  it('400 for bad bodies and malformed ids, nothing written', async () => {
    const tenant = await m.tenant();
    const bad: Record<string, unknown>[] = [
      {},
      body({ issuer: 'not a url' }),
      body({ issuer: 'http://idp.example.test' }), // https only (outside the allow-list)
      body({ issuer: 'https://user:pw@idp.example.test' }),
      body({ jwks_uri: 'ftp://keys.example.test' }),
      body({ identity_provider: 'Google Inc' }),
      body({ name: '' }),
      body({ client_id: 42 }),
      body({ enabled: 'yes' }),
      body({ unknown_field: 1 }),
      body({ client_secret: '' }),
    ];
    for (const b of bad) {
      const r = await m.call('post', path(tenant)).send(b);
      expect([b, r.status]).toEqual([b, 400]);
      expect(r.body.code).toBe('invalid_request');
    }
    expect(await count('tenant_id = $1', [tenant])).toBe(0);

    const created = (await m.call('post', path(tenant)).send(body()).expect(201)).body;
    for (const b of [
      { issuer: null },
      { enabled: null },
      { name: 7 },
      { extra: true },
      { jwks_uri: 'nope' },
    ]) {
      const r = await m.call('patch', `${path(tenant)}/${created.id}`).send(b);
      expect([b, r.status]).toEqual([b, 400]);
    }
    await m.call('get', `${api}/tenants/not-a-uuid/identity-providers`).expect(400);
    await m.call('get', `${path(tenant)}/not-a-uuid`).expect(400);
    await m.call('delete', `${path(tenant)}/not-a-uuid`).expect(400);
  });

  it('404 for an unknown tenant or provider, or a provider of another tenant', async () => {
    const tenant = await m.tenant();
    const other = await m.tenant();
    const created = (await m.call('post', path(tenant)).send(body()).expect(201)).body;
    const unknown = missingId();
    await m.call('get', path(unknown)).expect(404);
    await m.call('post', path(unknown)).send(body()).expect(404);
    for (const [method, send] of [
      ['get', undefined],
      ['patch', { name: 'x' }],
      ['delete', undefined],
    ] as const) {
      await m
        .call(method, `${path(tenant)}/${missingId()}`)
        .send(send)
        .expect(404);
      await m
        .call(method, `${path(other)}/${created.id}`)
        .send(send)
        .expect(404);
    }
    expect(await count('id = $1', [created.id])).toBe(1);
  });

  it('409 for an issuer the tenant already has (another tenant may have it)', async () => {
    const tenant = await m.tenant();
    const first = (await m.call('post', path(tenant)).send(body()).expect(201)).body;
    const dup = await m.call('post', path(tenant)).send(body({ issuer: `${first.issuer}/` }));
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('conflict');
    await m
      .call('post', path(await m.tenant()))
      .send(body({ issuer: first.issuer }))
      .expect(201);
    const second = (await m.call('post', path(tenant)).send(body()).expect(201)).body;
    await m
      .call('patch', `${path(tenant)}/${second.id}`)
      .send({ issuer: first.issuer })
      .expect(409);
  });

  it('a tenant-bound caller reaches its own tenant only; scopes tenants:read / tenants:write', async () => {
    const tenant = await m.tenant();
    const other = await m.tenant();
    const theirs = (await m.call('post', path(other)).send(body()).expect(201)).body;
    const bound = await m.caller(['tenants:read', 'tenants:write'], { tenantId: tenant, isGlobal: false });
    const mine = (await m.call('post', path(tenant), bound.token).send(body()).expect(201)).body;
    await m.call('get', `${path(tenant)}/${mine.id}`, bound.token).expect(200);
    await m.call('get', path(other), bound.token).expect(404);
    await m.call('post', path(other), bound.token).send(body()).expect(404);
    await m.call('get', `${path(other)}/${theirs.id}`, bound.token).expect(404);
    await m.call('delete', `${path(other)}/${theirs.id}`, bound.token).expect(404);
    expect(await count('id = $1', [theirs.id])).toBe(1);

    const reader = await m.caller(['tenants:read']);
    await m.call('get', path(tenant), reader.token).expect(200);
    await m.call('post', path(tenant), reader.token).send(body()).expect(403);
    await m.call('delete', `${path(tenant)}/${mine.id}`, reader.token).expect(403);
    const none = await m.caller(['users:read']);
    await m.call('get', path(tenant), none.token).expect(403);
    await m.call('get', path(tenant), '').expect(401);
  });

  it('deleting the tenant deletes its providers', async () => {
    const tenant = await m.tenant();
    const created = (await m.call('post', path(tenant)).send(body()).expect(201)).body;
    await m.ds.exec(`DELETE FROM tenants WHERE id = $1`, [tenant]);
    expect(await count('id = $1', [created.id])).toBe(0);
  });
});

describe('hole 3: SSRF through identity providers', () => {
  const path = (tenant: string) => `/api/v2/tenants/${tenant}/identity-providers`;

  it('400 naming the field for a non-https URL or a literal internal address outside the allow-list', async () => {
    const tenant = await m.tenant();
    const refused: [string, string][] = [
      ['issuer', 'http://127.0.0.1:9999'], // a loopback port
      ['issuer', 'https://127.0.0.1:8443'],
      ['issuer', 'https://localhost'],
      ['issuer', 'https://api.localhost'],
      ['issuer', 'https://[::1]'],
      ['issuer', 'https://[::ffff:127.0.0.1]'],
      ['issuer', 'https://0.0.0.0'],
      ['issuer', 'https://2130706433'], // 127.0.0.1 written as a number
      ['issuer', 'https://10.0.0.1'],
      ['issuer', 'https://172.16.5.4'],
      ['issuer', 'https://192.168.0.10'],
      ['issuer', 'https://100.64.1.1'],
      ['jwks_uri', 'http://169.254.169.254/latest/meta-data/'],
      ['jwks_uri', 'https://169.254.169.254/keys'],
      ['jwks_uri', 'https://[fd12:3456::1]/keys'],
      ['jwks_uri', 'https://[fe80::1]/keys'],
      ['jwks_uri', 'https://224.0.0.1/keys'],
      ['jwks_uri', 'http://keys.example.test/jwks'],
    ];
    for (const [field, url] of refused) {
      const r = await m.call('post', path(tenant)).send(body({ [field]: url }));
      expect([url, r.status, r.body.code]).toEqual([url, 400, 'invalid_request']);
      expect(r.body.message).toContain(field);
      expect(r.body.details).toEqual([{ field, message: expect.stringContaining(field) }]);
    }
    expect(await count('tenant_id = $1', [tenant])).toBe(0);

    const created = (await m.call('post', path(tenant)).send(body()).expect(201)).body;
    for (const [field, url] of refused.slice(0, 4)) {
      const r = await m.call('patch', `${path(tenant)}/${created.id}`).send({ [field]: url });
      expect([url, r.status]).toEqual([url, 400]);
      expect(r.body.message).toContain(field);
    }
    await m
      .call('patch', `${path(tenant)}/${created.id}`)
      .send({ jwks_uri: 'http://10.9.9.9/k' })
      .expect(400);
    const [row] = await m.ds.rows(`SELECT issuer, jwks_uri FROM tenant_identity_providers WHERE id = $1`, [
      created.id,
    ]);
    expect(row).toEqual({ issuer: created.issuer, jwks_uri: null });
  });

  it('the operator allow-list (OUTBOUND_ALLOWLIST) admits http and private addresses for what it names', async () => {
    const tenant = await m.tenant();
    await m
      .call('post', path(tenant))
      .send(body({ issuer: 'http://idp.dev.test:8080/realms/dev', jwks_uri: 'http://10.1.2.3:8080/certs' }))
      .expect(201);
    await m
      .call('post', path(tenant))
      .send(body({ jwks_uri: 'https://10.1.200.1/certs' }))
      .expect(201);
    // names that merely end like an allowed one are not allowed
    await m
      .call('post', path(tenant))
      .send(body({ issuer: 'http://evil-idp.dev.test' }))
      .expect(400);
    await m
      .call('post', path(tenant))
      .send(body({ jwks_uri: 'https://10.2.0.1/certs' }))
      .expect(400);
  });
});
