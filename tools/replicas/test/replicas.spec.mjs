// 3 auth, 2 identity and 2 tree replicas behind a real HAProxy, on one PostgreSQL and one Redis, started together:
// containers of docker/Dockerfile's image where a container engine answers (lib/runtime.mjs; the image is built once
// per content by tools/containers/image.mjs), otherwise the services from dist/ as processes (built by the test
// target's dependencies). What must be shared between replicas is shared. Each step is
// pinned to a replica through the test's pin header and HAProxy names the replica that answered (X-Served-By):
// migrations once; a sign-in walked over three auth replicas; a lockout counted by all; a rotated secret, revoked
// permissions, a blocked user and rotated signing keys seen by every auth and tree replica on the next request; one
// rate limit; one device-flow slow_down; an auth replica SIGKILLed under load. Skipped, saying so, only where no
// haproxy binary can be found or installed (apt-get, as root); the rate-limit and slow_down cases also without
// TEST_REDIS_URL.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Jar, actionOf, authorizationRequest, fieldOf, walk } from '../lib/browser.mjs';
import { ROOT, startCluster } from '../lib/cluster.mjs';
import { exampleHaproxyConfig } from '../lib/example.mjs';
import { SERVED_BY_HEADER, findHaproxy } from '../lib/haproxy.mjs';
import { replicaRuntime } from '../lib/runtime.mjs';

jest.setTimeout(180_000);

const haproxyBin = findHaproxy();
const redisUrl = process.env.TEST_REDIS_URL || process.env.REDIS_URL || '';
if (!haproxyBin)
  process.stderr.write(
    'replicas: SKIPPED, no haproxy here and it could not be installed (apt-get, as root)\n',
  );
const suite = haproxyBin ? describe : describe.skip;

const CALLBACK = 'https://rp.replicas.test/callback';
const PASSWORD = 'Replica-pass-1!';
// Small on purpose, for the rate-limit case; every other request class keeps a limit nobody reaches here.
const TOKEN_LIMIT = 30;
// One failed login per auth replica locks the account (per user and source address).
const LOCKOUT_THRESHOLD = 3;

/** @type {import('../lib/runtime.mjs').ReplicaRuntime} */
let runtime;
/** @type {import('../lib/cluster.mjs').Cluster} */
let cluster;
/** @type {pg.Client} */
let db;
/** @type {pg.Client | undefined} */
let distLock;
let mgmt = '';
/** The person signed in by the browser case, for the blocked-user case. */
let person = { userId: '', clientId: '', clientSecret: '', idToken: '' };

const basic = (id, secret) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** A management call through HAProxy (optionally pinned to one identity replica); the parsed answer. */
async function api(method, path, body, replica) {
  const res = await cluster.fetch('identity', path, {
    method,
    replica,
    headers: {
      authorization: `Bearer ${mgmt}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    servedBy: res.headers.get(SERVED_BY_HEADER),
  };
}

/** A client allowed every scope of the tree API: its id, secret and the tree resource's id and scope ids. */
async function treeClient(name) {
  const created = await api('POST', '/api/v1/clients', { client_name: name }, 'identity-1');
  expect(created.status).toBe(201);
  const resources = await api('GET', '/api/v1/resources?limit=50');
  const tree = resources.body.items.find((r) => r.resource_metadata.identifier_url === 'urn:gatehouse:tree');
  const scopes = await api('GET', `/api/v1/resources/${tree.id}/scopes?limit=50`);
  const scopeIds = scopes.body.items.map((s) => s.id);
  const id = created.body.id;
  const authorized = await api('POST', `/api/v1/clients/${id}/resources`, { resources: [tree.id] });
  expect({ status: authorized.status, body: authorized.body }).toEqual({ status: 204, body: undefined });
  const grant = { permissions: [{ resource_id: tree.id, scopes: scopeIds }] };
  expect((await api('POST', `/api/v1/clients/${id}/permissions`, grant)).status).toBe(204);
  return { id, secret: created.body.client_secret, resourceId: tree.id, scopeIds };
}

/** POST /token (client_credentials for the tree API) pinned to `replica`, or round robin without one. */
async function tokenRequest(id, secret, replica) {
  const res = await cluster.fetch('auth', '/token', {
    method: 'POST',
    replica,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(id, secret) },
    body: new URLSearchParams({ grant_type: 'client_credentials', audience: 'urn:gatehouse:tree' }),
  });
  const body = /** @type {any} */ (await res.json());
  return { status: res.status, body, servedBy: res.headers.get(SERVED_BY_HEADER) };
}

/**
 * POST /tokeninfo pinned to `replica`, as the client `id` (Basic): the answer's `active`, or the status.
 * @param {string} token
 * @param {string} id
 * @param {string} secret
 * @param {string} replica
 * @param {string} [hint] token_type_hint
 */
async function tokenInfo(token, id, secret, replica, hint) {
  const res = await cluster.fetch('auth', '/tokeninfo', {
    method: 'POST',
    replica,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(id, secret) },
    body: new URLSearchParams({ token, ...(hint ? { token_type_hint: hint } : {}) }),
  });
  const body = /** @type {any} */ (await res.json().catch(() => ({})));
  return res.status === 200 ? Boolean(body.active) : res.status;
}

/**
 * The rate limiter's gauges on one auth replica's /metrics: `up` (gatehouse_rate_limit_redis_up) and `local`
 * (gatehouse_rate_limit_local_total, decisions taken in memory although Redis is set).
 * @param {string} replica
 */
async function rateLimitGauges(replica) {
  const res = await cluster.fetch('auth', '/metrics', { replica });
  const text = await res.text();
  const read = (name) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  return { up: read('gatehouse_rate_limit_redis_up'), local: read('gatehouse_rate_limit_local_total') };
}

/**
 * Waits (at most 30 s) until `replica` counts its rate limits in Redis; its count of decisions taken in memory.
 * @param {string} replica
 */
async function sharedRateLimits(replica) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const g = await rateLimitGauges(replica);
    if (g.up === 1 && g.local !== undefined) return g.local;
    if (Date.now() > deadline)
      throw new Error(`${replica}: rate limits not shared through Redis after 30 s: ${JSON.stringify(g)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// The image, built when these sources have none yet (a first build takes minutes): its own, longer, timeout.
beforeAll(async () => {
  if (!haproxyBin) return;
  runtime = await replicaRuntime();
}, 30 * 60_000);

beforeAll(async () => {
  // No runtime: the hook above failed and said why.
  if (!haproxyBin || !runtime) return;
  // dist/ is rebuilt by other suites under this lock held exclusively (holdTestLock in @gatehouse/testing); replicas
  // that run from it (processes) hold it shared until they stop. Containers run the image's own copy.
  if (process.env.TEST_PG_URL && runtime.mode === 'process') {
    distLock = new pg.Client({
      connectionString: process.env.TEST_PG_URL,
      application_name: 'gatehouse-test-lock-dist',
    });
    distLock.on('error', () => undefined);
    await distLock.connect();
    await distLock.query('SELECT pg_advisory_lock_shared(hashtextextended($1, 0))', ['gatehouse:test:dist']);
  }
  if (!redisUrl)
    process.stderr.write('replicas: no TEST_REDIS_URL: rate limits are per replica, that case is skipped\n');
  const t0 = Date.now();
  cluster = await startCluster({
    haproxyBin,
    redisUrl,
    env: {
      RATE_LIMIT_POINTS: '1000000000',
      RATE_LIMIT_AUTH_FAILURES: '1000000000',
      RATE_LIMIT_OVERRIDES: `POST /token=${TOKEN_LIMIT}`,
      AUTH_LOCKOUT_THRESHOLD: String(LOCKOUT_THRESHOLD),
    },
    replicaEnv: { 'auth-1': { AUTH_KEY_REFRESH_SEC: '1' } },
    startReplica: runtime.startReplica,
    runEntry: runtime.runEntry,
  });
  process.stderr.write(
    `replicas: 7 replicas (${runtime.mode === 'container' ? `containers of ${runtime.image}` : 'processes'}) ` +
      `ready behind HAProxy in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
  );
  db = new pg.Client({ connectionString: cluster.dbUrl });
  await db.connect();
  mgmt = await cluster.token('urn:gatehouse:management');
}, 150_000);

afterAll(async () => {
  await db?.end().catch(() => undefined);
  await cluster?.close();
  await runtime?.close();
  await distLock?.end().catch(() => undefined);
});

describe('deploy/haproxy/haproxy.cfg', () => {
  it('is the configuration this test runs, without the pin rules, for the example hosts', () => {
    const file = readFileSync(path.join(ROOT, 'deploy/haproxy/haproxy.cfg'), 'utf8');
    expect(file).toBe(exampleHaproxyConfig());
  });
});

suite('3 auth, 2 identity, 2 tree replicas behind HAProxy', () => {
  it('migrations and the first-start seed ran once although every replica started at the same moment', async () => {
    const tables = await db.query(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_name LIKE '%migrations'`,
    );
    expect(tables.rowCount).toBeGreaterThan(0);
    for (const { table_name: t } of tables.rows) {
      const twice = await db.query(`SELECT name FROM ${t} GROUP BY name HAVING count(*) > 1`);
      expect({ table: t, twice: twice.rows }).toEqual({ table: t, twice: [] });
    }
    const seeded = await db.query('SELECT count(*)::int AS n FROM clients WHERE id = $1', [
      cluster.client.id,
    ]);
    expect(seeded.rows[0].n).toBe(1);
    expect((await db.query('SELECT count(*)::int AS n FROM instances WHERE is_default')).rows[0].n).toBe(1);
    for (const r of Object.values(cluster.replicas).flat()) expect(r.log()).not.toMatch(/"level":(50|60)/);
  });

  it('a person signs in with the login on auth-1, the consent on auth-2 and the code exchanged on auth-3', async () => {
    const email = `walker-${Date.now()}@replicas.test`;
    const user = await api(
      'POST',
      '/api/v1/users',
      { user_email: email, password: PASSWORD, user_email_verified: true },
      'identity-2',
    );
    expect(user.status).toBe(201);
    const app = await api(
      'POST',
      '/api/v1/clients',
      {
        client_name: `web-${Date.now()}`,
        client_metadata: { grant_types: ['authorization_code'], urls: { callbacks: [CALLBACK] } },
      },
      'identity-1',
    );
    expect(app.status).toBe(201);

    const origin = cluster.urls.auth;
    const jar = new Jar();
    const request = authorizationRequest(origin, app.body.id, CALLBACK);
    const loginPage = await walk({ jar, origin, url: request.url, replica: 'auth-1' });
    expect(loginPage.status).toBe(200);
    const consentPage = await walk({
      jar,
      origin,
      replica: 'auth-1',
      url: actionOf(loginPage.html, loginPage.url, /\/login$/),
      form: { csrf: fieldOf(loginPage.html, 'csrf') ?? '', username: email, password: PASSWORD },
    });
    expect(consentPage.status).toBe(200);
    // The interaction and its CSRF cookie were made on auth-1; auth-2 finds them in the shared store.
    const done = await walk({
      jar,
      origin,
      replica: 'auth-2',
      url: actionOf(consentPage.html, consentPage.url, /\/consent$/),
      form: { csrf: fieldOf(consentPage.html, 'csrf') ?? '', decision: 'allow' },
    });
    expect(done.url.startsWith(`${CALLBACK}?`)).toBe(true);
    const back = new URL(done.url).searchParams;
    expect(back.get('state')).toBe(request.state);
    const res = await cluster.fetch('auth', '/token', {
      method: 'POST',
      replica: 'auth-3',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(app.body.id, app.body.client_secret),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.get('code') ?? '',
        redirect_uri: CALLBACK,
        code_verifier: request.verifier,
      }),
    });
    const tokens = /** @type {any} */ (await res.json());
    expect(res.status).toBe(200);
    expect(res.headers.get(SERVED_BY_HEADER)).toBe('auth-3');
    const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1], 'base64url').toString());
    expect(claims.nonce).toBe(request.nonce);
    expect(claims.iss).toBe(origin);
    expect(claims.sub).toBe(user.body.id);
    // Every hop of each step was answered by the replica it was pinned to.
    expect(new Set(loginPage.servedBy)).toEqual(new Set(['auth-1']));
    expect(new Set(consentPage.servedBy)).toEqual(new Set(['auth-1']));
    expect(new Set(done.servedBy)).toEqual(new Set(['auth-2']));
    person = {
      userId: user.body.id,
      clientId: app.body.id,
      clientSecret: app.body.client_secret,
      idToken: tokens.id_token,
    };

    // A code is used once, whichever replica is asked again.
    const again = await cluster.fetch('auth', '/token', {
      method: 'POST',
      replica: 'auth-1',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(app.body.id, app.body.client_secret),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.get('code') ?? '',
        redirect_uri: CALLBACK,
        code_verifier: request.verifier,
      }),
    });
    expect(again.status).toBe(400);
    await again.arrayBuffer();
  });

  it('a change made through either identity replica is seen by every auth and tree replica at once', async () => {
    const c = await treeClient(`rotating-${Date.now()}`);
    // Every auth replica has the client (with its decrypted secret) in its cache, every tree replica the token.
    for (const r of cluster.replicas.auth)
      expect((await tokenRequest(c.id, c.secret, r.name)).status).toBe(200);
    const token = (await tokenRequest(c.id, c.secret, 'auth-1')).body.access_token;
    const trees = (replica) =>
      cluster.fetch('tree', '/api/v1/trees?limit=1', {
        replica,
        headers: { authorization: `Bearer ${token}` },
      });
    for (const r of cluster.replicas.tree) {
      const res = await trees(r.name);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    }

    // Rotated secret, through identity-2: the old one is refused and the new one taken by every auth replica.
    const rotated = await api('POST', `/api/v1/clients/${c.id}/rotate-secret`, undefined, 'identity-2');
    expect(rotated.status).toBe(200);
    expect(rotated.servedBy).toBe('identity-2');
    const fresh = rotated.body.client_secret;
    expect(fresh).not.toBe(c.secret);
    for (const r of cluster.replicas.auth) {
      const old = await tokenRequest(c.id, c.secret, r.name);
      expect({ replica: r.name, status: old.status }).toEqual({ replica: r.name, status: 401 });
      const now = await tokenRequest(c.id, fresh, r.name);
      expect({ replica: r.name, status: now.status }).toEqual({ replica: r.name, status: 200 });
    }

    // Revoked permissions, through identity-1: no auth replica issues the scopes, no tree replica accepts the
    // token that carried them.
    const revoke = await cluster.fetch('identity', `/api/v1/clients/${c.id}/permissions`, {
      method: 'DELETE',
      replica: 'identity-1',
      headers: { authorization: `Bearer ${mgmt}`, 'content-type': 'application/json' },
      body: JSON.stringify({ permissions: [{ resource_id: c.resourceId, scopes: c.scopeIds }] }),
    });
    await revoke.arrayBuffer();
    expect(revoke.status).toBe(204);
    for (const r of cluster.replicas.tree) {
      const res = await trees(r.name);
      await res.arrayBuffer();
      const refused = res.status === 401 || res.status === 403;
      expect({ [r.name]: refused || res.status }).toEqual({ [r.name]: true });
    }
    for (const r of cluster.replicas.auth) {
      const t = await tokenRequest(c.id, fresh, r.name);
      const scope = t.status === 200 ? String(t.body.scope ?? '') : '';
      expect({ replica: r.name, scope }).toEqual({ replica: r.name, scope: '' });
    }
  });

  it('a lockout counts failed logins on every auth replica: locked on all after failures spread over three', async () => {
    const email = `guessed-${Date.now()}@replicas.test`;
    const user = await api('POST', '/api/v1/users', {
      user_email: email,
      password: PASSWORD,
      user_email_verified: true,
    });
    expect(user.status).toBe(201);
    const origin = cluster.urls.auth;
    const jar = new Jar();
    const request = authorizationRequest(origin, person.clientId, CALLBACK);
    let page = await walk({ jar, origin, url: request.url, replica: 'auth-1' });
    expect(page.status).toBe(200);
    const login = (password, replica) =>
      walk({
        jar,
        origin,
        replica,
        url: actionOf(page.html, page.url, /\/login$/),
        form: { csrf: fieldOf(page.html, 'csrf') ?? '', username: email, password },
      });
    // One record of the failures, in PostgreSQL, counted by all three: the failure that reaches the threshold
    // locks the account and starts the count again.
    const record = async () =>
      (
        await db.query(
          `SELECT failed_count, coalesce(locked_until > now(), false) AS locked FROM login_failures WHERE user_id = $1`,
          [user.body.id],
        )
      ).rows;
    // LOCKOUT_THRESHOLD wrong passwords, one per replica
    for (const [i, r] of cluster.replicas.auth.entries()) {
      page = await login('wrong-password', r.name);
      expect({ [r.name]: page.html.includes('/consent') }).toEqual({ [r.name]: false });
      expect(page.servedBy.at(-1)).toBe(r.name);
      const locked = i + 1 === LOCKOUT_THRESHOLD;
      expect({ [r.name]: await record() }).toEqual({
        [r.name]: [{ failed_count: locked ? 0 : i + 1, locked }],
      });
    }
    // the right password is refused now, whichever replica is asked
    for (const r of cluster.replicas.auth) {
      page = await login(PASSWORD, r.name);
      expect({ [r.name]: page.html.includes('/consent') }).toEqual({ [r.name]: false });
    }
    expect(await record()).toEqual([{ failed_count: 0, locked: true }]);
  });

  it('a user blocked through identity-2 is refused by every auth replica on the next request', async () => {
    // The ID token of the person's sign-in: active while the user exists and is not blocked.
    expect(person.idToken).not.toBe('');
    const ask = (replica) =>
      tokenInfo(person.idToken, person.clientId, person.clientSecret, replica, 'id_token');
    for (const r of cluster.replicas.auth)
      expect({ [r.name]: await ask(r.name) }).toEqual({ [r.name]: true });
    const blocked = await api('POST', `/api/v1/users/${person.userId}/block`, undefined, 'identity-2');
    expect(blocked.status).toBeLessThan(300);
    for (const r of cluster.replicas.auth)
      expect({ [r.name]: await ask(r.name) }).toEqual({ [r.name]: false });
  });

  it('signing keys rotated: a token signed with the new key is accepted by every auth and tree replica', async () => {
    const auth1 = cluster.replicas.auth[0];
    const kidOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()).kid;
    const before = kidOf(await cluster.token('urn:gatehouse:tree', { replica: auth1.name }));
    await cluster.rotateKeys();
    // auth-1 checks for a rotation every second (AUTH_KEY_REFRESH_SEC, below); the others every minute, so they
    // meet the new key first in a token presented to them.
    let token = '';
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      token = await cluster.token('urn:gatehouse:tree', { replica: auth1.name });
      if (kidOf(token) !== before) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(kidOf(token)).not.toBe(before);
    const { id, secret } = cluster.client;
    for (const r of cluster.replicas.auth)
      expect({ [r.name]: await tokenInfo(token, id, secret, r.name) }).toEqual({ [r.name]: true });
    for (const r of cluster.replicas.tree) {
      const res = await cluster.fetch('tree', '/api/v1/trees?limit=1', {
        replica: r.name,
        headers: { authorization: `Bearer ${token}` },
      });
      await res.arrayBuffer();
      expect({ [r.name]: res.status }).toEqual({ [r.name]: 200 });
    }
  });

  (redisUrl ? it : it.skip)(
    'a client gets the same rate limit from 3 auth replicas as from one',
    async () => {
      const spread = await treeClient(`limited-rr-${Date.now()}`);
      const pinned = await treeClient(`limited-one-${Date.now()}`);
      const count = async (client, replica) => {
        const statuses = [];
        const servedBy = new Set();
        for (let i = 0; i < TOKEN_LIMIT + 12; i++) {
          const r = await tokenRequest(client.id, client.secret, replica);
          statuses.push(r.status);
          servedBy.add(r.servedBy);
        }
        return {
          ok: statuses.filter((s) => s === 200).length,
          limited: statuses.filter((s) => s === 429).length,
          servedBy,
        };
      };
      // A replica started on a busy host may have counted in memory for a moment until its Redis connection was
      // ready (it logs that, and that it answers again): the case starts once every replica counts in Redis.
      const before = {};
      for (const r of cluster.replicas.auth) before[r.name] = await sharedRateLimits(r.name);
      const roundRobin = await count(spread);
      const one = await count(pinned, 'auth-2');
      expect(roundRobin.servedBy).toEqual(new Set(['auth-1', 'auth-2', 'auth-3']));
      expect(one.servedBy).toEqual(new Set(['auth-2']));
      expect(one.ok).toBe(TOKEN_LIMIT);
      // No decision of the case was taken in a replica's memory (gatehouse_rate_limit_local_total did not move),
      // and no replica reported Redis failing under a request.
      for (const r of cluster.replicas.auth)
        expect({ [r.name]: (await rateLimitGauges(r.name)).local }).toEqual({ [r.name]: before[r.name] });
      const redisTrouble = cluster.replicas.auth
        .flatMap((r) => r.log().split('\n'))
        .filter((l) => /Redis|Rate limiter/.test(l))
        .filter((l) => !/unavailable at start|counting shared again/.test(l));
      expect(redisTrouble).toEqual([]);
      // The quota is charged atomically in Redis before a request is handled: exactly the limit, on whichever replica
      // each request lands (without Redis it would be 3 x the limit).
      expect(roundRobin.ok).toBe(TOKEN_LIMIT);
      expect(roundRobin.ok + roundRobin.limited).toBe(TOKEN_LIMIT + 12);
    },
  );

  (redisUrl ? it : it.skip)(
    'a device code polled at auth-1, then at once at auth-2: slow_down from auth-2',
    async () => {
      const tv = await api(
        'POST',
        '/api/v1/clients',
        { client_name: `tv-${Date.now()}`, client_metadata: { grant_types: ['device_code'] } },
        'identity-1',
      );
      expect(tv.status).toBe(201);
      const post = async (path, params, replica) => {
        const res = await cluster.fetch('auth', path, {
          method: 'POST',
          replica,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: basic(tv.body.id, tv.body.client_secret),
          },
          body: new URLSearchParams(params),
        });
        const body = /** @type {any} */ (await res.json());
        return { status: res.status, error: body.error, body, servedBy: res.headers.get(SERVED_BY_HEADER) };
      };
      const started = await post('/device/code', { scope: 'openid' }, 'auth-1');
      expect(started.status).toBe(200);
      const devicePoll = {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: started.body.device_code,
      };
      const first = await post('/token', devicePoll, 'auth-1');
      const second = await post('/token', devicePoll, 'auth-2');
      expect([first.status, first.error, first.servedBy]).toEqual([400, 'authorization_pending', 'auth-1']);
      expect([second.status, second.error, second.servedBy]).toEqual([400, 'slow_down', 'auth-2']);
    },
  );

  it('SIGKILL of one auth replica under load: no committed write lost, no management write stalled', async () => {
    const run = Date.now().toString(36);
    const treeToken = await cluster.token('urn:gatehouse:tree');
    /** @type {{ kind: string; status: number; ms: number; name?: string; at: number }[]} */
    const outcomes = [];
    let stop = false;
    let seq = 0;
    const killAt = Date.now() + 2500;
    const writer = async () => {
      while (!stop) {
        const name = `load-${run}-${++seq}`;
        const t0 = performance.now();
        const res = await cluster
          .fetch('identity', '/api/v1/users', {
            method: 'POST',
            headers: { authorization: `Bearer ${mgmt}`, 'content-type': 'application/json' },
            body: JSON.stringify({ user_email: `${name}@replicas.test`, user_name: name }),
          })
          .catch(() => undefined);
        await res?.arrayBuffer();
        outcomes.push({
          kind: 'user',
          status: res?.status ?? 0,
          ms: performance.now() - t0,
          name,
          at: Date.now(),
        });
      }
    };
    const checker = async () => {
      while (!stop) {
        const t0 = performance.now();
        const res = await cluster
          .fetch('auth', '/tokeninfo', {
            method: 'POST',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              authorization: basic(cluster.client.id, cluster.client.secret),
            },
            body: new URLSearchParams({ token: treeToken }),
          })
          .catch(() => undefined);
        await res?.arrayBuffer();
        outcomes.push({
          kind: 'tokeninfo',
          status: res?.status ?? 0,
          ms: performance.now() - t0,
          at: Date.now(),
        });
      }
    };
    const victim = cluster.replicas.auth[1];
    const killer = (async () => {
      await new Promise((r) => setTimeout(r, killAt - Date.now()));
      victim.kill('SIGKILL');
      await victim.exited;
      await new Promise((r) => setTimeout(r, 4000));
      stop = true;
    })();
    await Promise.all([writer(), writer(), writer(), checker(), checker(), killer]);

    const writes = outcomes.filter((o) => o.kind === 'user');
    const afterKill = writes.filter((o) => o.at > killAt);
    expect(afterKill.length).toBeGreaterThan(5);
    // Every write answered: none refused, none waiting out the settle timeout (3 s) for the dead replica (the
    // bound leaves room for a loaded CI machine; a wait for the dead one takes 3 s or more).
    expect(writes.filter((o) => o.status !== 201)).toEqual([]);
    expect(Math.max(...writes.map((o) => o.ms))).toBeLessThan(2500);
    // Every committed write is there, once.
    const names = writes.map((o) => o.name);
    const found = await db.query('SELECT user_name FROM users WHERE user_name = ANY($1)', [names]);
    expect(found.rowCount).toBe(names.length);
    // The requests the dead replica held were retried elsewhere or answered by the others.
    const checks = outcomes.filter((o) => o.kind === 'tokeninfo');
    expect(checks.filter((o) => o.status !== 200).length).toBeLessThanOrEqual(2);
    // The dead replica's subscription is gone; the two live ones remain.
    const subs = await db.query('SELECT count(*)::int AS n FROM cache_subscribers');
    expect(subs.rows[0].n).toBe(2);
  });
});
