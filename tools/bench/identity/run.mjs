#!/usr/bin/env node
// Management API benchmark: Get clients over 100,000 clients (100 tenants) with a `q` filter, a sort and the total
// count, in both presentations, with the PostgreSQL plans of the statements the service runs.
//
//   npx nx run-many -t build -p auth identity && node tools/bench/identity/run.mjs
//
// Variables: BENCH_PG_URL (admin URL of a PostgreSQL where a throw-away database may be created; default
// TEST_PG_URL, DATABASE_URL, postgres://postgres@127.0.0.1:5432/postgres), BENCH_CLIENTS (default 100000),
// BENCH_DURATION (s, default 10), BENCH_ROUNDS (default 3; the median is reported), BENCH_CONNECTIONS (default 10), BENCH_SERVER_CPUS (taskset CPU list of the
// identity service, default 0: one core; empty: no pinning), BENCH_LOAD_CPUS (taskset CPU list of the load side:
// this process with autocannon, the token server and PostgreSQL's backends serving the benchmark database; default:
// the other CPUs when the service is on CPU 0, empty: no pinning), BENCH_ONLY (scenarios whose name contains one of these |-separated strings),
// BENCH_JSON (write the results there), BENCH_KEEP=1 (keep the database, for a closer look), BENCH_NODE_ARGS (extra node flags of the identity service, e.g.
// `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_ROOT (the checkout whose dist/ is measured, default this one:
// bench:compare points it at another build).
//
// Targets: the filtered, sorted, counted list at >= 1,000 requests/s on one core with p99 < 50 ms, its
// statements served by an index. The run fails (exit 1) when a target is missed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  autocannonSummary,
  backendPids,
  cpuMs,
  freePort,
  pinProcesses,
  processGroup,
  tasksetAvailable,
  withDb,
} from '../lib/processes.mjs';
import {
  adminPgUrl,
  benchRoot,
  benchServiceEnv,
  builtFiles,
  clientCredentialsToken,
  loadCpusFor,
} from '../lib/setup.mjs';
import { medianBy } from '../lib/stats.mjs';

const root = benchRoot;
const { identity: identityMain, auth: authMain } = builtFiles(['auth', 'identity']);

const env = process.env;
const adminUrl = adminPgUrl();
const clientCount = Number(env.BENCH_CLIENTS || 100_000);
const duration = Number(env.BENCH_DURATION || 10);
const connections = Number(env.BENCH_CONNECTIONS || 10);
const rounds = Number(env.BENCH_ROUNDS || 3);
const cpus = env.BENCH_SERVER_CPUS ?? '0';
// Where the load side runs (autocannon in this process, PostgreSQL's backends of the benchmark database, the token
// server): by default the CPUs the service is not pinned to, so the service has its core to itself.
const loadCpus = loadCpusFor(cpus);
const only = env.BENCH_ONLY ? env.BENCH_ONLY.split('|') : undefined;
const TENANTS = 100;
const TYPES = ['spa', 'native', 'regular_web', 'non_interactive'];
const hasTaskset = cpus !== '' && tasksetAvailable();

const procs = processGroup({ cwd: root, env });
const start = (name, main, childEnv, ready, pin, nodeArgs = []) =>
  procs.start(name, [...nodeArgs, main], {
    childEnv,
    ready,
    cpus: pin ? cpus : undefined,
    timeoutMs: 90_000,
  });
const stopAll = procs.stopAll;

/** CPU ms of each of these processes that can be read (a backend that has exited cannot). */
function cpuMsOf(pids) {
  return new Map(pids.map((pid) => [pid, cpuMs(pid)]).filter(([, t]) => t !== undefined));
}

/** CPU ms the processes read at both times used in between; undefined when none was (another machine). */
function cpuMsBetween(before, after) {
  let sum;
  for (const [pid, t0] of before) {
    const t1 = after.get(pid);
    if (t1 !== undefined) sum = (sum ?? 0) + (t1 - t0);
  }
  return sum;
}

const pinToLoadCpus = (pids) => pinProcesses(pids, hasTaskset ? loadCpus : '');

/**
 * @param {string} name
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {number} pid
 * @param {{ method?: 'GET' | 'PATCH'; body?: string }} [write]
 */
function measure(name, url, headers, pid, { method = 'GET', body } = {}) {
  return new Promise((resolve, reject) => {
    /** @type {import('autocannon').Options} */
    const opts = { url, method, connections, pipelining: 1, headers, body };
    // Warm-up (JIT, pools, the bearer cache), then the measured run.
    autocannon({ ...opts, duration: 2 }, async (err) => {
      if (err) return reject(err);
      const pgPids = await backendPids(admin, [dbName]);
      pinToLoadCpus(pgPids);
      const cpu0 = cpuMs(pid);
      const pg0 = cpuMsOf(pgPids);
      autocannon({ ...opts, duration }, (err2, result) => {
        if (err2) return reject(err2);
        const cpu1 = cpuMs(pid);
        const pg1 = cpuMsOf(pgPids);
        const perRequest = (used) =>
          used !== undefined && result.requests.total ? used / result.requests.total : undefined;
        resolve({
          cpuPerRequest: perRequest(cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined),
          pgCpuPerRequest: perRequest(cpuMsBetween(pg0, pg1)),
          ...autocannonSummary(name, result),
        });
      });
    });
  });
}

const dbName = `gh_bench_identity_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const dbUrl = withDb(adminUrl, dbName);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-identity-'));

const results = [];
const plans = [];
let seedSeconds = 0;
let failure;
try {
  const shared = benchServiceEnv({ DATABASE_URL: dbUrl, DATA_DIR: dataDir });
  const authPort = await freePort();
  const authUrl = `http://127.0.0.1:${authPort}`;
  // The token server answers one /tokeninfo per token (the identity service caches it): it is not pinned.
  const auth = await start(
    'apps/auth',
    authMain,
    { ...shared, AUTH_PORT: String(authPort), ISSUER: authUrl },
    async () => (await fetch(`${authUrl}/readyz`)).status === 200,
    false,
  );
  const idPort = await freePort();
  const idUrl = `http://127.0.0.1:${idPort}`;
  const identity = await start(
    'apps/identity',
    identityMain,
    { ...shared, IDENTITY_PORT: String(idPort), AUTH_URL: authUrl, BEARER_CACHE_TTL_SEC: '3600' },
    async () => (await fetch(`${idUrl}/readyz`)).status === 200,
    hasTaskset,
    (env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
  );
  pinToLoadCpus([process.pid, auth.pid]);

  // 100,000 clients in 100 tenants, four client types, set-based.
  const db = new pg.Client({ connectionString: dbUrl });
  db.on('error', () => undefined); // the database is dropped with FORCE at the end, also after a failure
  await db.connect();
  const t0 = performance.now();
  const [{ id: instanceId }] = (await db.query('SELECT id FROM instances WHERE is_default')).rows;
  const tenants = (
    await db.query(
      `INSERT INTO tenants (instance_id, name)
       SELECT $1, 'bench-tenant-' || lpad(g::text, 3, '0') FROM generate_series(1, $2) g RETURNING id`,
      [instanceId, TENANTS],
    )
  ).rows.map((r) => r.id);
  await db.query(
    `INSERT INTO clients (instance_id, tenant_id, client_name, client_type, client_description, client_metadata,
                          is_global, created_at, updated_at)
     SELECT $1, ($2::uuid[])[1 + g % $3], 'bench-client-' || lpad(g::text, 6, '0'), ($4::text[])[1 + (g / $3) % 4],
            'Benchmark client ' || g, '{"grant_types": ["client_credentials"]}', true,
            now() - g * interval '1 second', now() - g * interval '1 second'
       FROM generate_series(1, $5) g`,
    [instanceId, tenants, TENANTS, TYPES, clientCount],
  );
  // As a table in service is: statistics gathered and the visibility map set (index-only counts).
  await db.query('VACUUM ANALYZE');
  seedSeconds = (performance.now() - t0) / 1000;

  const token = await clientCredentialsToken(
    authUrl,
    shared.BOOTSTRAP_CLIENT_ID,
    shared.BOOTSTRAP_CLIENT_SECRET,
    {
      audience: 'urn:gatehouse:management',
    },
  );
  const headers = { authorization: `Bearer ${token}` };

  const tenant = tenants[42];
  const countWhere = async (where, params) =>
    Number((await db.query(`SELECT count(*) AS n FROM clients WHERE ${where}`, params)).rows[0].n);
  const expected = await countWhere(`tenant_id = $1 AND client_type = 'spa'`, [tenant]);
  const enc = encodeURIComponent;

  // A client of that tenant that is not global, made and granted clients:read through the API itself: its lists
  // are limited to its tenant by the service (document 2's client record has no tenant_id to filter on).
  const api = (method, p, body, auth = headers) =>
    fetch(`${idUrl}${p}`, {
      method,
      headers: { ...auth, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
  /** @type {any} */
  const tc = await (
    await api('POST', '/api/v1/clients', {
      client_name: 'bench-tenant-admin',
      tenant_id: tenant,
      is_global: false,
    })
  ).json();
  const [{ id: mgmtId }] = (
    await db.query(`SELECT id FROM resources WHERE identifier_url = 'urn:gatehouse:management'`)
  ).rows;
  const [{ id: readScope }] = (
    await db.query(`SELECT id FROM scopes WHERE resource_id = $1 AND scope_name = 'clients:read'`, [mgmtId])
  ).rows;
  await api('POST', `/api/v1/clients/${tc.id}/resources`, { resources: [mgmtId] });
  await api('POST', `/api/v1/clients/${tc.id}/permissions`, {
    permissions: [{ resource_id: mgmtId, scopes: [readScope] }],
  });
  const tenantToken = await clientCredentialsToken(authUrl, tc.id, tc.client_secret, {
    audience: 'urn:gatehouse:management',
  });
  const tenantHeaders = { authorization: `Bearer ${tenantToken}` };
  // The client the write scenario updates (the same row every time: the write path, not lock-free parallelism).
  /** @type {any} */
  const writeTarget = await (
    await api('POST', '/api/v1/clients', { client_name: 'bench-write-target', tenant_id: tenant })
  ).json();

  const q1 = `tenant_id = '${tenant}'`;
  const q2 = `client_type = 'spa'`;
  // The tenant's clients, with the tenant caller made above.
  const perTenant = await countWhere('tenant_id = $1', [tenant]);
  const global = { instanceId, restricted: false, tenantId: null };
  const scenarios = [
    {
      name: 'v1 list: q tenant_id, sort client_name desc, total_count',
      target: true,
      access: global,
      headers,
      query: { q: q1, sort: 'client_name:desc', total_count: 'true' },
      url: `${idUrl}/api/v1/clients?q=${enc(q1)}&sort=client_name:desc&total_count=true`,
      total: (b) => b.total_count,
      expected: perTenant,
      version: 'v1',
    },
    {
      name: 'v2 list: q tenant_id, sort client_name desc, totalCount',
      target: true,
      access: global,
      headers,
      query: { q: q1, sort: 'client_name:desc', totalCount: 'true' },
      url: `${idUrl}/api/v2/clients?q=${enc(q1)}&sort=client_name:desc&totalCount=true`,
      total: (b) => b.totalCount,
      expected: perTenant,
      version: 'v2',
    },
    {
      name: 'v1 list, tenant caller: q client_type (not indexed), sort client_name, total_count',
      target: false,
      access: { instanceId, restricted: true, tenantId: tenant },
      headers: tenantHeaders,
      query: { q: q2, sort: 'client_name', total_count: 'true' },
      url: `${idUrl}/api/v1/clients?q=${enc(q2)}&sort=client_name&total_count=true`,
      total: (b) => b.total_count,
      expected,
      version: 'v1',
    },
    {
      // Baseline of the same process in the same minute: Nest and Express with no token, no query.
      name: 'baseline: GET /livez',
      target: false,
      url: `${idUrl}/livez`,
      headers: {},
      baseline: true,
    },
    {
      name: 'v1 list: first page by id, no count',
      target: false,
      access: global,
      headers,
      query: {},
      url: `${idUrl}/api/v1/clients`,
      version: 'v1',
    },
    {
      // A management write: the update, its change-feed record and the response, as a client sends it.
      name: 'v1 write: PATCH a client (client_description)',
      target: false,
      url: `${idUrl}/api/v1/clients/${writeTarget.id}`,
      headers: { ...headers, 'content-type': 'application/json' },
      write: {
        method: /** @type {const} */ ('PATCH'),
        body: JSON.stringify({ client_description: 'Updated by the benchmark' }),
      },
    },
  ];

  // The statements the service runs for these requests, built by its own code (dist), and their plans.
  const { clientListPlan } = await import(
    pathToFileURL(path.join(root, 'dist/apps/identity/apps/identity/src/clients/clients.service.js')).href
  );
  const { countedPageSql, listSql } = await import(
    pathToFileURL(path.join(root, 'dist/apps/identity/libs/shared/db/src/list.js')).href
  );
  const { clientSpecs } = await import(
    pathToFileURL(path.join(root, 'dist/apps/identity/apps/identity/src/clients/client.record.js')).href
  );
  for (const s of scenarios) {
    if (s.baseline) continue;
    if (s.write) {
      const res = await fetch(s.url, { method: s.write.method, headers: s.headers, body: s.write.body });
      if (res.status !== 200) throw new Error(`${s.name}: ${res.status} ${await res.text()}`);
      continue;
    }
    const first = await fetch(s.url, { headers: s.headers });
    const body = await first.json();
    if (first.status !== 200) throw new Error(`${s.name}: ${first.status} ${JSON.stringify(body)}`);
    if (s.total && s.total(body) !== s.expected) {
      throw new Error(`${s.name}: total ${s.total(body)}, expected ${s.expected}`);
    }
    const sql = listSql(
      clientListPlan(s.access, { spec: clientSpecs[s.version], query: s.query, version: s.version }),
    );
    const explain = async (text) =>
      (await db.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, sql.params)).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    // The statement the service sends: the page alone, or page and count in one (see countedPageSql).
    const statement = s.total ? countedPageSql(sql.pageSql, sql.countSql) : sql.pageSql;
    const page = await explain(statement);
    const usesIndex = (plan) => /Index (Only )?Scan|Bitmap Index Scan/.test(plan);
    // Served by an index: an index scan reads the clients, never a sequential scan of the table.
    plans.push({ name: s.name, plan: page, indexed: usesIndex(page) && !/Seq Scan on clients/.test(page) });
  }
  await db.end();

  // Every scenario `rounds` times, interleaved with the others (the VM's load drifts); the median run is reported.
  const runs = new Map();
  // One unmeasured pass over the target scenario first: the JIT, the pools and PostgreSQL's caches warm up.
  await new Promise((resolve, reject) =>
    autocannon({ url: scenarios[0].url, headers: scenarios[0].headers, connections, duration: 5 }, (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  for (let round = 1; round <= rounds; round++) {
    for (const s of scenarios) {
      if (only && !only.some((o) => s.name.includes(o))) continue;
      process.stderr.write(`  round ${round}: ${s.name} ...`);
      const r = await measure(s.name, s.url, s.headers, identity.pid, s.write);
      runs.set(s.name, [...(runs.get(s.name) ?? []), r]);
      process.stderr.write(
        ` ${Math.round(r.rps)}/s p99 ${r.p99} ms, ${r.cpuPerRequest?.toFixed(2) ?? '?'} CPU ms per request` +
          ` (PostgreSQL ${r.pgCpuPerRequest?.toFixed(2) ?? '?'})\n`,
      );
    }
  }
  for (const s of scenarios) {
    const all = runs.get(s.name);
    if (!all) continue;
    const median = medianBy(all, (r) => r.rps);
    results.push({
      ...median,
      runs: all.map((r) => Math.round(r.rps)),
      target: s.target,
      indexed: s.baseline || s.write ? undefined : plans.find((p) => p.name === s.name)?.indexed,
    });
  }
} catch (err) {
  failure = err;
} finally {
  await stopAll();
  if (env.BENCH_KEEP === '1') console.error(`[bench] kept the database ${dbName}`);
  else await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}

if (failure) {
  console.error(failure);
  process.exit(1);
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const pgVersion = await (async () => {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  const v = (await c.query('SHOW server_version')).rows[0].server_version;
  await c.end();
  return v;
})();
const machine =
  `${cpu}, ${os.cpus().length} vCPU, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}, ` +
  `PostgreSQL ${pgVersion}; apps/identity ${hasTaskset ? `pinned to CPU ${cpus}` : 'not pinned'}; ` +
  `${hasTaskset && loadCpus ? `autocannon, the token server and PostgreSQL's backends pinned to CPU ${loadCpus}; ` : ''}` +
  `${clientCount} clients (seeded in ${seedSeconds.toFixed(1)} s); ${connections} connections, ${rounds} rounds of ${duration} s per scenario (each after a 2 s warm-up)`;

const ok = (r) => r.rps >= 1000 && r.p99 < 50 && r.indexed && r.non2xx === 0 && r.errors === 0;
const cpuCol = (r) =>
  (r.cpuPerRequest ? `${r.cpuPerRequest.toFixed(2)} | ${Math.round(1000 / r.cpuPerRequest)}` : '- | -') +
  ` | ${r.pgCpuPerRequest !== undefined ? r.pgCpuPerRequest.toFixed(2) : '-'}`;
const lines = [
  `| scenario | req/s (median) | runs req/s | p50 ms | p99 ms | max ms | non-2xx | errors | CPU ms/req | req/s per CPU-second | PostgreSQL CPU ms/req | index | target |`,
  `|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|`,
  ...results.map(
    (r) =>
      `| ${r.name} | ${Math.round(r.rps)} | ${r.runs.join(', ')} | ${r.p50} | ${r.p99} | ${r.max} | ${r.non2xx} | ${r.errors} | ${cpuCol(r)} | ${r.indexed === undefined ? '-' : r.indexed ? 'yes' : 'no'} | ${r.target ? (ok(r) ? 'met' : 'MISSED') : '-'} |`,
  ),
];
console.log(`\nMachine: ${machine}\n`);
console.log(lines.join('\n'));
for (const p of plans) {
  console.log(`\n${p.name}\n\n${p.plan}`);
}
if (env.BENCH_JSON) {
  writeFileSync(
    env.BENCH_JSON,
    JSON.stringify({ machine, date: new Date().toISOString(), results, plans }, null, 2),
  );
}
if (results.some((r) => r.target && !ok(r))) process.exitCode = 1;
