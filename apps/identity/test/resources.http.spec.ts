import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

let m: Management;
let reader: { token: string };

beforeAll(async () => {
  m = await Management.start();
  reader = await m.caller(['resources:read', 'clients:write']);
});
afterAll(async () => {
  await m?.close();
});

/** `resource_metadata` in the shape of the presentation. */
function metadata(
  v: Version,
  md: {
    identifier_url?: string;
    signing_algorithm?: string;
    signing_secret?: string;
    token_lifetime?: number;
  },
) {
  if (v === 'v1') return md;
  const out: Record<string, Record<string, unknown>> = {};
  if (md.identifier_url !== undefined) out.api = { identifier_url: md.identifier_url };
  const token: Record<string, unknown> = {};
  if (md.signing_algorithm) token.signing_algorithm = md.signing_algorithm;
  if (md.signing_secret) token.signing_secret = md.signing_secret;
  if (md.token_lifetime) token.expiration_lifetime = md.token_lifetime;
  if (Object.keys(token).length) out.token = token;
  return out;
}

/** Flattens either presentation's resource_metadata to document 1 names. */
function flat(v: Version, md: Record<string, any>) {
  if (v === 'v1') return md;
  return {
    identifier_url: md.api.identifier_url,
    is_system: md.api.is_system,
    token_lifetime: md.token.expiration_lifetime,
    signing_algorithm: md.token.signing_algorithm,
    ...(md.token.signing_secret !== undefined ? { signing_secret: md.token.signing_secret } : {}),
    skip_consent_for_first_party: md.skip_consent_for_first_party,
  };
}

describe.each(VERSIONS)('Resources and Resource Scopes under /api/%s', (v: Version) => {
  const base = `/api/${v}/resources`;
  const total = ENVELOPE[v].total;
  const create = (body: Record<string, unknown>) => m.call('post', base).send(body);
  const newResource = async (md: Parameters<typeof metadata>[1] = {}) =>
    (
      await create({
        resource_type: 'api',
        resource_name: uniq('api'),
        resource_metadata: metadata(v, { identifier_url: `https://${uniq('api')}.test`, ...md }),
      }).expect(201)
    ).body;

  describe('resources', () => {
    it('create: 201 with the record of the presentation; HS256 gets a generated secret shown on single reads only', async () => {
      const url = `https://${uniq('orders')}.test`;
      const res = await create({
        resource_type: 'api',
        resource_name: 'Orders',
        resource_description: 'Orders API',
        resource_metadata: metadata(v, {
          identifier_url: url,
          signing_algorithm: 'HS256',
          token_lifetime: 600,
        }),
        app_metadata: [{ key: 'owner', value: 'sales' }],
      }).expect(201);
      const r = res.body;
      expect(r).toMatchObject({
        resource_type: 'api',
        resource_name: 'Orders',
        resource_description: 'Orders API',
        app_metadata: [{ key: 'owner', value: 'sales' }],
        created_by: m.auth.clientId,
        created_date: expect.any(String),
        updated_date: expect.any(String),
      });
      expect(r).not.toHaveProperty('created_at');
      const md = flat(v, r.resource_metadata);
      expect(md).toMatchObject({
        identifier_url: url,
        is_system: false,
        signing_algorithm: 'HS256',
        token_lifetime: 600,
      });
      expect(md.signing_secret).toEqual(expect.stringMatching(/^[\w-]{43}$/));
      expect(r[ENVELOPE[v].aggregations]).toMatchObject({ resource_id: r.id, scopes: 0, clients: 0 });
      expect(r.links).toEqual({ scopes: `${base}/${r.id}/scopes`, clients: `${base}/${r.id}/clients` });
      expect(r.tenant_id).toBeNull();
      if (v === 'v1') expect(r.resource_metadata).toMatchObject({ rbac_enabled: false, scopes_added: false });

      // resources:read alone shows no signing secret; resources:read_secrets (the default
      // client's) does.
      const read = await m.call('get', `${base}/${r.id}`, reader.token).expect(200);
      expect(flat(v, read.body.resource_metadata)).not.toHaveProperty('signing_secret');
      const withSecret = await m.call('get', `${base}/${r.id}`).expect(200);
      expect(flat(v, withSecret.body.resource_metadata).signing_secret).toBe(md.signing_secret);
      const list = await m
        .call(
          'get',
          `${base}?q=${encodeURIComponent(`resource_metadata.${v === 'v1' ? '' : 'api.'}identifier_url = '${url}'`)}`,
        )
        .expect(200);
      expect(list.body.count).toBe(1);
      expect(JSON.stringify(list.body)).not.toContain(md.signing_secret);
      const [row] = await m.ds.rows<{ signing_secret_enc: string }>(
        `SELECT signing_secret_enc FROM resources WHERE id = $1`,
        [r.id],
      );
      expect(row.signing_secret_enc).not.toContain(md.signing_secret);
    });

    it('create: 400 for missing, mistyped or unknown fields and inconsistent metadata; 403 for is_system; 409 for a taken identifier', async () => {
      const before = Number((await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM resources`))[0].n);
      await create({ resource_name: uniq('x') }).expect(400);
      await create({ resource_type: 'api' }).expect(400);
      await create({ resource_type: 'api', resource_name: uniq('x'), colour: 1 }).expect(400);
      await create({
        resource_type: 'api',
        resource_name: uniq('x'),
        resource_metadata: metadata(v, { signing_algorithm: 'PS512' }),
      }).expect(400);
      const secret = await create({
        resource_type: 'api',
        resource_name: uniq('x'),
        resource_metadata: metadata(v, { signing_algorithm: 'RS256', signing_secret: 'x'.repeat(40) }),
      }).expect(400);
      expect(secret.body.message).toContain('signing_secret');
      await create({
        resource_type: 'api',
        resource_name: uniq('x'),
        resource_metadata: metadata(v, { identifier_url: 'has space' }),
      }).expect(400);
      if (v === 'v1') {
        await create({
          resource_type: 'api',
          resource_name: uniq('x'),
          resource_metadata: { scopes_added: true },
        }).expect(400);
        await create({
          resource_type: 'api',
          resource_name: uniq('x'),
          resource_metadata: { is_system: true },
        }).expect(403);
      } else {
        const lifetimes = await create({
          resource_type: 'api',
          resource_name: uniq('x'),
          resource_metadata: { api: { expiration_lifetime: 60 }, token: { expiration_lifetime: 120 } },
        }).expect(400);
        expect(lifetimes.body.message).toContain('expiration_lifetime');
        await create({
          resource_type: 'api',
          resource_name: uniq('x'),
          resource_metadata: { api: { is_system: true } },
        }).expect(403);
      }
      expect(Number((await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM resources`))[0].n)).toBe(
        before,
      );
      const r = await newResource();
      const url = flat(v, r.resource_metadata).identifier_url;
      const dup = await create({
        resource_type: 'api',
        resource_name: uniq('x'),
        resource_metadata: metadata(v, { identifier_url: url }),
      }).expect(409);
      expect(dup.body).toEqual({ code: 'conflict', message: expect.stringContaining('identifier_url') });
      await m
        .call('post', base, reader.token)
        .send({ resource_type: 'api', resource_name: uniq('x') })
        .expect(403);
      await m
        .call('post', base, '')
        .send({ resource_type: 'api', resource_name: uniq('x') })
        .expect(401);
    });

    it('list: envelope, q, sort, paging, total count, fields; 400 for bad parameters', async () => {
      const tag = uniq('rl');
      for (const n of ['b', 'a', 'c'])
        await create({ resource_type: 'api', resource_name: `${tag}-${n}` }).expect(201);
      const q = encodeURIComponent(`resource_name like '${tag}-%'`);
      const res = await m
        .call(
          'get',
          `${base}?q=${q}&sort=resource_name&limit=2&${total}=true&fields=resource_name`,
          reader.token,
        )
        .expect(200);
      expect(res.body).toEqual({
        [total]: 3,
        count: 2,
        [ENVELOPE[v].hasMore]: true,
        limit: 2,
        offset: 0,
        items: [{ resource_name: `${tag}-a` }, { resource_name: `${tag}-b` }],
      });
      const system = await m
        .call(
          'get',
          `${base}?q=${encodeURIComponent(`resource_metadata.${v === 'v1' ? 'is_system' : 'api.is_system'} = true`)}&${total}=true`,
        )
        .expect(200);
      expect(system.body[total]).toBe(2);
      for (const bad of [
        'sort=resource_metadata',
        'q=resource_name%20~%20x',
        'limit=-5',
        'fields=created_at',
        `q=${encodeURIComponent("created_date > 'yesterday'")}`,
      ]) {
        const r = await m.call('get', `${base}?${bad}`);
        expect([bad, r.status]).toEqual([bad, 400]);
      }
      await m.call('get', base, '').expect(401);
      const noScope = await m.caller(['clients:read']);
      await m.call('get', base, noScope.token).expect(403);
    });

    it('list: the tenant_id header narrows the list in multi-tenant mode (a malformed one: 400)', async () => {
      // MULTI_TENANT is on by default; with it off the header is ignored (tenants.http.spec.ts).
      const tenant = await m.tenant();
      const r = await newResource();
      await m.ds.rows(`UPDATE resources SET tenant_id = $2 WHERE id = $1`, [r.id, tenant]);
      const one = await m.call('get', `${base}?${total}=true`).set('tenant_id', tenant).expect(200);
      expect(one.body[total]).toBe(1);
      expect(one.body.items[0].id).toBe(r.id);
      await m.call('get', base).set('tenant_id', 'nope').expect(400);
    });

    it('read: 400 malformed id or fields, 404 unknown', async () => {
      const r = await newResource();
      expect((await m.call('get', `${base}/${r.id}?fields=id,resource_name`).expect(200)).body).toEqual({
        id: r.id,
        resource_name: r.resource_name,
      });
      await m.call('get', `${base}/123`).expect(400);
      await m.call('get', `${base}/${r.id}?fields=x`).expect(400);
      await m.call('get', `${base}/${missingId()}`).expect(404);
    });

    it('modify: 200 with the record; metadata changes; 400, 404, 409', async () => {
      const r = await newResource();
      const other = await newResource();
      const url = `https://${uniq('moved')}.test`;
      const res = await m
        .call('patch', `${base}/${r.id}`)
        .send({
          resource_description: 'changed',
          resource_metadata: metadata(v, { identifier_url: url, token_lifetime: 120 }),
        })
        .expect(200);
      expect(res.body.resource_description).toBe('changed');
      expect(flat(v, res.body.resource_metadata)).toMatchObject({
        identifier_url: url,
        token_lifetime: 120,
        signing_algorithm: 'ES256',
      });
      const hs = await m
        .call('patch', `${base}/${r.id}`)
        .send({ resource_metadata: metadata(v, { signing_algorithm: 'HS256' }) })
        .expect(200);
      expect(flat(v, hs.body.resource_metadata).signing_secret).toEqual(expect.any(String));
      const back = await m
        .call('patch', `${base}/${r.id}`)
        .send({ resource_metadata: metadata(v, { signing_algorithm: 'ES256' }) })
        .expect(200);
      expect(flat(v, back.body.resource_metadata).signing_secret).toBeNull();
      await m.call('patch', `${base}/${r.id}`).send({ resource_type: 'web' }).expect(400);
      await m.call('patch', `${base}/${r.id}`).send({ resource_name: null }).expect(400);
      await m.call('patch', `${base}/${missingId()}`).send({ resource_description: 'x' }).expect(404);
      const dup = await m
        .call('patch', `${base}/${r.id}`)
        .send({
          resource_metadata: metadata(v, { identifier_url: flat(v, other.resource_metadata).identifier_url }),
        })
        .expect(409);
      expect(dup.body.code).toBe('conflict');
      await m.call('patch', `${base}/${r.id}`, reader.token).send({ resource_description: 'x' }).expect(403);
    });

    it('system resources: description may change; name, identifier and signing are protected (403); delete is 403', async () => {
      const mgmt = await m.managementResource();
      const ok = await m
        .call('patch', `${base}/${mgmt.id}`)
        .send({ resource_description: 'The management API' })
        .expect(200);
      expect(flat(v, ok.body.resource_metadata).is_system).toBe(true);
      for (const body of [
        { resource_name: 'mine now' },
        { resource_metadata: metadata(v, { identifier_url: 'urn:other' }) },
        { resource_metadata: metadata(v, { signing_algorithm: 'HS256' }) },
      ]) {
        const res = await m.call('patch', `${base}/${mgmt.id}`).send(body).expect(403);
        expect(res.body.code).toBe('forbidden');
      }
      const del = await m.call('delete', `${base}/${mgmt.id}`).expect(403);
      expect(del.body).toEqual({ code: 'forbidden', message: expect.stringContaining('system resource') });
    });

    it('delete: 204 with its scopes; then 404', async () => {
      const r = await newResource();
      await m.call('post', `${base}/${r.id}/scopes`).send({ scope_name: 'gone' }).expect(201);
      await m.call('delete', `${base}/${r.id}`, reader.token).expect(403);
      await m.call('delete', `${base}/${r.id}`).expect(204);
      await m.call('get', `${base}/${r.id}`).expect(404);
      await m.call('delete', `${base}/${r.id}`).expect(404);
      expect(await m.ds.rows(`SELECT 1 FROM scopes WHERE resource_id = $1`, [r.id])).toHaveLength(0);
      await m.call('put', `${base}/${r.id}`).send({}).expect(405);
    });
  });

  describe('resource scopes', () => {
    it('create (201), list, read, modify (200), delete (204)', async () => {
      const r = await newResource();
      const path = `${base}/${r.id}/scopes`;
      const s = (
        await m.call('post', path).send({ scope_name: 'orders:read', scope_description: 'Read' }).expect(201)
      ).body;
      expect(s).toMatchObject({
        id: expect.any(String),
        resource_id: r.id,
        scope_name: 'orders:read',
        scope_description: 'Read',
        created_by: m.auth.clientId,
        created_at: expect.any(String),
      });
      await m.call('post', path).send({ scope_name: 'orders:write' }).expect(201);
      const list = await m
        .call('get', `${path}?sort=scope_name:desc&${total}=true`, reader.token)
        .expect(200);
      expect(list.body[total]).toBe(2);
      expect(list.body.items.map((x: { scope_name: string }) => x.scope_name)).toEqual([
        'orders:write',
        'orders:read',
      ]);
      const res = await m.call('get', `${base}/${r.id}?fields=resource_metadata`).expect(200);
      expect(v === 'v1' ? res.body.resource_metadata.scopes_added : true).toBe(true);
      expect((await m.call('get', `${path}/${s.id}?fields=scope_name`).expect(200)).body).toEqual({
        scope_name: 'orders:read',
      });
      const renamed = await m
        .call('patch', `${path}/${s.id}`)
        .send({ scope_name: 'orders:list', scope_description: null })
        .expect(200);
      expect(renamed.body).toMatchObject({ scope_name: 'orders:list', scope_description: null });
      await m.call('delete', `${path}/${s.id}`).expect(204);
      await m.call('get', `${path}/${s.id}`).expect(404);
    });

    it('400 for bad names and bodies, 404 for unknown resources and scopes, 409 for a taken name', async () => {
      const r = await newResource();
      const other = await newResource();
      const path = `${base}/${r.id}/scopes`;
      const s = (await m.call('post', path).send({ scope_name: 'a' }).expect(201)).body;
      const b = (await m.call('post', path).send({ scope_name: 'b' }).expect(201)).body;
      for (const body of [
        {},
        { scope_name: 'has space' },
        { scope_name: 'quote"' },
        { scope_name: 'x', extra: 1 },
      ]) {
        await m.call('post', path).send(body).expect(400);
      }
      const dup = await m.call('post', path).send({ scope_name: 'a' }).expect(409);
      expect(dup.body).toEqual({ code: 'conflict', message: expect.stringContaining('scope_name') });
      await m.call('patch', `${path}/${b.id}`).send({ scope_name: 'a' }).expect(409);
      await m.call('post', `${base}/${missingId()}/scopes`).send({ scope_name: 'a' }).expect(404);
      await m.call('get', `${base}/${other.id}/scopes/${s.id}`).expect(404);
      await m.call('get', `${path}/${missingId()}`).expect(404);
      await m.call('get', `${path}/nope`).expect(400);
      await m.call('delete', `${path}/${missingId()}`).expect(404);
      await m.call('post', path, reader.token).send({ scope_name: 'c' }).expect(403);
      await m.call('get', `${path}?q=${encodeURIComponent("scope = 'a'")}`).expect(400);
      await m.call('patch', path).send({}).expect(405);
    });

    it('the scopes of a system resource are protected (403)', async () => {
      const mgmt = await m.managementResource();
      const path = `${base}/${mgmt.id}/scopes`;
      await m.call('post', path).send({ scope_name: 'extra' }).expect(403);
      await m
        .call('patch', `${path}/${mgmt.scopes['users:read']}`)
        .send({ scope_name: 'people:read' })
        .expect(403);
      await m.call('delete', `${path}/${mgmt.scopes['users:read']}`).expect(403);
      const list = await m.call('get', `${path}?limit=100`).expect(200);
      expect(list.body.items.map((s: { scope_name: string }) => s.scope_name)).toContain('users:read');
    });
  });
});
