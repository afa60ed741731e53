import { randomUUID } from 'node:crypto';
import { eventId, insertEvents, type EventInput } from '@gatehouse/identity-data';
import { ENVELOPE, Management, missingId, uniq, VERSIONS, type Version } from './management-harness.js';

/**
 * The audit trail through HTTP: GET /logs, GET /logs/:log_id and GET /users/:user_id/logs in both presentations,
 * on events written with insertEvents (the writer the services use). The test events lie three days ahead (their
 * partitions exist, see the events migration), so events the services write while the test runs never mix in:
 * every list is bounded by `from`.
 */
let m: Management;
const base = new Date(Math.floor(Date.now() / 1000) * 1000 + 3 * 86_400_000);
const at = (s: number) => new Date(base.getTime() + s * 1000);
const iso = (s: number) => at(s).toISOString();
const FROM = iso(0);

let instanceId: string;
let tenantId: string;
let user1: string;
let user2: string;
const client1 = randomUUID();
const otherInstance = randomUUID();
const ids: Record<string, string> = {};

/** The events of the test, by name; ids read back from the table after the insert. */
async function seed(): Promise<void> {
  const events: Record<string, EventInput> = {
    e1: {
      type: 'signin.success',
      instanceId,
      actor: { type: 'user', id: user1, viaClientId: client1 },
      userId: user1,
      clientId: client1,
      ip: '203.0.113.1',
      userAgent: 'test-agent/1',
      at: at(1),
    },
    e2: {
      type: 'signin.failure',
      reason: 'wrong_password',
      instanceId,
      userId: user1,
      clientId: client1,
      ip: '203.0.113.2',
      at: at(2),
    },
    e3: {
      type: 'token.issued',
      instanceId,
      actor: { type: 'client', id: client1 },
      clientId: client1,
      details: { grant_type: 'client_credentials' },
      at: at(3),
    },
    e4: {
      type: 'mgmt.updated',
      instanceId,
      tenantId,
      actor: { type: 'client', id: client1 },
      record: { type: 'client', id: client1 },
      details: { changes: { client_name: { old: 'a', new: 'b' } } },
      at: at(4),
    },
    e5: { type: 'signin.success', instanceId, tenantId, userId: user2, at: at(5) },
    e6: { type: 'signin.success', instanceId: otherInstance, userId: user1, at: at(6) },
  };
  await insertEvents(m.ds, Object.values(events));
  const rows = await m.ds.rows<{ id: string; ms: string }>(
    `SELECT id, (extract(epoch FROM created_at) * 1000)::bigint::text AS ms FROM events
      WHERE created_at BETWEEN $1 AND $2`,
    [at(1).toISOString(), at(6).toISOString()],
  );
  for (const [name, e] of Object.entries(events)) {
    ids[name] = rows.find((r) => Number(r.ms) === e.at!.getTime())!.id;
  }
}

beforeAll(async () => {
  m = await Management.start();
  [{ id: instanceId }] = await m.ds.rows<{ id: string }>(`SELECT id FROM instances WHERE is_default`);
  tenantId = await m.tenant();
  user1 = (
    await m
      .call('post', '/api/v1/users')
      .send({ user_email: `${uniq('l')}@example.test` })
      .expect(201)
  ).body.id;
  user2 = (
    await m
      .call('post', '/api/v1/users')
      .send({ user_email: `${uniq('l')}@example.test`, tenant_id: tenantId })
      .expect(201)
  ).body.id;
  await seed();
});
afterAll(async () => {
  await m?.close();
});

type Item = { id: string; type: string; created_at: string } & Record<string, unknown>;
const idsOf = (body: { items: Item[] }) => body.items.map((i) => i.id);

describe.each(VERSIONS)('Logs under /api/%s', (v: Version) => {
  const E = ENVELOPE[v];
  const P = v === 'v1' ? { user: 'user_id', client: 'client_id' } : { user: 'userId', client: 'clientId' };
  const list = (query: Record<string, unknown>, token?: string) =>
    m.call('get', `/api/${v}/logs`, token).query({ from: FROM, ...query });

  it('lists the instance’s events newest first, as records with actor and record nested', async () => {
    const res = await list({ [E.total]: true }).expect(200);
    expect(idsOf(res.body)).toEqual([ids.e5, ids.e4, ids.e3, ids.e2, ids.e1]);
    expect(res.body[E.total]).toBe(5);
    expect(res.body[E.hasMore]).toBe(false);
    expect(res.body.items[1]).toEqual({
      id: ids.e4,
      type: 'mgmt.updated',
      outcome: 'success',
      reason: null,
      description: 'A record was changed; `details.changes` has each changed field as `{ old, new }`.',
      instance_id: instanceId,
      tenant_id: tenantId,
      actor: { type: 'client', id: client1, via_client_id: null },
      user_id: null,
      client_id: null,
      record: { type: 'client', id: client1 },
      ip: null,
      user_agent: null,
      details: { changes: { client_name: { old: 'a', new: 'b' } } },
      created_at: iso(4),
    });
    expect(res.body.items[4]).toMatchObject({
      type: 'signin.success',
      actor: { type: 'user', id: user1, via_client_id: client1 },
      user_id: user1,
      client_id: client1,
      record: null,
      ip: '203.0.113.1',
      user_agent: 'test-agent/1',
      details: {},
    });
    // without a filter too: the newest events of the instance come first (the test's lie ahead)
    const all = await m.call('get', `/api/${v}/logs`).expect(200);
    expect(idsOf(all.body).slice(0, 5)).toEqual([ids.e5, ids.e4, ids.e3, ids.e2, ids.e1]);
  });

  it('pages with offset and limit; total_count; fields', async () => {
    const p1 = await list({ limit: 2, [E.total]: true }).expect(200);
    expect(idsOf(p1.body)).toEqual([ids.e5, ids.e4]);
    expect([p1.body[E.hasMore], p1.body[E.total], p1.body.count]).toEqual([true, 5, 2]);
    const p3 = await list({ limit: 2, offset: 4 }).expect(200);
    expect(idsOf(p3.body)).toEqual([ids.e1]);
    expect(p3.body[E.hasMore]).toBe(false);
    expect(p3.body[E.total]).toBeUndefined();
    const some = await list({ fields: 'id,type,actor', limit: 1 }).expect(200);
    expect(some.body.items).toEqual([
      { id: ids.e5, type: 'signin.success', actor: { type: 'anonymous', id: null, via_client_id: null } },
    ]);
    await list({ fields: 'actor_type' }).expect(400);
    await list({ fields: 'nope' }).expect(400);
  });

  it('filters by type (one or several), user, client, date range and q', async () => {
    expect(idsOf((await list({ type: 'signin.success' }).expect(200)).body)).toEqual([ids.e5, ids.e1]);
    expect(idsOf((await list({ type: 'signin.failure,signin.success' }).expect(200)).body)).toEqual([
      ids.e5,
      ids.e2,
      ids.e1,
    ]);
    expect(idsOf((await list({ [P.user]: user1 }).expect(200)).body)).toEqual([ids.e2, ids.e1]);
    expect(idsOf((await list({ [P.client]: client1 }).expect(200)).body)).toEqual([ids.e3, ids.e2, ids.e1]);
    expect(idsOf((await list({ from: iso(2), to: iso(4) }).expect(200)).body)).toEqual([ids.e3, ids.e2]);
    // an offset form of the same instant
    const plus8 = new Date(at(2).getTime() + 8 * 3600_000).toISOString().replace('Z', '+08:00');
    expect(idsOf((await list({ from: plus8, to: iso(4) }).expect(200)).body)).toEqual([ids.e3, ids.e2]);
    expect(idsOf((await list({ q: "outcome = 'failure'" }).expect(200)).body)).toEqual([ids.e2]);
    expect(
      idsOf((await list({ q: "actor_type = 'client' and record_type = 'client'" }).expect(200)).body),
    ).toEqual([ids.e4]);
    expect(idsOf((await list({ q: "details.grant_type = 'client_credentials'" }).expect(200)).body)).toEqual([
      ids.e3,
    ]);
    const combined = await list({ type: 'signin.success', [P.user]: user1, [E.total]: true }).expect(200);
    expect([idsOf(combined.body), combined.body[E.total]]).toEqual([[ids.e1], 1]);
  });

  it('sorts by created_at and type only, in orders an index reads', async () => {
    expect(idsOf((await list({ sort: 'created_at:asc' }).expect(200)).body)).toEqual([
      ids.e1,
      ids.e2,
      ids.e3,
      ids.e4,
      ids.e5,
    ]);
    expect(idsOf((await list({ sort: 'created_at:desc' }).expect(200)).body)).toEqual([
      ids.e5,
      ids.e4,
      ids.e3,
      ids.e2,
      ids.e1,
    ]);
    const byType = await list({ sort: 'type' }).expect(200);
    expect(byType.body.items.map((i: Item) => i.type)).toEqual([
      'mgmt.updated',
      'signin.failure',
      'signin.success',
      'signin.success',
      'token.issued',
    ]);
    // within a type, newest first
    expect(idsOf(byType.body).slice(2, 4)).toEqual([ids.e5, ids.e1]);
    const desc = await list({ sort: 'type:desc,created_at:asc' }).expect(200);
    expect(idsOf(desc.body)).toEqual([ids.e3, ids.e1, ids.e5, ids.e2, ids.e4]);
    for (const sort of ['ip', 'created_at:up', 'type:asc,created_at:asc', 'created_at,type']) {
      const bad = await list({ sort }).expect(400);
      expect(bad.body.details[0].field).toBe('sort');
    }
  });

  it('a bad filter is a 400 naming the parameter, and reads or writes nothing', async () => {
    const [{ n: before }] = await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM events`);
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'signin.nope' }, 'type'],
      [{ type: 'signin.success,' }, 'type'],
      [{ [P.user]: 'not-a-uuid' }, P.user],
      [{ [P.client]: '42' }, P.client],
      [{ from: '2026-01-01' }, 'from'],
      [{ from: '2026-01-01T00:00:00' }, 'from'],
      [{ to: 'yesterday' }, 'to'],
      [{ from: iso(5), to: iso(1) }, 'to'],
      [{ from: [iso(1), iso(2)] }, 'from'],
      [{ q: 'nope = 1' }, 'q'],
      [{ [E.total]: 'maybe' }, E.total],
      [{ limit: 0 }, 'limit'],
    ];
    for (const [query, field] of cases) {
      const res = await list(query).expect(400);
      expect([field, res.body.code, res.body.details?.[0]?.field]).toEqual([field, 'invalid_request', field]);
    }
    const [{ n: after }] = await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM events`);
    expect(after).toBe(before);
  });

  it('GET /logs/:log_id: the record; 404 for an unknown id or another instance’s; 400 for a non-uuid', async () => {
    const one = await m.call('get', `/api/${v}/logs/${ids.e2}`).expect(200);
    const listed = (await list({ [P.user]: user1 }).expect(200)).body.items.find(
      (i: Item) => i.id === ids.e2,
    );
    expect(one.body).toEqual(listed);
    expect(one.body).toMatchObject({ type: 'signin.failure', outcome: 'failure', reason: 'wrong_password' });
    const fields = await m.call('get', `/api/${v}/logs/${ids.e2}`).query({ fields: 'id,reason' }).expect(200);
    expect(fields.body).toEqual({ id: ids.e2, reason: 'wrong_password' });
    await m.call('get', `/api/${v}/logs/${eventId(at(2))}`).expect(404);
    await m.call('get', `/api/${v}/logs/${missingId()}`).expect(404);
    await m.call('get', `/api/${v}/logs/${ids.e6}`).expect(404);
    await m.call('get', `/api/${v}/logs/not-an-id`).expect(400);
  });

  it('events are read-only: writes answer 405', async () => {
    await m.call('post', `/api/${v}/logs`).send({}).expect(405);
    await m.call('patch', `/api/${v}/logs/${ids.e1}`).send({}).expect(405);
    await m.call('delete', `/api/${v}/logs/${ids.e1}`).expect(405);
  });

  it('a tenant-restricted caller sees its tenant’s events only; another instance’s are never seen', async () => {
    const tc = await m.caller(['logs:read', 'users:read'], { tenantId, isGlobal: false });
    const res = await list({ [E.total]: true }, tc.token).expect(200);
    expect([idsOf(res.body), res.body[E.total]]).toEqual([[ids.e5, ids.e4], 2]);
    await m.call('get', `/api/${v}/logs/${ids.e4}`, tc.token).expect(200);
    await m.call('get', `/api/${v}/logs/${ids.e1}`, tc.token).expect(404);
    expect(idsOf((await list({ [P.user]: user1 }, tc.token).expect(200)).body)).toEqual([]);
    await m.call('get', `/api/${v}/users/${user1}/logs`, tc.token).expect(404);
    const own = await m
      .call('get', `/api/${v}/users/${user2}/logs`, tc.token)
      .query({ from: FROM })
      .expect(200);
    expect(idsOf(own.body)).toEqual([ids.e5]);
    // the instance admin does not see the other instance's event of user1 either
    const global = await list({ [P.user]: user1, to: iso(7) }).expect(200);
    expect(idsOf(global.body)).not.toContain(ids.e6);
  });

  it('needs logs:read (403 without it)', async () => {
    const c = await m.caller(['users:read', 'clients:read']);
    for (const path of ['logs', `logs/${ids.e1}`, `users/${user1}/logs`]) {
      const res = await m.call('get', `/api/${v}/${path}`, c.token).expect(403);
      expect(res.body.message).toContain('logs:read');
    }
  });

  it('GET /users/:user_id/logs: the user’s events, with the same parameters; 404 for an unknown user', async () => {
    const res = await m
      .call('get', `/api/${v}/users/${user1}/logs`)
      .query({ from: FROM, [E.total]: true })
      .expect(200);
    expect([idsOf(res.body), res.body[E.total]]).toEqual([[ids.e2, ids.e1], 2]);
    const failures = await m
      .call('get', `/api/${v}/users/${user1}/logs`)
      .query({ from: FROM, type: 'signin.failure', fields: 'id,reason' })
      .expect(200);
    expect(failures.body.items).toEqual([{ id: ids.e2, reason: 'wrong_password' }]);
    const asc = await m
      .call('get', `/api/${v}/users/${user1}/logs`)
      .query({ from: FROM, sort: 'created_at:asc', limit: 1 })
      .expect(200);
    expect([idsOf(asc.body), asc.body[E.hasMore]]).toEqual([[ids.e1], true]);
    await m.call('get', `/api/${v}/users/${missingId()}/logs`).expect(404);
    const bad = await m.call('get', `/api/${v}/users/${user1}/logs`).query({ to: 'soon' }).expect(400);
    expect(bad.body.details[0].field).toBe('to');
  });
});

describe('Logs: total_count over many events', () => {
  it('counts up to 10,000 (a total of 10,000 means that many or more); under the cap exactly', async () => {
    const user = randomUUID();
    const start = base.getTime() + 86_400_000;
    const many: EventInput[] = Array.from({ length: 10_050 }, (_, i) => ({
      type: 'token.issued',
      instanceId,
      userId: user,
      at: new Date(start + i),
    }));
    await insertEvents(m.ds, many);
    const capped = await m
      .call('get', '/api/v1/logs')
      .query({ user_id: user, total_count: true, limit: 3 })
      .expect(200);
    expect([capped.body.total_count, capped.body.count, capped.body.has_more]).toEqual([10_000, 3, true]);
    expect(capped.body.items[0].created_at).toBe(new Date(start + 10_049).toISOString());
    const under = await m
      .call('get', '/api/v2/logs')
      .query({ userId: user, to: new Date(start + 1234).toISOString(), totalCount: true })
      .expect(200);
    expect(under.body.totalCount).toBe(1234);
  });
});

describe('Logs in the OpenAPI document', () => {
  it('names each presentation’s filter parameters and documents the capped total', async () => {
    const doc = (await m.call('get', '/docs/openapi.json', '').expect(200)).body as {
      paths: Record<
        string,
        Record<string, { parameters?: { name: string; in: string; description?: string }[] }>
      >;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const params = (path: string) => doc.paths[path].get.parameters ?? [];
    const names = (path: string) => params(path).map((p) => p.name);
    expect(names('/api/v1/logs')).toEqual(
      expect.arrayContaining(['type', 'user_id', 'client_id', 'from', 'to', 'q', 'sort', 'total_count']),
    );
    expect(names('/api/v2/logs')).toEqual(
      expect.arrayContaining(['type', 'userId', 'clientId', 'from', 'to', 'q', 'sort', 'totalCount']),
    );
    // the user of /users/:user_id/logs is the path's
    const userQuery = params('/api/v1/users/{user_id}/logs').filter((p) => p.name === 'user_id');
    expect(userQuery.map((p) => p.in)).toEqual(['path']);
    expect(params('/api/v1/logs').find((p) => p.name === 'total_count')?.description).toContain('10,000');
    expect(Object.keys(doc.components.schemas.LogV2Doc.properties!)).toEqual(
      expect.arrayContaining(['actor', 'record', 'description', 'created_at']),
    );
  });
});
