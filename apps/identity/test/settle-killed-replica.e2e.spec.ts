import { eventually } from '@gatehouse/testing';
import { spawnTokenServer } from '@gatehouse/token-server-testing';
import { Management } from './management-harness.js';
import { cacheClient, cacheResource, scopesOf, tokenRequest } from './token-cache-fixtures.js';

/**
 * Three token servers on one database, each in its own OS process with its state cache on; one is killed with
 * SIGKILL. Its subscriber row still looks live for up to 3 s, but the backend of its LISTEN connection is gone from
 * pg_stat_activity: identity's settle stops waiting for it at once (instead of after the 3 s settle timeout), and
 * the surviving token servers still see every change on the very next request.
 */
let m: Management;
let others: Awaited<ReturnType<typeof spawnTokenServer>>[] = [];
const CACHE = { AUTH_STATE_CACHE_TTL_MS: '60000' };

beforeAll(async () => {
  m = await Management.start({}, CACHE, { process: true });
  // the same database, data directory, encryption key, bootstrap values and issuer as the first (replicas of one
  // service behind one address)
  for (let i = 0; i < 2; i++) {
    others.push(
      await spawnTokenServer({
        databaseUrl: m.db.url,
        dataDir: m.dataDir,
        env: { ...m.auth.shared, ISSUER: m.auth.url, ...CACHE },
      }),
    );
  }
}, 180_000);
afterAll(async () => {
  for (const o of others) await o.stop();
  others = [];
  await m?.close();
});

/** The scopes /tokeninfo grants `token` at the token server `url`. */
async function scopeAt(url: string, token: string): Promise<unknown> {
  const res = await fetch(`${url}/tokeninfo`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  return ((await res.json()) as { scope?: unknown }).scope;
}

it('a SIGKILLed token server stalls no management write, and the others stay exact', async () => {
  const api = await cacheResource(m, 'killed');
  const c = await cacheClient(m, 'killed', api.id, [api.scopes.read, api.scopes.write]);
  await eventually(
    async () => {
      const [row] = await m.ds.rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM cache_subscribers s JOIN pg_stat_activity a ON a.pid = s.backend_pid
          WHERE s.service = 'auth' AND a.application_name = 'gatehouse-auth-changes'`,
      );
      return row.n === 3;
    },
    { timeoutMs: 10_000, what: 'three subscribers with their LISTEN backends' },
  );
  const [victim, survivor] = others;
  const token = (await tokenRequest(m, c.id, c.secret, api.identifier)).token!;
  // every replica has the client and its grants cached
  for (const url of [m.auth.url, victim!.url, survivor!.url])
    expect(await scopeAt(url, token)).toBe('read write');

  process.kill(victim!.pid, 'SIGKILL');
  await eventually(() => {
    try {
      process.kill(victim!.pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    await m
      .call('delete', `/api/v2/clients/${c.id}/permissions`)
      .send({ permissions: [{ scopes: [api.scopes.write] }] })
      .expect(204);
    expect(Date.now() - started).toBeLessThan(1000);
    for (const url of [m.auth.url, survivor!.url]) expect(await scopeAt(url, token)).toBe('read');
    expect(scopesOf((await tokenRequest(m, c.id, c.secret, api.identifier)).token!)).toEqual(['read']);
    const again = Date.now();
    await m
      .call('post', `/api/v1/clients/${c.id}/permissions`)
      .send({ permissions: [{ resource_id: api.id, scopes: [api.scopes.write] }] })
      .expect(204);
    expect(Date.now() - again).toBeLessThan(1000);
    for (const url of [m.auth.url, survivor!.url]) expect(await scopeAt(url, token)).toBe('read write');
  }
  // the killed replica's row is gone; the survivors' rows stay
  const [row] = await m.ds.rows<{ n: number }>(
    `SELECT count(*)::int AS n FROM cache_subscribers WHERE service = 'auth'`,
  );
  expect(row.n).toBe(2);
});
