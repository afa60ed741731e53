#!/usr/bin/env node
// Change feed benchmark: the latency of a management write as its caller sees it, with 0, 1 and 3 token servers
// subscribed to the identity change feed. After every mutating request the identity service waits until each live
// subscriber has acknowledged a settle marker sent after the change (libs/shared/changes settle.ts), so that the
// change counts at every token server from its very next request. This measures what that wait costs and checks
// that it holds: after each write that changes what the token servers cache (a client's grant types), the next
// token request to every token server must be answered by the new state (a violation otherwise; the run fails on
// any).
//
//   npx nx run-many -t build -p auth,identity && node tools/bench/feed/run.mjs
//
// Set-up: a throw-away database on the machine's PostgreSQL; the built apps/identity and apps/auth (dist/). One
// token server with its identity-row cache off (AUTH_STATE_CACHE_MAX=0: no cache, so no subscriber) validates the
// management token for identity and answers the checks of the 0-subscriber phase; then 1, then 3 token servers with
// the cache on (the default) are started, each on its own port, and the run waits until all are subscribed
// (a live row in cache_subscribers) before measuring. Per phase:
//   - settle round trip: the protocol alone, from this process (NOTIFY a settle marker, wait for every ack);
//   - PATCH description, sequential / concurrent: `PATCH /api/v1/clients/:id` of `client_description`;
//   - PATCH grant types, sequential / concurrent, checked: `client_metadata.grant_types` toggled between
//     `client_credentials` and `authorization_code` (a client without callbacks: no grant at all), then one
//     client_credentials token request to each token server of the phase: 200 when on, refused when off. That
//     request also puts the client's row back into each token server's cache, so every write drops a cached row.
// Concurrent: BENCH_CONCURRENCY callers, each writing its own client (no row lock shared between them).
//
// Variables: BENCH_PG_URL (admin URL of a PostgreSQL where a throw-away database may be created; default
// TEST_PG_URL, DATABASE_URL, postgres://postgres@127.0.0.1:5432/postgres), BENCH_WRITES (writes per scenario and
// phase, default 1000), BENCH_CONCURRENCY (default 8), BENCH_SUBSCRIBERS (phases, default 0,1,3), BENCH_SERVER_CPUS
// (taskset CPU list of apps/identity, default empty: no pinning), BENCH_NODE_ARGS (extra node flags of
// apps/identity, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_ONLY (scenarios whose name contains one of these
// |-separated strings, e.g. `settle`), BENCH_JSON (write the results there), BENCH_KEEP=1
// (keep the database), BENCH_ROOT (the checkout whose dist/ is measured, default this one).
//
// Target: p99 of a management write under 20 ms with 3 token servers subscribed; 0 violations.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { freePort, processGroup, tasksetAvailable, withDb } from '../lib/processes.mjs';
import { adminPgUrl, benchRoot, benchServiceEnv, builtFiles } from '../lib/setup.mjs';
import { percentile } from '../lib/stats.mjs';

const root = benchRoot;
const { identity: identityMain, auth: authMain } = builtFiles(['auth', 'identity']);

const env = process.env;
const adminUrl = adminPgUrl();
const WRITES = Number(env.BENCH_WRITES || 1000);
const CONCURRENCY = Number(env.BENCH_CONCURRENCY || 8);
const PHASES = (env.BENCH_SUBSCRIBERS ?? '0,1,3')
  .split(',')
  .map((s) => Number(s.trim()))
  .sort((a, b) => a - b);
const cpus = env.BENCH_SERVER_CPUS ?? '';
const only = env.BENCH_ONLY ? env.BENCH_ONLY.split('|') : undefined;
const selected = (name) => !only || only.some((o) => name.includes(o));
const hasTaskset = cpus !== '' && tasksetAvailable();
/** The identity service's channels (libs/shared/changes channel.ts). */
const CHANGES_CHANNEL = 'gatehouse_identity_changes';
const ACKS_CHANNEL = 'gatehouse_cache_acks';
const GRANTS_ON = ['client_credentials'];
// Without callbacks the token server drops authorization_code: the client has no grant type at all.
const GRANTS_OFF = ['authorization_code'];

const log = (...a) => console.error('[bench]', ...a);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/**
 * Requests over node:http with kept-alive connections (undici's fetch costs about 0.5 ms a request on this VM by
 * itself: the client's, not the service's; see tools/bench/tree).
 * @param {string} base
 * @param {number} [maxSockets]
 */
function httpClient(base, maxSockets = 1) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  /**
   * @param {string} method
   * @param {string} p
   * @param {{ body?: string; headers?: Record<string, string> }} [opts]
   * @returns {Promise<{ status: number; text: string }>}
   */
  const request = (method, p, { body, headers = {} } = {}) =>
    new Promise((resolve, reject) => {
      const h =
        body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
      const req = http.request(`${base}${p}`, { method, agent, headers: h }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  return { request, close: () => agent.destroy() };
}

/** @param {number[]} xs @param {number} wallMs */
function summary(xs, wallMs) {
  const s = [...xs].sort((a, b) => a - b);
  const r2 = (x) => Math.round(x * 100) / 100;
  return {
    n: s.length,
    p50: r2(percentile(s, 50)),
    p95: r2(percentile(s, 95)),
    p99: r2(percentile(s, 99)),
    max: r2(s[s.length - 1]),
    mean: r2(s.reduce((a, b) => a + b, 0) / s.length),
    perSec: Math.round((s.length / wallMs) * 1000),
  };
}

const procs = processGroup({ cwd: root, env });
const dbName = `gh_bench_feed_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const dbUrl = withDb(adminUrl, dbName);
const dirs = [];
const tmpDir = (name) => {
  const d = mkdtempSync(path.join(os.tmpdir(), `gh-bench-feed-${name}-`));
  dirs.push(d);
  return d;
};

const startedAt = new Date();
const loadStart = loadavg();
const results = [];
let settleTimeouts = 0;
let failure;
/** @type {pg.Client | undefined} */
let db;
try {
  const shared = benchServiceEnv({ DATABASE_URL: dbUrl });
  /** A token server; `cache` false: AUTH_STATE_CACHE_MAX=0, no cache and no subscription to the feed. */
  const startAuth = async (name, cache) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    await procs.start(name, [authMain], {
      childEnv: {
        ...shared,
        DATA_DIR: tmpDir(name.replace(/\W/g, '')),
        AUTH_PORT: String(port),
        ISSUER: url,
        ...(cache ? {} : { AUTH_STATE_CACHE_MAX: '0' }),
      },
      ready: async () => (await fetch(`${url}/readyz`)).status === 200,
      timeoutMs: 90_000,
    });
    return { name, url, http: httpClient(url, 64) };
  };
  const plain = await startAuth('apps/auth (no cache)', false);

  const idPort = await freePort();
  const idUrl = `http://127.0.0.1:${idPort}`;
  const identity = await procs.start(
    'apps/identity',
    [...(env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), identityMain],
    {
      childEnv: {
        ...shared,
        DATA_DIR: tmpDir('identity'),
        IDENTITY_PORT: String(idPort),
        AUTH_URL: plain.url,
        BEARER_CACHE_TTL_SEC: '3600',
      },
      ready: async () => (await fetch(`${idUrl}/readyz`)).status === 200,
      cpus: hasTaskset ? cpus : undefined,
      timeoutMs: 90_000,
    },
  );
  // A settle that gave up waiting (3 s) is logged by identity; every one is counted.
  identity.stdout?.on('data', (d) => {
    settleTimeouts += (String(d).match(/cache settle: no acknowledgement/g) ?? []).length;
  });

  const basic = (id, secret) =>
    `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  const mgmt = await plain.http.request('POST', '/token', {
    headers: {
      authorization: basic(shared.BOOTSTRAP_CLIENT_ID, shared.BOOTSTRAP_CLIENT_SECRET),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      audience: 'urn:gatehouse:management',
    }).toString(),
  });
  if (mgmt.status !== 200) throw new Error(`management token: ${mgmt.status} ${mgmt.text}`);
  const H = {
    authorization: `Bearer ${JSON.parse(mgmt.text).access_token}`,
    'content-type': 'application/json',
  };
  const setup = httpClient(idUrl, 4);
  const call = async (method, p, body, expect) => {
    const r = await setup.request(method, p, {
      headers: H,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (r.status !== expect) throw new Error(`${method} ${p}: ${r.status} ${r.text}`);
    return r.text ? JSON.parse(r.text) : undefined;
  };

  // A resource with one scope, and one client_credentials client per concurrent caller, authorized and granted it.
  const identifier = `https://bench-feed-${randomBytes(3).toString('hex')}.test`;
  const api = await call(
    'POST',
    '/api/v1/resources',
    { resource_type: 'api', resource_name: 'bench-feed', resource_metadata: { identifier_url: identifier } },
    201,
  );
  const scope = await call('POST', `/api/v1/resources/${api.id}/scopes`, { scope_name: 'read' }, 201);
  const clients = [];
  for (let i = 0; i < Math.max(1, CONCURRENCY); i++) {
    const c = await call(
      'POST',
      '/api/v2/clients',
      { client_name: `bench-feed-${i}`, client_metadata: { grant_types: GRANTS_ON } },
      201,
    );
    await call('POST', `/api/v1/clients/${c.id}/resources`, { resources: [api.id] }, 204);
    await call(
      'POST',
      `/api/v1/clients/${c.id}/permissions`,
      { permissions: [{ resource_id: api.id, scopes: [scope.id] }] },
      204,
    );
    clients.push({ id: c.id, secret: c.client_secret, on: true, n: 0 });
  }
  setup.close();
  const tokenBody = new URLSearchParams({
    grant_type: 'client_credentials',
    resource: identifier,
  }).toString();
  const tokenRequest = (server, client) =>
    server.http.request('POST', '/token', {
      headers: {
        authorization: basic(client.id, client.secret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: tokenBody,
    });

  db = new pg.Client({ connectionString: dbUrl });
  db.on('error', () => undefined); // the database is dropped with FORCE at the end
  await db.connect();
  const liveSubscribers = async () =>
    (
      await db.query(
        `SELECT count(*)::int AS n FROM cache_subscribers
          WHERE heartbeat_at > clock_timestamp() - interval '3 seconds'`,
      )
    ).rows[0].n;
  // The settle protocol alone, from here: a marker on the change channel, then every live subscriber's ack.
  const acks = new pg.Client({ connectionString: dbUrl });
  acks.on('error', () => undefined);
  await acks.connect();
  await acks.query(`LISTEN ${ACKS_CHANNEL}`);
  /** @type {Map<string, () => void>} */
  const waitingAcks = new Map();
  acks.on('notification', (n) => {
    const payload = n.payload ?? '';
    waitingAcks.get(payload.slice(0, payload.lastIndexOf(':')))?.();
  });
  const settleOnce = (subscribers) =>
    new Promise((resolve, reject) => {
      const token = randomUUID();
      let left = subscribers;
      const t0 = performance.now();
      const timer = setTimeout(() => {
        waitingAcks.delete(token);
        reject(new Error(`settle round trip: ${left} of ${subscribers} acks missing after 3 s`));
      }, 3000);
      waitingAcks.set(token, () => {
        if (--left > 0) return;
        clearTimeout(timer);
        waitingAcks.delete(token);
        resolve(performance.now() - t0);
      });
      acks.query(`SELECT pg_notify($1, $2)`, [CHANGES_CHANNEL, `sync:${token}`]).catch(reject);
    });

  /**
   * `count` writes spread over `callers` callers (caller i writes clients[i]); `check`: toggle the grant types and
   * ask each of `servers` for a token after every write. Latency: request sent to answer read, as the caller sees.
   */
  const run = async ({ callers, count, check, servers }) => {
    const latencies = [];
    let violations = 0;
    let errors = 0;
    const per = Math.ceil(count / callers);
    const t0 = performance.now();
    await Promise.all(
      clients.slice(0, callers).map(async (client) => {
        const identityHttp = httpClient(idUrl, 1);
        for (let i = 0; i < per; i++) {
          client.n++;
          const next = check ? !client.on : client.on;
          const body = JSON.stringify(
            check
              ? { client_metadata: { grant_types: next ? GRANTS_ON : GRANTS_OFF } }
              : { client_description: `Written by the feed benchmark (${client.n})` },
          );
          const w0 = performance.now();
          const r = await identityHttp.request('PATCH', `/api/v1/clients/${client.id}`, { headers: H, body });
          latencies.push(performance.now() - w0);
          if (r.status !== 200) {
            errors++;
            if (errors <= 3) log(`PATCH answered ${r.status}: ${r.text.slice(0, 300)}`);
            continue;
          }
          client.on = next;
          if (!check) continue;
          for (const s of servers) {
            const t = await tokenRequest(s, client);
            if (t.status >= 500) errors++;
            else if ((t.status === 200) !== client.on) {
              violations++;
              if (violations <= 5) {
                log(`VIOLATION at ${s.name}: grants ${client.on ? 'on' : 'off'}, token answered ${t.status}`);
              }
            }
          }
        }
        identityHttp.close();
      }),
    );
    return { ...summary(latencies, performance.now() - t0), violations, errors };
  };

  const servers = [];
  for (const n of PHASES) {
    while (servers.length < n) servers.push(await startAuth(`apps/auth #${servers.length + 1}`, true));
    const deadline = Date.now() + 15_000;
    while ((await liveSubscribers()) !== n) {
      if (Date.now() > deadline)
        throw new Error(`expected ${n} live cache subscribers, see ${await liveSubscribers()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const checked = n === 0 ? [plain] : servers.slice(0, n);
    const phaseLoad = loadavg();
    log(`${n} subscriber(s): load ${phaseLoad}`);
    // Warm-up: the JIT, pools, every token server's cache of every client.
    for (const c of clients) for (const s of checked) await tokenRequest(s, c);
    await run({ callers: 1, count: 50, check: false, servers: checked });
    await run({ callers: CONCURRENCY, count: 100, check: true, servers: checked });
    const scenarios = [];
    const settleName = 'settle round trip (NOTIFY marker, every ack)';
    if (n > 0 && selected(settleName)) {
      const xs = [];
      for (let i = 0; i < 50; i++) await settleOnce(n); // warm-up
      const t0 = performance.now();
      for (let i = 0; i < WRITES; i++) xs.push(await settleOnce(n));
      scenarios.push({
        name: settleName,
        ...summary(xs, performance.now() - t0),
        violations: 0,
        errors: 0,
        write: false,
      });
    }
    const cases = [
      { name: 'PATCH description, sequential', callers: 1, check: false },
      { name: 'PATCH grant types, sequential, checked', callers: 1, check: true },
      { name: `PATCH description, ${CONCURRENCY} concurrent`, callers: CONCURRENCY, check: false },
      { name: `PATCH grant types, ${CONCURRENCY} concurrent, checked`, callers: CONCURRENCY, check: true },
    ];
    for (const { name, callers, check } of cases) {
      if (!selected(name)) continue;
      const r = await run({ callers, check, count: WRITES, servers: checked });
      scenarios.push({ name, ...r, write: true });
      log(
        `  ${name}: p50 ${r.p50} p95 ${r.p95} p99 ${r.p99} max ${r.max} ms, ${r.perSec}/s, ` +
          `violations ${r.violations}, errors ${r.errors}`,
      );
    }
    for (const s of scenarios) results.push({ subscribers: n, load: phaseLoad, ...s });
  }
  await acks.end();
} catch (err) {
  failure = err;
} finally {
  await db?.end().catch(() => undefined);
  await procs.stopAll();
  if (env.BENCH_KEEP === '1') log(`kept the database ${dbName}`);
  else await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
  const pgVersion = (await admin.query('SHOW server_version')).rows[0].server_version;
  await admin.end();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (failure) {
    console.error(failure);
    process.exit(1);
  }

  const loadEnd = loadavg();
  const machine =
    `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} vCPU, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
    `Node ${process.versions.node}, PostgreSQL ${pgVersion}; apps/identity ${hasTaskset ? `pinned to CPU ${cpus}` : 'not pinned'}; ` +
    `${WRITES} writes per scenario, ${CONCURRENCY} concurrent callers; load average ${loadStart} at the start, ${loadEnd} at the end`;
  const target = (r) => r.write && r.subscribers === 3;
  const met = (r) => r.p99 < 20 && r.violations === 0 && r.errors === 0;
  const lines = [
    '| token servers subscribed | scenario | writes | p50 ms | p95 ms | p99 ms | max ms | writes/s | violations | errors | target |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...results.map(
      (r) =>
        `| ${r.subscribers} | ${r.name} | ${r.n} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} | ${r.perSec} | ` +
        `${r.violations} | ${r.errors} | ${target(r) ? (met(r) ? 'met' : 'MISSED') : '-'} |`,
    ),
  ];
  console.log(`\n${startedAt.toISOString()}; ${machine}; settles that timed out: ${settleTimeouts}\n`);
  console.log(lines.join('\n'));
  if (env.BENCH_JSON) {
    writeFileSync(
      env.BENCH_JSON,
      JSON.stringify({ machine, date: startedAt.toISOString(), settleTimeouts, results }, null, 2),
    );
  }
  if (results.some((r) => r.violations > 0) || settleTimeouts > 0) process.exitCode = 1;
  else if (results.some((r) => target(r) && !met(r))) process.exitCode = 1;
}
