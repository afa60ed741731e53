import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

let m: Management;
let reader: { id: string; token: string };

beforeAll(async () => {
  m = await Management.start();
  reader = await m.caller(['clients:read']);
});
afterAll(async () => {
  await m?.close();
});

const count = async () => Number((await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM clients`))[0].n);

describe.each(VERSIONS)('Clients under /api/%s', (v: Version) => {
  const base = `/api/${v}/clients`;
  const create = (body: Record<string, unknown>, query = '') => m.call('post', `${base}${query}`).send(body);

  describe('create', () => {
    it('201 with the record of the presentation, a generated secret and audit fields from the caller', async () => {
      const name = uniq('web');
      const res = await create({ client_name: name, client_description: 'Storefront' }).expect(201);
      const c = res.body;
      expect(c).toMatchObject({
        id: expect.any(String),
        client_name: name,
        client_description: 'Storefront',
        client_secret: expect.stringMatching(/^[\w-]{43}$/),
        client_secret_expires_at: null,
        app_metadata: [],
        is_first_party: false,
        created_by: m.auth.clientId,
        updated_by: m.auth.clientId,
        created_at: expect.any(String),
      });
      expect(c.client_metadata.grant_types).toEqual(['client_credentials']);
      const agg = c[ENVELOPE[v].aggregations];
      expect(agg).toMatchObject({ id: c.id, client_id: c.id, resources: 0, permissions: 0 });
      expect(c).toMatchObject({ is_public: false, is_global: true, tenant_id: null });
      expect(c.links).toEqual({
        resources: `${base}/${c.id}/resources`,
        permissions: `${base}/${c.id}/permissions`,
      });
      if (v === 'v1') expect(c.client_type).toBeNull();
      else for (const k of ['client_type', 'aggregations']) expect(c).not.toHaveProperty(k);
      const [row] = await m.ds.rows<{
        client_name: string;
        client_secret_enc: string;
        created_by: string;
        created_at: Date;
      }>(`SELECT client_name, client_secret_enc, created_by, created_at FROM clients WHERE id = $1`, [c.id]);
      // Timestamps are ISO 8601 UTC with milliseconds, as the row holds them.
      expect(c.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(c.created_at).toBe(row.created_at.toISOString());
      expect(row.client_name).toBe(name);
      expect(row.client_secret_enc).not.toContain(c.client_secret); // sealed at rest
      expect(row.created_by).toBe(m.auth.clientId);
    });

    it('takes the metadata of its presentation', async () => {
      if (v === 'v1') {
        const res = await create({
          client_name: uniq('spa'),
          client_type: 'spa',
          is_public: true,
          client_metadata: {
            grant_types: ['authorization_code', 'refresh_token'],
            urls: { callbacks: ['https://a.test/cb'] },
          },
          app_metadata: [{ key: 'team', value: 'web' }],
        }).expect(201);
        expect(res.body).toMatchObject({
          client_type: 'spa',
          is_public: true,
          client_secret: null,
          client_metadata: {
            grant_types: ['authorization_code', 'refresh_token'],
            urls: { callbacks: ['https://a.test/cb'] },
          },
          app_metadata: [{ key: 'team', value: 'web' }],
        });
      } else {
        const res = await create({
          client_name: uniq('mobile'),
          client_metadata: {
            app_type: 'native',
            grant_types: ['password', 'refresh_token'],
            refresh_token: { expiration_enabled: true, expiration_lifetime: 3600 },
            mobile: {
              ios: { team_id: 'T1', app_id: 'com.x' },
              android: { package_name: 'com.x', hash_keys: ['k'] },
            },
          },
        }).expect(201);
        expect(res.body.client_metadata).toEqual({
          app_type: 'native',
          grant_types: ['password', 'refresh_token'],
          refresh_token: { expiration_enabled: true, expiration_lifetime: 3600 },
          mobile: {
            ios: { team_id: 'T1', app_id: 'com.x' },
            android: { package_name: 'com.x', hash_keys: ['k'] },
          },
        });
        const [row] = await m.ds.rows<{ client_type: string }>(
          `SELECT client_type FROM clients WHERE id = $1`,
          [res.body.id],
        );
        expect(row.client_type).toBe('native');
      }
    });

    it('400 naming the field for missing, mistyped and unknown fields, and for a bad fields parameter; nothing is written', async () => {
      const before = await count();
      const missing = await create({ client_description: 'x' }).expect(400);
      expect(missing.body).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('client_name'),
      });
      const empty = await create({ client_name: '' }).expect(400);
      expect(empty.body.message).toContain('client_name');
      const typed = await create({ client_name: 5 }).expect(400);
      expect(typed.body.message).toContain('client_name');
      const noTenant = await create({ client_name: uniq('x'), tenant_id: missingId() }).expect(400);
      expect(noTenant.body.message).toContain('tenant_id');
      const unknown = await create({ client_name: uniq('x'), colour: 'red' }).expect(400);
      expect(unknown.body.message).toContain('unknown field: colour');
      const badMeta = await create({
        client_name: uniq('x'),
        client_metadata: { grant_types: ['magic'] },
      }).expect(400);
      expect(badMeta.body.message).toContain('client_metadata.grant_types');
      const v1Only = await create({
        client_name: uniq('x'),
        [v === 'v1' ? 'mobile' : 'client_type']: v === 'v1' ? true : 'spa',
      }).expect(400);
      expect(v1Only.body.message).toContain('unknown field');
      const notObject = await m
        .call('post', base)
        .set('Content-Type', 'application/json')
        .send('[1]')
        .expect(400);
      expect(notObject.body.code).toBe('invalid_request');
      const badFields = await create({ client_name: uniq('x') }, '?fields=nope').expect(400);
      expect(badFields.body.message).toContain('fields');
      expect(await count()).toBe(before);
    });

    it('409 for a client_name already used in the tenant (any case)', async () => {
      const name = uniq('dup');
      await create({ client_name: name }).expect(201);
      const res = await create({ client_name: name.toUpperCase() }).expect(409);
      expect(res.body).toEqual({ code: 'conflict', message: expect.stringContaining('client_name') });
    });

    it('401 without or with a bad token, 403 without clients:write', async () => {
      const none = await m
        .call('post', base, '')
        .send({ client_name: uniq('x') })
        .expect(401);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
      await m
        .call('post', base, 'garbage')
        .send({ client_name: uniq('x') })
        .expect(401);
      const res = await m
        .call('post', base, reader.token)
        .send({ client_name: uniq('x') })
        .expect(403);
      expect(res.body).toEqual({ code: 'forbidden', message: expect.stringContaining('clients:write') });
    });
  });

  describe('read', () => {
    let id: string;
    beforeAll(async () => {
      id = (await create({ client_name: uniq('read') }).expect(201)).body.id;
    });

    it('200 with the secret; fields and expand shape the answer', async () => {
      const full = await m.call('get', `${base}/${id}`).expect(200);
      expect(full.body.client_secret).toEqual(expect.stringMatching(/^[\w-]{43}$/));
      const some = await m.call('get', `${base}/${id}?fields=id,client_name`).expect(200);
      expect(some.body).toEqual({ id, client_name: expect.any(String) });
      const agg = ENVELOPE[v].aggregations;
      const withAgg = await m.call('get', `${base}/${id}?fields=id,${agg}`).expect(200);
      expect(withAgg.body[agg]).toMatchObject({ resources: 0, permissions: 0 });
      const expanded = await m.call('get', `${base}/${id}?expand=all`).expect(200);
      expect(expanded.body.permissions).toEqual([]);
      expect(expanded.body).not.toHaveProperty('links');
      expect(expanded.body.resources).toEqual([]);
      // clients:read alone shows no secret; the default client holds clients:read_secrets.
      const plain = await m.call('get', `${base}/${id}`, reader.token).expect(200);
      expect(plain.body).not.toHaveProperty('client_secret');
    });

    it('400 for a malformed id, an unknown field or expand value; 404 for an unknown id', async () => {
      const bad = await m.call('get', `${base}/not-a-uuid`).expect(400);
      expect(bad.body.message).toContain('client_id');
      await m.call('get', `${base}/${id}?fields=client_secret,bogus`).expect(400);
      await m.call('get', `${base}/${id}?expand=everything`).expect(400);
      const missing = await m.call('get', `${base}/${missingId()}`).expect(404);
      expect(missing.body.code).toBe('not_found');
      if (v === 'v2') await m.call('get', `${base}/${id}?fields=client_type`).expect(400);
    });

    it('401 without a token', async () => {
      await m.call('get', `${base}/${id}`, '').expect(401);
    });
  });

  describe('list', () => {
    const tag = uniq('list');
    beforeAll(async () => {
      for (const n of ['c', 'a', 'b', 'd'])
        await create({ client_name: `${tag}-${n}`, client_description: n === 'a' ? 'first' : null }).expect(
          201,
        );
    });
    const total = ENVELOPE[v].total;
    const hasMore = ENVELOPE[v].hasMore;

    it('the envelope of the presentation; q, sort, offset, limit and the total count; never a secret', async () => {
      const q = encodeURIComponent(`client_name like '${tag}-%'`);
      const res = await m
        .call('get', `${base}?q=${q}&sort=client_name:desc&limit=3&${total}=true`)
        .expect(200);
      expect(res.body).toMatchObject({ [total]: 4, count: 3, [hasMore]: true, limit: 3, offset: 0 });
      expect(res.body.items.map((c: { client_name: string }) => c.client_name)).toEqual([
        `${tag}-d`,
        `${tag}-c`,
        `${tag}-b`,
      ]);
      for (const item of res.body.items) expect(item).not.toHaveProperty('client_secret');
      const next = await m.call('get', `${base}?q=${q}&sort=client_name:desc&limit=3&offset=3`).expect(200);
      expect(next.body).toMatchObject({ count: 1, [hasMore]: false, offset: 3 });
      expect(next.body).not.toHaveProperty(total);
      const filtered = await m
        .call(
          'get',
          `${base}?q=${encodeURIComponent(`client_name like '${tag}-%' and client_description = 'first'`)}&fields=client_name`,
        )
        .expect(200);
      expect(filtered.body.items).toEqual([{ client_name: `${tag}-a` }]);
      const beyond = await m.call('get', `${base}?q=${q}&offset=50&${total}=true`).expect(200);
      expect(beyond.body).toMatchObject({ [total]: 4, count: 0, items: [], [hasMore]: false });
      const capped = await m.call('get', `${base}?limit=1000`).expect(200);
      expect(capped.body.limit).toBe(100);
      const meta = await m
        .call(
          'get',
          `${base}?q=${encodeURIComponent(`client_name like '${tag}-%' and client_metadata.grant_types.0 = 'client_credentials'`)}&${total}=true`,
        )
        .expect(200);
      expect(meta.body[total]).toBe(4);
    });

    it('400 for a bad q, sort, limit, offset, fields or total count', async () => {
      for (const query of [
        'q=client_name%20%3D',
        `q=${encodeURIComponent("nope = 'x'")}`,
        `q=${encodeURIComponent('x'.repeat(2001))}`,
        'sort=nope',
        'sort=client_metadata',
        'limit=0',
        'limit=abc',
        'offset=-1',
        'fields=nope',
        `${total}=maybe`,
        'expand=some',
      ]) {
        const res = await m.call('get', `${base}?${query}`);
        expect([query, res.status, res.body.code]).toEqual([query, 400, 'invalid_request']);
      }
      if (v === 'v2')
        await m.call('get', `${base}?q=${encodeURIComponent("client_type = 'spa'")}`).expect(400);
    });

    it('401 without a token, 403 with a token lacking clients:read', async () => {
      await m.call('get', base, '').expect(401);
      const other = await m.caller(['resources:read']);
      await m.call('get', base, other.token).expect(403);
    });
  });

  describe('modify', () => {
    it('200 with the record; metadata keys merge, null removes one; app_metadata is replaced; updated_by is set', async () => {
      const c = (
        await create({
          client_name: uniq('mod'),
          client_metadata: {
            grant_types: ['client_credentials'],
            refresh_token: { expiration_enabled: false },
          },
          app_metadata: [{ key: 'a', value: '1' }],
        }).expect(201)
      ).body;
      const updater = await m.caller(['clients:write', 'clients:read']);
      const name = uniq('renamed');
      const res = await m
        .call('patch', `${base}/${c.id}`, updater.token)
        .send({
          client_name: name,
          client_metadata: { grant_types: ['client_credentials', 'password'], refresh_token: null },
          app_metadata: [{ key: 'b', value: '2' }],
        })
        .expect(200);
      expect(res.body).toMatchObject({
        id: c.id,
        client_name: name,
        client_metadata: { grant_types: ['client_credentials', 'password'] },
        app_metadata: [{ key: 'b', value: '2' }],
        updated_by: updater.id,
        created_by: m.auth.clientId,
      });
      // A modify answer shows no secret to a caller without clients:read_secrets.
      expect(res.body).not.toHaveProperty('client_secret');
      expect(res.body.client_metadata).not.toHaveProperty('refresh_token');
      if (v === 'v2') {
        const typed = await m
          .call('patch', `${base}/${c.id}`)
          .send({ client_metadata: { app_type: 'spa' } })
          .expect(200);
        expect(typed.body.client_metadata.app_type).toBe('spa');
      } else {
        const pub = await m.call('patch', `${base}/${c.id}`).send({ is_public: true }).expect(200);
        expect(pub.body).toMatchObject({ is_public: true, client_secret: null });
        const conf = await m.call('patch', `${base}/${c.id}`).send({ is_public: false }).expect(200);
        expect(conf.body.client_secret).toEqual(expect.stringMatching(/^[\w-]{43}$/));
      }
    });

    it('400 for a null name or unknown field, 404 for an unknown id, 409 for a taken name', async () => {
      const a = (await create({ client_name: uniq('ma') }).expect(201)).body;
      const b = (await create({ client_name: uniq('mb') }).expect(201)).body;
      await m.call('patch', `${base}/${a.id}`).send({ client_name: null }).expect(400);
      await m.call('patch', `${base}/${a.id}`).send({ secret: 'x' }).expect(400);
      await m.call('patch', `${base}/nope`).send({}).expect(400);
      await m
        .call('patch', `${base}/${missingId()}`)
        .send({ client_name: uniq('x') })
        .expect(404);
      const dup = await m.call('patch', `${base}/${a.id}`).send({ client_name: b.client_name }).expect(409);
      expect(dup.body.code).toBe('conflict');
      await m.call('patch', `${base}/${a.id}`, reader.token).send({ client_description: 'x' }).expect(403);
    });

    if (v === 'v1') {
      it("403 for the default client's is_public, is_global or tenant_id", async () => {
        for (const body of [{ is_public: true }, { is_global: false }]) {
          const res = await m.call('patch', `${base}/${m.auth.clientId}`).send(body).expect(403);
          expect(res.body.code).toBe('forbidden');
        }
        await m
          .call('patch', `${base}/${m.auth.clientId}`)
          .send({ client_description: 'still mine' })
          .expect(200);
      });
    }
  });

  describe('delete', () => {
    it('204, then 404; the default client is 403; an unknown id 404', async () => {
      const c = (await create({ client_name: uniq('del') }).expect(201)).body;
      await m.call('delete', `${base}/${c.id}`, reader.token).expect(403);
      const res = await m.call('delete', `${base}/${c.id}`).expect(204);
      expect(res.text).toBe('');
      await m.call('get', `${base}/${c.id}`).expect(404);
      await m.call('delete', `${base}/${c.id}`).expect(404);
      const def = await m.call('delete', `${base}/${m.auth.clientId}`).expect(403);
      expect(def.body).toEqual({ code: 'forbidden', message: expect.stringContaining('default client') });
      await m.call('delete', `${base}/bad-id`).expect(400);
    });
  });

  describe('change secret', () => {
    it('200 with a new secret; a public client is 409; unknown 404', async () => {
      const c = (await create({ client_name: uniq('rot') }).expect(201)).body;
      const res = await m.call('post', `${base}/${c.id}/rotate-secret`).expect(200);
      expect(res.body.client_secret).toEqual(expect.stringMatching(/^[\w-]{43}$/));
      expect(res.body.client_secret).not.toBe(c.client_secret);
      expect((await m.call('get', `${base}/${c.id}`).expect(200)).body.client_secret).toBe(
        res.body.client_secret,
      );
      await m.call('post', `${base}/${missingId()}/rotate-secret`).expect(404);
      await m.call('post', `${base}/${c.id}/rotate-secret`, reader.token).expect(403);
      if (v === 'v1') {
        const pub = (await create({ client_name: uniq('pub'), is_public: true }).expect(201)).body;
        const r = await m.call('post', `${base}/${pub.id}/rotate-secret`).expect(409);
        expect(r.body.code).toBe('conflict');
      }
    });
  });

  it('405 with Allow for a known path and a wrong method', async () => {
    const res = await m.call('put', base).send({}).expect(405);
    expect(res.body.code).toBe('method_not_allowed');
    expect(res.headers.allow).toContain('GET');
    expect(res.headers.allow).toContain('POST');
    const one = await m.call('post', `${base}/${missingId()}`).expect(405);
    expect(one.headers.allow).toContain('PATCH');
  });
});
