import { decodeJwt, decodeProtectedHeader } from 'jose';
import { eventually } from '@gatehouse/testing';
import { Management, uniq } from './management-harness.js';
import { basic, cacheClient, cacheResource, scopesOf, tokenRequest } from './token-cache-fixtures.js';
import { passwordClient } from './ticket-pages.js';

/**
 * The token server never serves a revoked secret, permission or client one request after the change, shown with
 * two processes. The token server runs in its OWN OS PROCESS (built from the current sources) with its state
 * cache on (entries kept up to a minute); identity runs in this one. Every change is made through identity's HTTP
 * API and checked on the VERY NEXT request to the token server, ROUNDS times each, so that a race would show: the
 * notification of the change (sent by a trigger at commit) must have been applied by the token server before
 * identity answered (the settle protocol, libs/shared/bearer cache-sync.ts).
 */
const ROUNDS = 20;
let m: Management;

beforeAll(async () => {
  m = await Management.start({}, { AUTH_STATE_CACHE_TTL_MS: '60000' }, { process: true });
}, 90_000);
afterAll(async () => {
  await m?.close();
});

/** /tokeninfo with the client's Basic credentials (a resource server authenticating itself). */
async function tokenInfoAs(token: string, id: string, secret: string) {
  const res = await fetch(`${m.auth.url}/tokeninfo`, {
    method: 'POST',
    headers: { authorization: basic(id, secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('the token server in another process sees every change on the very next request', () => {
  let api: Awaited<ReturnType<typeof cacheResource>>;
  beforeAll(async () => {
    api = await cacheResource(m, 'two');
  });

  it('a rotated secret: the old one refused by /token and by /tokeninfo Basic auth', async () => {
    const c = await cacheClient(m, 'two', api.id, [api.scopes.read]);
    let secret = c.secret;
    for (let i = 0; i < ROUNDS; i++) {
      // cached: the client with this secret
      const token = (await tokenRequest(m, c.id, secret, api.identifier)).token!;
      expect(token).toBeDefined();
      expect((await tokenInfoAs(token, c.id, secret)).body.active).toBe(true);
      const rotated = await m.call('post', `/api/v1/clients/${c.id}/rotate-secret`).expect(200);
      const old = secret;
      secret = rotated.body.client_secret as string;
      expect(await tokenRequest(m, c.id, old, api.identifier)).toMatchObject({
        status: 401,
        error: 'invalid_client',
      });
      expect((await tokenInfoAs(token, c.id, old)).status).toBe(401);
      expect((await tokenInfoAs(token, c.id, secret)).body.active).toBe(true);
    }
  });

  it('a revoked permission: not issued any more, and gone from /tokeninfo of an earlier token', async () => {
    const c = await cacheClient(m, 'two', api.id, [api.scopes.read, api.scopes.write]);
    for (let i = 0; i < ROUNDS; i++) {
      const before = (await tokenRequest(m, c.id, c.secret, api.identifier)).token!;
      expect(scopesOf(before)).toEqual(['read', 'write']);
      expect((await m.tokenInfo(before)).scope).toBe('read write');
      await m
        .call('delete', `/api/v2/clients/${c.id}/permissions`)
        .send({ permissions: [{ scopes: [api.scopes.write] }] })
        .expect(204);
      expect((await m.tokenInfo(before)).scope).toBe('read');
      expect(scopesOf((await tokenRequest(m, c.id, c.secret, api.identifier)).token!)).toEqual(['read']);
      // granted again: issued again at once
      await m
        .call('post', `/api/v1/clients/${c.id}/permissions`)
        .send({ permissions: [{ resource_id: api.id, scopes: [api.scopes.write] }] })
        .expect(204);
    }
  });

  it('a deleted client: its token inactive at /tokeninfo, no new token', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const c = await cacheClient(m, 'two', api.id, [api.scopes.read]);
      const token = (await tokenRequest(m, c.id, c.secret, api.identifier)).token!;
      expect((await m.tokenInfo(token)).active).toBe(true);
      expect((await m.tokenInfo(token)).active).toBe(true);
      await m.call('delete', `/api/v1/clients/${c.id}`).expect(204);
      expect(await m.tokenInfo(token)).toEqual({ active: false });
      expect((await tokenRequest(m, c.id, c.secret, api.identifier)).status).toBe(401);
    }
  });

  it("a blocked user: the user's JWT inactive", async () => {
    const app = await passwordClient(m);
    const password = 'two-process-password-1';
    for (let i = 0; i < ROUNDS / 2; i++) {
      const email = `${uniq('two')}@example.test`;
      const u = (await m.call('post', '/api/v1/users').send({ user_email: email, password }).expect(201))
        .body as {
        id: string;
      };
      const t = await app.login(email, password);
      expect((await m.tokenInfo(t.access_token)).active).toBe(true);
      expect((await m.tokenInfo(t.access_token)).active).toBe(true);
      await m.call('post', `/api/v1/users/${u.id}/block`).expect(200);
      expect(await m.tokenInfo(t.access_token)).toEqual({ active: false });
    }
  });

  it("a resource's signing_algorithm and token_lifetime: the next token has them", async () => {
    const c = await cacheClient(m, 'two', api.id, [api.scopes.read]);
    for (let i = 0; i < ROUNDS; i++) {
      const alg = i % 2 ? 'RS256' : 'ES256';
      const lifetime = 120 + i;
      // cached: the resource as it was
      expect((await tokenRequest(m, c.id, c.secret, api.identifier)).token).toBeDefined();
      await m
        .call('patch', `/api/v1/resources/${api.id}`)
        .send({ resource_metadata: { signing_algorithm: alg, token_lifetime: lifetime } })
        .expect(200);
      const token = (await tokenRequest(m, c.id, c.secret, api.identifier)).token!;
      expect(decodeProtectedHeader(token).alg).toBe(alg);
      const { exp, iat } = decodeJwt(token);
      expect(exp! - iat!).toBe(lifetime);
    }
  });

  it('the feed cut: answers stay right while the LISTEN connection is gone, and it recovers', async () => {
    const c = await cacheClient(m, 'two', api.id, [api.scopes.read, api.scopes.write]);
    const token = (await tokenRequest(m, c.id, c.secret, api.identifier)).token!;
    expect((await m.tokenInfo(token)).scope).toBe('read write');
    const killed = await m.ds.rows<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE application_name = 'gatehouse-auth-changes' AND datname = current_database()`,
    );
    expect(killed).toEqual([{ ok: true }]);
    const [{ at: killedAt }] = await m.ds.rows<{ at: Date }>(`SELECT clock_timestamp() AS at`);
    // The change is not announced to the token server (its connection is gone; its row still looks live for up
    // to 3 s, but the backend it names has left pg_stat_activity, so identity does not wait for it); the token
    // server stopped trusting its cache when it lost the connection, so it reads the database.
    await m
      .call('delete', `/api/v2/clients/${c.id}/permissions`)
      .send({ permissions: [{ scopes: [api.scopes.write] }] })
      .expect(204);
    expect((await m.tokenInfo(token)).scope).toBe('read');
    expect(scopesOf((await tokenRequest(m, c.id, c.secret, api.identifier)).token!)).toEqual(['read']);

    // It reconnects by itself (a new LISTEN backend, a fresh heartbeat), and a change settles quickly again. Its
    // subscriber row is written again only once the new connection LISTENs (on connect, then by its heartbeats).
    await eventually(
      async () => {
        const [row] = await m.ds.rows<{ n: number; fresh: boolean }>(
          `SELECT (SELECT count(*)::int FROM pg_stat_activity
                    WHERE application_name = 'gatehouse-auth-changes' AND datname = current_database()) AS n,
                  EXISTS (SELECT 1 FROM cache_subscribers WHERE service = 'auth' AND heartbeat_at > $1) AS fresh`,
          [killedAt],
        );
        return row.n === 1 && row.fresh;
      },
      { timeoutMs: 10_000, what: 'the change feed reconnected' },
    );
    for (let i = 0; i < 5; i++) {
      expect((await m.tokenInfo(token)).scope).toBe('read');
      const started = Date.now();
      await m
        .call('post', `/api/v1/clients/${c.id}/permissions`)
        .send({ permissions: [{ resource_id: api.id, scopes: [api.scopes.write] }] })
        .expect(204);
      expect(Date.now() - started).toBeLessThan(2000);
      expect((await m.tokenInfo(token)).scope).toBe('read write');
      await m
        .call('delete', `/api/v2/clients/${c.id}/permissions`)
        .send({ permissions: [{ scopes: [api.scopes.write] }] })
        .expect(204);
    }
  });
});
