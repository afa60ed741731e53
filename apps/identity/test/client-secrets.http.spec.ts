import { Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

/**
 * client_secret_expires_at: set at create, modify and change secret (an instant or a lifetime in seconds), shown in
 * the record, and honoured by the token server (an expired secret is 401 invalid_client).
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

const count = async () => Number((await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM clients`))[0].n);
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client_credentials request at the token server with Basic credentials: its status and error. */
async function clientCredentials(id: string, secret: string) {
  const res = await fetch(`${m.auth.url}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      audience: 'urn:gatehouse:management',
    }).toString(),
  });
  return { status: res.status, error: ((await res.json()) as { error?: string }).error };
}

/** Authorize the client on the management API with one scope (so client_credentials can issue a token). */
async function authorize(id: string) {
  const mgmt = await m.managementResource();
  await m
    .call('post', `/api/v1/clients/${id}/resources`)
    .send({ resources: [mgmt.id] })
    .expect(204);
  await m
    .call('post', `/api/v1/clients/${id}/permissions`)
    .send({ permissions: [{ resource_id: mgmt.id, scopes: [mgmt.scopes['clients:read']] }] })
    .expect(204);
}

describe.each(VERSIONS)('client secret expiry under /api/%s', (v: Version) => {
  const base = `/api/${v}/clients`;

  it('create takes client_secret_expires_at and shows it; a read shows it too', async () => {
    const at = '2099-06-30T12:00:00.000Z';
    const res = await m
      .call('post', base)
      .send({ client_name: uniq('exp'), client_secret_expires_at: at })
      .expect(201);
    expect(res.body.client_secret_expires_at).toBe(at);
    const read = await m.call('get', `${base}/${res.body.id}`).expect(200);
    expect(read.body.client_secret_expires_at).toBe(at);
    // an offset is an instant too
    const offset = await m
      .call('post', base)
      .send({ client_name: uniq('exp'), client_secret_expires_at: '2099-06-30T20:00:00+08:00' })
      .expect(201);
    expect(offset.body.client_secret_expires_at).toBe(at);
  });

  it('create takes client_secret_lifetime (seconds from now)', async () => {
    const before = Date.now();
    const res = await m
      .call('post', base)
      .send({ client_name: uniq('exp'), client_secret_lifetime: 3600 })
      .expect(201);
    const at = new Date(res.body.client_secret_expires_at as string).getTime();
    expect(at).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    expect(res.body).not.toHaveProperty('client_secret_lifetime');
  });

  it.each([
    ['a past date', { client_secret_expires_at: '2020-01-01T00:00:00Z' }, 'client_secret_expires_at'],
    ['now', { client_secret_expires_at: 'NOW' }, 'client_secret_expires_at'],
    ['a date without a time', { client_secret_expires_at: '2099-01-01' }, 'client_secret_expires_at'],
    [
      'a time without a zone',
      { client_secret_expires_at: '2099-01-01T00:00:00' },
      'client_secret_expires_at',
    ],
    ['not a date', { client_secret_expires_at: 'tomorrow' }, 'client_secret_expires_at'],
    ['a lifetime of 0', { client_secret_lifetime: 0 }, 'client_secret_lifetime'],
    ['a fractional lifetime', { client_secret_lifetime: 1.5 }, 'client_secret_lifetime'],
    [
      'both at once',
      { client_secret_lifetime: 60, client_secret_expires_at: '2099-01-01T00:00:00Z' },
      'client_secret_lifetime',
    ],
    [
      'an expiry for a public client',
      { is_public: true, client_secret_lifetime: 60 },
      'client_secret_lifetime',
    ],
  ])('create with %s: 400 naming the field, nothing written', async (_what, fields, field) => {
    const given = fields as Record<string, unknown>;
    const body = {
      client_name: uniq('bad'),
      ...given,
      ...(given.client_secret_expires_at === 'NOW'
        ? { client_secret_expires_at: new Date().toISOString() }
        : {}),
    };
    const before = await count();
    const res = await m.call('post', base).send(body).expect(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.message).toContain(field);
    expect(await count()).toBe(before);
  });

  it('change secret: the new secret expires as the body says, or never without one', async () => {
    const c = (
      await m
        .call('post', base)
        .send({ client_name: uniq('rot'), client_secret_lifetime: 60 })
        .expect(201)
    ).body;
    const at = inSeconds(7200);
    const r1 = await m
      .call('post', `${base}/${c.id}/rotate-secret`)
      .send({ client_secret_expires_at: at })
      .expect(200);
    expect(r1.body.client_secret_expires_at).toBe(at);
    expect(r1.body.client_secret).not.toBe(c.client_secret);
    const r2 = await m
      .call('post', `${base}/${c.id}/rotate-secret`)
      .send({ client_secret_lifetime: 10 })
      .expect(200);
    expect(new Date(r2.body.client_secret_expires_at as string).getTime()).toBeLessThanOrEqual(
      Date.now() + 11_000,
    );
    const r3 = await m.call('post', `${base}/${c.id}/rotate-secret`).expect(200);
    expect(r3.body.client_secret_expires_at).toBeNull();
    // a past date is 400 and the secret stays
    const bad = await m
      .call('post', `${base}/${c.id}/rotate-secret`)
      .send({ client_secret_expires_at: '2001-01-01T00:00:00Z' })
      .expect(400);
    expect(bad.body.message).toContain('client_secret_expires_at');
    const [row] = await m.ds.rows<{ client_secret_expires_at: Date | null }>(
      `SELECT client_secret_expires_at FROM clients WHERE id = $1`,
      [c.id],
    );
    expect(row.client_secret_expires_at).toBeNull();
    await m.call('post', `${base}/${c.id}/rotate-secret`).send({ unknown: 1 }).expect(400);
    await m
      .call('post', `${base}/${missingId()}/rotate-secret`)
      .send({ client_secret_lifetime: 5 })
      .expect(404);
  });

  it('modify sets or clears the expiry of the current secret; a public client has none', async () => {
    const c = (
      await m
        .call('post', base)
        .send({ client_name: uniq('mod') })
        .expect(201)
    ).body;
    const at = inSeconds(86400);
    const set = await m.call('patch', `${base}/${c.id}`).send({ client_secret_expires_at: at }).expect(200);
    expect(set.body.client_secret_expires_at).toBe(at);
    // another change keeps it
    const kept = await m.call('patch', `${base}/${c.id}`).send({ client_description: 'x' }).expect(200);
    expect(kept.body.client_secret_expires_at).toBe(at);
    const cleared = await m
      .call('patch', `${base}/${c.id}`)
      .send({ client_secret_expires_at: null })
      .expect(200);
    expect(cleared.body.client_secret_expires_at).toBeNull();
    await m
      .call('patch', `${base}/${c.id}`)
      .send({ client_secret_expires_at: '1999-01-01T00:00:00Z' })
      .expect(400);
    // made public: no secret, no expiry; an expiry for it is 400
    await m.call('patch', `${base}/${c.id}`).send({ client_secret_lifetime: 60 }).expect(200);
    const pub = await m.call('patch', `${base}/${c.id}`).send({ is_public: true }).expect(200);
    expect(pub.body).toMatchObject({ client_secret: null, client_secret_expires_at: null });
    await m.call('patch', `${base}/${c.id}`).send({ client_secret_lifetime: 60 }).expect(400);
    // made confidential again with a lifetime: the new secret expires so
    const conf = await m
      .call('patch', `${base}/${c.id}`)
      .send({ is_public: false, client_secret_lifetime: 600 })
      .expect(200);
    expect(conf.body.client_secret).toEqual(expect.any(String));
    expect(new Date(conf.body.client_secret_expires_at as string).getTime()).toBeGreaterThan(
      Date.now() + 590_000,
    );
  });
});

describe('the token server honours the expiry', () => {
  it('a secret works until it expires, then every client authentication is 401 invalid_client', async () => {
    const c = (
      await m
        .call('post', '/api/v1/clients')
        .send({ client_name: uniq('ttl'), client_secret_lifetime: 3 })
        .expect(201)
    ).body as { id: string; client_secret: string };
    await authorize(c.id);
    expect((await clientCredentials(c.id, c.client_secret)).status).toBe(200);
    const expiresAt = new Date(
      (await m.call('get', `/api/v1/clients/${c.id}`).expect(200)).body.client_secret_expires_at as string,
    ).getTime();
    // The secret's expiry is the rule under test (the token server reads the wall clock): wait until it passed.
    await sleep(Math.max(0, expiresAt - Date.now()) + 50);
    expect(await clientCredentials(c.id, c.client_secret)).toEqual({ status: 401, error: 'invalid_client' });
    // /tokeninfo with the expired credentials
    const info = await fetch(`${m.auth.url}/tokeninfo`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${c.id}:${c.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: 'x' }).toString(),
    });
    expect(info.status).toBe(401);
    // a new secret without expiry works again
    const rotated = (await m.call('post', `/api/v1/clients/${c.id}/rotate-secret`).expect(200)).body as {
      client_secret: string;
      client_secret_expires_at: string | null;
    };
    expect(rotated.client_secret_expires_at).toBeNull();
    expect((await clientCredentials(c.id, rotated.client_secret)).status).toBe(200);
  });
});
