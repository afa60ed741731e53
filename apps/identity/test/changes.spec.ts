import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { eventually } from '@gatehouse/testing';
import type { IdentityChange } from '@gatehouse/changes';
import type { BuiltService } from '@gatehouse/service';
import { TokenValidator } from '@gatehouse/bearer';
import { ChangeFeed } from '../src/common/changes.js';
import { Management, uniq } from './management-harness.js';
import type { IdentityEnv } from './support.js';

/**
 * Two replicas of the identity service on one database, each with its caller cache and a bearer cache that would
 * keep a token's check for an hour: a change made through one replica holds on the other at once.
 */
describe('changes reach every replica (LISTEN/NOTIFY)', () => {
  let m: Management;
  let b: BuiltService<IdentityEnv>;

  beforeAll(async () => {
    m = await Management.start({ BEARER_CACHE_TTL_SEC: '3600', BEARER_NEGATIVE_TTL_SEC: '3600' });
    b = await m.replica();
  });
  afterAll(async () => {
    await m?.close();
  });

  const onB = (method: 'get' | 'patch', url: string, token: string) =>
    request(b.app.getHttpServer())[method](url).set('Authorization', `Bearer ${token}`);

  it('a client made tenant-bound on one replica is held to its tenant by the other at once', async () => {
    const tenant = await m.tenant();
    const other = await m.tenant();
    await m
      .call('post', '/api/v1/clients')
      .send({ client_name: uniq('other-tenant'), tenant_id: other })
      .expect(201);
    const c = await m.caller(['clients:read']);
    // B caches the caller row and the token check (global caller: sees the other tenant's client)
    const before = await onB(
      'get',
      `/api/v1/clients?q=${encodeURIComponent(`tenant_id = '${other}'`)}`,
      c.token,
    );
    expect(before.status).toBe(200);
    expect(before.body.count).toBe(1);

    await m
      .call('patch', `/api/v1/clients/${c.id}`)
      .send({ is_global: false, tenant_id: tenant })
      .expect(200);
    await eventually(async () => {
      const res = await onB(
        'get',
        `/api/v1/clients?q=${encodeURIComponent(`tenant_id = '${other}'`)}`,
        c.token,
      );
      return res.status === 200 && res.body.count === 0;
    });
  });

  it('a client deleted on one replica loses the other at once, though its token check was cached', async () => {
    const c = await m.caller(['clients:read']);
    await onB('get', '/api/v1/clients', c.token).expect(200);
    const validator = b.app.get(TokenValidator);
    const cached = validator.size;
    expect(cached).toBeGreaterThan(0);

    await m.call('delete', `/api/v1/clients/${c.id}`).expect(204);
    await eventually(async () => (await onB('get', '/api/v1/clients', c.token)).status === 401);
    expect(validator.size).toBeLessThan(cached + 1);
  });

  it('a rolled-back change announces nothing; the feed reconnects and forgets what it may have missed', async () => {
    const feed = b.app.get(ChangeFeed);
    // a failing change: a duplicate client name in one tenant (409), rolled back before the announcement commits
    const tenant = await m.tenant();
    const name = uniq('dup');
    const first = await m
      .call('post', '/api/v1/clients')
      .send({ client_name: name, tenant_id: tenant })
      .expect(201);
    const second = await m
      .call('post', '/api/v1/clients')
      .send({ client_name: uniq('dup2'), tenant_id: tenant })
      .expect(201);
    // A marker of our own on the change channel: notifications arrive in commit order, so once B has applied it,
    // B has applied every change committed before it.
    const seen = new Set<string>();
    const hooked = feed as unknown as { forget(change: IdentityChange): void };
    const forget = hooked.forget.bind(feed);
    hooked.forget = (change) => {
      if (change.kind === 'client') seen.add(change.id);
      forget(change);
    };
    const marker = async () => {
      const id = randomUUID();
      await m.ds.rows(`SELECT pg_notify('gatehouse_identity_changes', $1)`, [`client:${id}`]);
      await eventually(() => seen.has(id), { what: 'the marker applied by B' });
    };
    try {
      // (the creations announce themselves: wait for their notifications before counting)
      await marker();
      const applied = feed.applied;
      await m.call('patch', `/api/v1/clients/${second.body.id}`).send({ client_name: name }).expect(409);
      await marker();
      expect(feed.applied).toBe(applied + 1); // the marker alone
    } finally {
      Reflect.deleteProperty(hooked, 'forget');
    }
    expect(first.body.id).toBeDefined();

    // the feed's connection is killed: it comes back by itself and forgets every cached check meanwhile
    const c = await m.caller(['clients:read']);
    await onB('get', '/api/v1/clients', c.token).expect(200);
    const validator = b.app.get(TokenValidator);
    expect(validator.size).toBeGreaterThan(0);
    await m.ds.rows(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'gatehouse-identity-changes' AND datname = current_database()`,
    );
    await eventually(async () => validator.size === 0);
    // and applies changes again once reconnected
    await eventually(
      async () => {
        const before = feed.applied;
        await m.ds.rows(`SELECT pg_notify('gatehouse_identity_changes', 'all')`);
        await new Promise((r) => setTimeout(r, 50));
        return feed.applied > before;
      },
      { timeoutMs: 5000 },
    );
  });
});
