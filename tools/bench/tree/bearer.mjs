#!/usr/bin/env node
// The tree API's bearer validation overhead: a GET with a cached token through the built apps/tree as shipped,
// against its unauthenticated twin: the same application (same routes, handlers, statements) with BearerModule's
// global guard taken out and the caller put on each request by a middleware (./bearer-server.mjs). The token is a
// real one of the real token server (client_credentials for urn:gatehouse:tree); the guard validates it once
// through /tokeninfo, then answers from its cache: the path of every request after a token's first.
//
//   npx nx run-many -t build -p auth,tree && node tools/bench/tree/bearer.mjs
//
// Variants per route:
//   guarded             `Authorization: Bearer <token>`, BearerModule's guard (the application as shipped);
//   open, same header   the twin, the same header sent (rate limits key on it alike): the guard's cost alone;
//   open, no header     the twin, no Authorization header: an unauthenticated request of the same route.
// Routes: GET /api/v1/settings (one indexed row), GET /api/v1/trees (10 trees). apps/tree runs pinned to one core
// (BENCH_SERVER_CPUS), autocannon in this process, the token server and PostgreSQL's backends of the tree
// database on the other (BENCH_LOAD_CPUS). Rounds interleave every route and variant (the VM's load drifts); per
// route the median of each variant's rounds, and the ratio of each round's adjacent runs (median and range).
// Cost ratio: guarded over twin, by requests/s (twin / guarded) and by CPU time of apps/tree per request.
//
// Variables: BENCH_PG_URL (admin URL of a PostgreSQL where throw-away databases may be created; default
// TEST_PG_URL, DATABASE_URL, postgres://postgres@127.0.0.1:5432/postgres), BENCH_DURATION (s per run, default 5),
// BENCH_ROUNDS (default 5), BENCH_CONNECTIONS (default 10), BENCH_SERVER_CPUS (taskset CPU list of apps/tree,
// default 0; empty: no pinning), BENCH_LOAD_CPUS (default: the other CPUs), BENCH_NODE_ARGS (extra node flags of
// both apps/tree processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_JSON (write the results there),
// BENCH_ROOT (the checkout whose dist/ is measured, default this one).
//
// Target: the guarded GET costs at most 1.1x its unauthenticated twin.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { cpuMs, freePort, pinProcesses, processGroup, tasksetAvailable, withDb } from '../lib/processes.mjs';
import { adminPgUrl, benchRoot, builtFiles, clientCredentialsToken, loadCpusFor } from '../lib/setup.mjs';
import { median } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = benchRoot;
const mains = builtFiles(['auth', 'tree']);

const env = process.env;
const adminUrl = adminPgUrl();
const duration = Number(env.BENCH_DURATION || 5);
const rounds = Number(env.BENCH_ROUNDS || 5);
const connections = Number(env.BENCH_CONNECTIONS || 10);
const cpus = env.BENCH_SERVER_CPUS ?? '0';
const loadCpus = loadCpusFor(cpus);
const hasTaskset = cpus !== '' && tasksetAvailable();
const log = (...a) => console.error('[bench]', ...a);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const pinToLoadCpus = (pids) => pinProcesses(pids, hasTaskset ? loadCpus : '');

const procs = processGroup({ cwd: root, env });
const suffix = randomBytes(4).toString('hex');
const identityDb = `gh_bench_bearer_identity_${suffix}`;
const treeDb = `gh_bench_bearer_tree_${suffix}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${identityDb}`);
await admin.query(`CREATE DATABASE ${treeDb}`);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-bearer-'));
const startedAt = new Date();
const loadStart = loadavg();

const ROUTES = [
  { name: 'GET /api/v1/settings', path: '/api/v1/settings' },
  { name: 'GET /api/v1/trees (10 trees)', path: '/api/v1/trees' },
];
const VARIANTS = [
  { key: 'guarded', name: 'guarded, cached token', server: 'guarded', header: true },
  { key: 'open-header', name: 'twin without guard, same header', server: 'open', header: true },
  { key: 'open', name: 'twin without guard, no header', server: 'open', header: false },
];

/** @type {Map<string, any[]>} route|variant -> runs */
const runs = new Map();
let failure;
let pgVersion = '?';
try {
  pgVersion = (await admin.query('SHOW server_version')).rows[0].server_version;
  const authPort = await freePort();
  const authUrl = `http://127.0.0.1:${authPort}`;
  const clientId = randomUUID();
  const clientSecret = randomBytes(24).toString('base64url');
  const common = { LOG_LEVEL: 'warn', RATE_LIMIT_POINTS: '1000000000', REDIS_URL: '' };
  const auth = await procs.start('apps/auth', [mains.auth], {
    childEnv: {
      ...common,
      DATABASE_URL: withDb(adminUrl, identityDb),
      DATA_DIR: dataDir,
      AUTH_PORT: String(authPort),
      ISSUER: authUrl,
      BOOTSTRAP_CLIENT_ID: clientId,
      BOOTSTRAP_CLIENT_SECRET: clientSecret,
      BOOTSTRAP_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
    ready: async () => (await fetch(`${authUrl}/readyz`)).status === 200,
    timeoutMs: 90_000,
  });
  const token = await clientCredentialsToken(authUrl, clientId, clientSecret, {
    resource: 'urn:gatehouse:tree',
  });

  // The two tree processes, one after the other (each migrates the tree database at start-up).
  const servers = {};
  for (const variant of ['guarded', 'open']) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = await procs.start(
      `apps/tree (${variant})`,
      [...(env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(here, 'bearer-server.mjs')],
      {
        childEnv: {
          ...common,
          BENCH_ROOT: root,
          BENCH_VARIANT: variant,
          BENCH_TOKEN: variant === 'open' ? token : '',
          TREE_DATABASE_URL: withDb(adminUrl, treeDb),
          // the identity database, as deployed: the tree service's change feed listens there
          DATABASE_URL: withDb(adminUrl, identityDb),
          TREE_PORT: String(port),
          AUTH_URL: authUrl,
          DB_POOL_MAX: '10',
          BEARER_CACHE_TTL_SEC: '3600',
        },
        ready: async () => (await fetch(`${url}/readyz`)).status === 200,
        cpus: hasTaskset ? cpus : undefined,
        timeoutMs: 90_000,
      },
    );
    servers[variant] = { url, pid: child.pid };
  }
  pinToLoadCpus([process.pid, auth.pid]);

  const H = { authorization: `Bearer ${token}` };
  for (let i = 0; i < 10; i++) {
    const r = await fetch(`${servers.guarded.url}/api/v1/trees`, {
      method: 'POST',
      headers: { ...H, 'content-type': 'application/json' },
      body: JSON.stringify({ code: `bench-${i}`, name: `Benchmark tree ${i}` }),
    });
    if (r.status !== 201) throw new Error(`POST /api/v1/trees: ${r.status} ${await r.text()}`);
  }
  // Both variants answer the same (the twin's caller is the token's).
  for (const route of ROUTES) {
    const bodies = [];
    for (const v of VARIANTS) {
      const r = await fetch(`${servers[v.server].url}${route.path}`, { headers: v.header ? H : {} });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`${v.name} ${route.path}: ${r.status} ${text}`);
      // links name the host the request was sent to (another port per process)
      bodies.push(text.replace(/127\.0\.0\.1:\d+/g, 'host'));
    }
    if (new Set(bodies).size !== 1) throw new Error(`${route.path}: the variants answer differently`);
  }
  const pgPids = (
    await admin.query(`SELECT pid FROM pg_stat_activity WHERE datname IN ($1, $2)`, [treeDb, identityDb])
  ).rows.map((r) => r.pid);
  pinToLoadCpus(pgPids);

  const measure = async (url, headers, pid) => {
    await autocannon({ url, headers, connections, duration: 1 }); // warm-up
    const c0 = cpuMs(pid);
    const r = await autocannon({ url, headers, connections, duration });
    const c1 = cpuMs(pid);
    return {
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      cpuPerRequest: c0 !== undefined && c1 !== undefined ? (c1 - c0) / r.requests.total : undefined,
      bad: r.non2xx + r.errors + r.timeouts,
    };
  };
  for (let round = 1; round <= rounds; round++) {
    for (const route of ROUTES) {
      // alternate the order, so no variant always runs first after another route
      const order = round % 2 ? VARIANTS : [...VARIANTS].reverse();
      for (const v of order) {
        const s = servers[v.server];
        const r = await measure(`${s.url}${route.path}`, v.header ? H : {}, s.pid);
        const key = `${route.name}|${v.key}`;
        runs.set(key, [...(runs.get(key) ?? []), r]);
        log(
          `round ${round} ${route.name}, ${v.name}: ${Math.round(r.rps)}/s p50 ${r.p50} p99 ${r.p99} ms, ` +
            `${r.cpuPerRequest?.toFixed(3) ?? '?'} CPU ms/req`,
        );
      }
    }
  }
} catch (err) {
  failure = err;
} finally {
  await procs.stopAll();
  for (const db of [identityDb, treeDb]) {
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined);
  }
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}
if (failure) {
  console.error(failure);
  process.exit(1);
}

const loadEnd = loadavg();
const fmt = (x, d = 2) => (x === undefined ? '-' : x.toFixed(d));
const table = [
  '| route | variant | req/s (median) | each round | p50 ms | p99 ms | CPU ms/req (median) | non-2xx/errors |',
  '|---|---|---:|---|---:|---:|---:|---:|',
];
const ratios = [
  '| route | guarded against | cost ratio by req/s (medians) | per round (median, range) | cost ratio by CPU ms/req | target <= 1.1 |',
  '|---|---|---:|---|---:|---|',
];
const summary = [];
for (const route of ROUTES) {
  const of = (v) => runs.get(`${route.name}|${v}`) ?? [];
  for (const v of VARIANTS) {
    const rs = of(v.key);
    table.push(
      `| ${route.name} | ${v.name} | ${Math.round(median(rs.map((r) => r.rps)))} | ${rs.map((r) => Math.round(r.rps)).join(', ')} | ` +
        `${median(rs.map((r) => r.p50))} | ${median(rs.map((r) => r.p99))} | ${fmt(median(rs.map((r) => r.cpuPerRequest ?? NaN)), 3)} | ` +
        `${rs.reduce((n, r) => n + r.bad, 0)} |`,
    );
  }
  const guarded = of('guarded');
  for (const twin of VARIANTS.slice(1)) {
    const t = of(twin.key);
    const byRps = median(t.map((r) => r.rps)) / median(guarded.map((r) => r.rps));
    const byCpu =
      median(guarded.map((r) => r.cpuPerRequest ?? NaN)) / median(t.map((r) => r.cpuPerRequest ?? NaN));
    const paired = guarded.map((g, i) => t[i].rps / g.rps).sort((a, b) => a - b);
    const ok = byRps <= 1.1;
    summary.push({ route: route.name, twin: twin.key, byRps, byCpu, paired, ok });
    ratios.push(
      `| ${route.name} | ${twin.name} | ${fmt(byRps)} | ${fmt(median(paired))} (${fmt(paired[0])}..${fmt(paired[paired.length - 1])}) | ` +
        `${fmt(byCpu)} | ${twin.key === 'open' ? (ok ? 'met' : 'MISSED') : '-'} |`,
    );
  }
}
const machine =
  `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} vCPU, Node ${process.versions.node}, PostgreSQL ${pgVersion}; ` +
  `apps/tree ${hasTaskset ? `pinned to CPU ${cpus}` : 'not pinned'}` +
  `${hasTaskset && loadCpus ? `, autocannon, the token server and PostgreSQL's backends on CPU ${loadCpus}` : ''}; ` +
  `${connections} connections, ${rounds} interleaved rounds of ${duration} s (each after a 1 s warm-up); ` +
  `load average ${loadStart} at the start, ${loadEnd} at the end`;
console.log(`\n${startedAt.toISOString()}; ${machine}\n`);
console.log(table.join('\n'));
console.log('');
console.log(ratios.join('\n'));
if (env.BENCH_JSON) {
  writeFileSync(
    env.BENCH_JSON,
    JSON.stringify(
      { date: startedAt.toISOString(), machine, runs: Object.fromEntries(runs), ratios: summary },
      null,
      2,
    ),
  );
}
if (summary.some((s) => s.twin === 'open' && !s.ok)) process.exitCode = 1;
