import { TokenServerApp, totpCode, totpStep } from '@gatehouse/token-server-testing';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

/**
 * User Authenticators over HTTP in both presentations: authenticators enrolled through the real token server's own
 * second factors (the code computed from the secret), listed without any secret, code or hash, deleted one by one
 * or reset, with the tenant scoping of every user sub-resource and the scopes users:read / users:write (../shared/API.md).
 */
let m: Management;
let tenant: string;
let now = Date.UTC(2031, 5, 1, 9, 0, 0);

beforeAll(async () => {
  m = await Management.start();
  tenant = await m.tenant();
  tokenServer().mfa.clock = () => new Date(now);
});
afterAll(async () => {
  await m?.close();
});

const tokenServer = () => m.auth.built.app.get(TokenServerApp);

async function user(tenantId?: string): Promise<{ id: string; instanceId: string }> {
  const body = (
    await m
      .call('post', '/api/v1/users')
      .send({
        user_email: `${uniq('mfa')}@auth.test`,
        password: 'correct horse battery staple 1',
        ...(tenantId ? { tenant_id: tenantId } : {}),
      })
      .expect(201)
  ).body as { id: string; instance_id: string };
  return { id: body.id, instanceId: body.instance_id };
}

/** An authenticator app and its recovery codes, enrolled as the sign-in pages enrol them. */
async function enrol(u: { id: string; instanceId: string }) {
  const pending = await tokenServer().mfa.startEnrolment(u);
  now += 30_000;
  const done = await tokenServer().mfa.confirmEnrolment(
    u,
    pending.id,
    totpCode(pending.secret, totpStep(new Date(now))),
  );
  if (done === 'wrong_code') throw new Error('enrolment refused');
  return { secret: pending.secret, codes: done.codes, totpId: pending.id };
}

describe.each(VERSIONS)('/users/:user_id/authenticators under /api/%s', (v: Version) => {
  const api = `/api/${v}`;

  it('lists the confirmed factors without any secret or code; the user counts them', async () => {
    const u = await user();
    const path = `${api}/users/${u.id}/authenticators`;
    const { total, hasMore } = ENVELOPE[v];
    expect((await m.call('get', `${path}?${total}=true`).expect(200)).body).toMatchObject({
      [total]: 0,
      count: 0,
      items: [],
    });
    const { secret, codes, totpId } = await enrol(u);
    const res = await m.call('get', `${path}?${total}=true&sort=type:desc`).expect(200);
    expect(res.body).toMatchObject({ [total]: 2, count: 2, [hasMore]: false });
    const stamp = expect.any(String);
    expect(res.body.items).toEqual([
      {
        id: totpId,
        instance_id: u.instanceId,
        user_id: u.id,
        type: 'totp',
        name: 'Authenticator app',
        confirmed_at: stamp,
        last_used_at: stamp,
        created_by: null,
        created_at: stamp,
        updated_by: null,
        updated_at: stamp,
      },
      expect.objectContaining({ type: 'recovery_codes', name: 'Recovery codes', confirmed_at: stamp }),
    ]);
    // no secret, code or hash in any answer, whatever fields or q ask for
    const raw = JSON.stringify(res.body);
    for (const s of [secret, ...codes, ...codes.map((c) => c.replace(/-/g, ''))])
      expect(raw).not.toContain(s);
    expect(raw).not.toMatch(/gh2\.|[0-9a-f]{64}/);
    await m.call('get', `${path}?fields=secret_enc`).expect(400);
    await m.call('get', `${path}?fields=code_hashes`).expect(400);
    await m.call('get', `${path}?q=${encodeURIComponent('secret_enc is not null')}`).expect(400);
    expect(
      (await m.call('get', `${path}?fields=id,type&q=${encodeURIComponent("type = 'totp'")}`).expect(200))
        .body.items,
    ).toEqual([{ id: totpId, type: 'totp' }]);
    const agg = v === 'v1' ? 'aggregations' : 'aggregates';
    const read = (await m.call('get', `${api}/users/${u.id}?fields=id,${agg}`).expect(200)).body;
    expect(read[agg]).toMatchObject({ authenticators: 2 });
    expect(JSON.stringify(read)).not.toContain(secret);
  });

  it('lists a passkey by type, name and dates, never its key material; DELETE removes it alone', async () => {
    const u = await user();
    await enrol(u);
    const credentialId = `cred-${uniq('pk')}`;
    const publicKey = `pQECAyYgASFYI${uniq('key')}`;
    // a passkey row as the token server's registration writes it (libs/auth/server/src/mfa/passkeys.ts)
    const [{ id: passkeyId }] = await m.ds.rows<{ id: string }>(
      `INSERT INTO user_authenticators (instance_id, user_id, type, name, credential_id, public_key, sign_count,
                                        transports, backup_eligible, confirmed_at, last_used_at)
       VALUES ($1, $2, 'webauthn', 'Work laptop', $3, $4, 7, ARRAY['internal'], false, now(), now()) RETURNING id`,
      [u.instanceId, u.id, credentialId, publicKey],
    );
    const path = `${api}/users/${u.id}/authenticators`;
    const res = await m.call('get', `${path}?q=${encodeURIComponent("type = 'webauthn'")}`).expect(200);
    const stamp = expect.any(String);
    expect(res.body.items).toEqual([
      {
        id: passkeyId,
        instance_id: u.instanceId,
        user_id: u.id,
        type: 'webauthn',
        name: 'Work laptop',
        confirmed_at: stamp,
        last_used_at: stamp,
        created_by: null,
        created_at: stamp,
        updated_by: null,
        updated_at: stamp,
      },
    ]);
    const all = JSON.stringify((await m.call('get', path).expect(200)).body);
    for (const s of [credentialId, publicKey]) expect(all).not.toContain(s);
    for (const f of ['credential_id', 'public_key', 'sign_count', 'transports', 'backup_eligible'])
      await m.call('get', `${path}?fields=${f}`).expect(400);
    const agg = v === 'v1' ? 'aggregations' : 'aggregates';
    expect(
      (await m.call('get', `${api}/users/${u.id}?fields=id,${agg}`).expect(200)).body[agg],
    ).toMatchObject({
      authenticators: 3,
    });
    await m.call('delete', `${path}/${passkeyId}`).expect(204);
    const left = (await m.call('get', path).expect(200)).body.items as { type: string }[];
    expect(left.map((a) => a.type).sort()).toEqual(['recovery_codes', 'totp']);
    const events = await m.ds.rows<{ details: Record<string, unknown>; row: string }>(
      `SELECT details, to_jsonb(e)::text AS row FROM events e WHERE type = 'mfa.removed' AND user_id = $1`,
      [u.id],
    );
    expect(events.map((e) => e.details.authenticator_type)).toEqual(['webauthn']);
    for (const e of events) for (const s of [credentialId, publicKey]) expect(e.row).not.toContain(s);
  });

  it('deleting the app removes its recovery codes too (204); deleting again: 404', async () => {
    const u = await user();
    const { totpId } = await enrol(u);
    const path = `${api}/users/${u.id}/authenticators`;
    await m.call('delete', `${path}/${totpId}`).expect(204);
    expect((await m.call('get', path).expect(200)).body.items).toEqual([]);
    await m.call('delete', `${path}/${totpId}`).expect(404);
    const [event] = await m.ds.rows<{ type: string; user_id: string; details: Record<string, unknown> }>(
      `SELECT type, user_id, details FROM events WHERE type = 'mfa.removed' AND user_id = $1`,
      [u.id],
    );
    expect(event).toMatchObject({ type: 'mfa.removed', details: { authenticator_type: 'totp' } });
  });

  it('deleting the recovery codes keeps the app; reset removes everything (204, idempotent)', async () => {
    const u = await user();
    const { totpId } = await enrol(u);
    const path = `${api}/users/${u.id}/authenticators`;
    const items = (await m.call('get', path).expect(200)).body.items as { id: string; type: string }[];
    const codes = items.find((a) => a.type === 'recovery_codes')!;
    await m.call('delete', `${path}/${codes.id}`).expect(204);
    expect((await m.call('get', `${path}?fields=id`).expect(200)).body.items).toEqual([{ id: totpId }]);
    await m.call('delete', path).expect(204);
    expect((await m.call('get', path).expect(200)).body.count).toBe(0);
    await m.call('delete', path).expect(204);
    const events = await m.ds.rows<{ details: Record<string, unknown> }>(
      `SELECT details FROM events WHERE type = 'mfa.removed' AND user_id = $1 ORDER BY created_at`,
      [u.id],
    );
    expect(events.map((e) => e.details.authenticator_type)).toEqual(['recovery_codes', 'all']);
  });

  it('400 for malformed ids, bad queries and bodies; 404 for unknown users or another user’s authenticator', async () => {
    const a = await user();
    const b = await user();
    const { totpId: ofB } = await enrol(b);
    await m.call('get', `${api}/users/not-a-uuid/authenticators`).expect(400);
    await m.call('delete', `${api}/users/not-a-uuid/authenticators`).expect(400);
    await m.call('delete', `${api}/users/${a.id}/authenticators/not-a-uuid`).expect(400);
    await m.call('get', `${api}/users/${a.id}/authenticators?fields=nope`).expect(400);
    await m.call('get', `${api}/users/${a.id}/authenticators?expand=nope`).expect(400);
    await m
      .call('get', `${api}/users/${a.id}/authenticators?q=${encodeURIComponent('nope = 1')}`)
      .expect(400);
    await m.call('get', `${api}/users/${missingId()}/authenticators`).expect(404);
    await m.call('delete', `${api}/users/${missingId()}/authenticators`).expect(404);
    await m.call('delete', `${api}/users/${missingId()}/authenticators/${ofB}`).expect(404);
    await m.call('delete', `${api}/users/${a.id}/authenticators/${ofB}`).expect(404);
    await m.call('post', `${api}/users/${a.id}/authenticators`).send({}).expect(405);
    expect((await m.call('get', `${api}/users/${b.id}/authenticators`).expect(200)).body.count).toBe(2);
  });

  it('a tenant-bound caller reaches only users of its tenant; scopes users:read / users:write', async () => {
    const u = await user(tenant);
    const { totpId } = await enrol(u);
    const path = `${api}/users/${u.id}/authenticators`;
    const own = await m.caller(['users:read', 'users:write'], {
      tenantId: tenant,
      isGlobal: false,
    });
    await m.call('get', path, own.token).expect(200);
    const other = await m.caller(['users:read', 'users:write'], {
      tenantId: await m.tenant(),
      isGlobal: false,
    });
    await m.call('get', path, other.token).expect(404);
    await m.call('delete', `${path}/${totpId}`, other.token).expect(404);
    await m.call('delete', path, other.token).expect(404);
    // another API's scopes do not reach a user's factors
    const clientsOnly = await m.caller(['clients:read', 'clients:write']);
    await m.call('get', path, clientsOnly.token).expect(403);
    await m.call('delete', path, clientsOnly.token).expect(403);
    const reader = await m.caller(['users:read']);
    await m.call('get', path, reader.token).expect(200);
    await m.call('delete', `${path}/${totpId}`, reader.token).expect(403);
    await m.call('delete', path, reader.token).expect(403);
    await m.call('get', path, '').expect(401);
    expect((await m.call('get', path).expect(200)).body.count).toBe(2);
    await m.call('delete', path, own.token).expect(204);
    expect((await m.call('get', path).expect(200)).body.count).toBe(0);
  });
});

describe('the mfa policy of instances, tenants and clients', () => {
  it.each(VERSIONS)(
    'is created, read, changed and cleared; a bad value is 400 and writes nothing (%s)',
    async (v) => {
      const api = `/api/${v}`;
      const t = (
        await m
          .call('post', `${api}/tenants`)
          .send({ tenant_name: uniq('t'), mfa: 'required' })
          .expect(201)
      ).body;
      expect(t.mfa).toBe('required');
      expect(
        (await m.call('patch', `${api}/tenants/${t.id}`).send({ mfa: 'off' }).expect(200)).body.mfa,
      ).toBe('off');
      expect(
        (await m.call('patch', `${api}/tenants/${t.id}`).send({ tenant_description: 'x' }).expect(200)).body
          .mfa,
      ).toBe('off');
      const bad = await m
        .call('patch', `${api}/tenants/${t.id}`)
        .send({ mfa: 'always', tenant_description: 'y' })
        .expect(400);
      expect(bad.body).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('mfa') });
      expect((await m.call('get', `${api}/tenants/${t.id}`).expect(200)).body).toMatchObject({
        mfa: 'off',
        tenant_description: 'x',
      });
      expect(
        (await m.call('patch', `${api}/tenants/${t.id}`).send({ mfa: null }).expect(200)).body.mfa,
      ).toBeNull();
      await m
        .call('post', `${api}/tenants`)
        .send({ tenant_name: uniq('t'), mfa: 7 })
        .expect(400);
      const q = encodeURIComponent(`mfa = 'off'`);
      await m.call('get', `${api}/tenants?q=${q}`).expect(200);

      const c = (
        await m
          .call('post', `${api}/clients`)
          .send({ client_name: uniq('c'), mfa: 'optional' })
          .expect(201)
      ).body;
      expect(c.mfa).toBe('optional');
      expect(
        (await m.call('patch', `${api}/clients/${c.id}`).send({ mfa: 'required' }).expect(200)).body.mfa,
      ).toBe('required');
      await m.call('patch', `${api}/clients/${c.id}`).send({ mfa: 'sometimes' }).expect(400);
      expect((await m.call('get', `${api}/clients/${c.id}`).expect(200)).body.mfa).toBe('required');
      expect(
        (
          await m
            .call('post', `${api}/clients`)
            .send({ client_name: uniq('c') })
            .expect(201)
        ).body.mfa,
      ).toBeNull();

      const [inst] = await m.ds.rows<{ id: string }>(`SELECT id FROM instances WHERE is_default`);
      // outside multi-instance mode the instances operations are 501; the column is read by the token server
      const r = await m.call('get', `${api}/instances/${inst.id}`);
      expect([200, 501]).toContain(r.status);
      if (r.status === 200) {
        expect(r.body.mfa).toBeNull();
        expect(
          (await m.call('patch', `${api}/instances/${inst.id}`).send({ mfa: 'optional' }).expect(200)).body
            .mfa,
        ).toBe('optional');
        await m.call('patch', `${api}/instances/${inst.id}`).send({ mfa: 'x' }).expect(400);
        await m.call('patch', `${api}/instances/${inst.id}`).send({ mfa: null }).expect(200);
      }
    },
  );
});
