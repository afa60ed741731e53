#!/usr/bin/env node
// Token server benchmark: client_credentials tokens/s and tokeninfo/s of apps/auth on its PostgreSQL adapter,
// beside a bare oidc-provider (same keys, minimal pg adapter) measured in the same run.
//
//   npx nx run auth:build && node tools/bench/auth/run.mjs        (or: npx nx run auth:bench)
//
// Variables: BENCH_PG_URL (admin URL of a PostgreSQL where a throw-away database may be created; default
// TEST_PG_URL, DATABASE_URL, postgres://postgres@127.0.0.1:5432/postgres), BENCH_DURATION (s, default 10),
// BENCH_CONNECTIONS (default 10, as the p99 target), BENCH_ROUNDS (default 3: every scenario is measured that many times, interleaved
// with the others, and the median is reported, so a burst of load elsewhere on the machine skews one run, not
// the comparison), BENCH_SERVER_CPUS (taskset CPU list for the servers, default 0: one core; empty: no pinning),
// BENCH_LOAD_CPUS (this script and the PostgreSQL backends; default every CPU the servers are not on),
// BENCH_ONLY (comma-separated scenario names), BENCH_JSON (write the results there),
// BENCH_NODE_ARGS (node flags for apps/auth, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_ROOT (the checkout
// whose dist/ is measured, default this one: bench:compare points it at another build), BENCH_BARE=0 (no bare
// oidc-provider: its scenarios are skipped), BENCH_MEMORY=0 (skip the idle and after-run RSS readings and their waits).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  autocannonSummary,
  backendPids,
  cpuMs,
  freePort,
  pinProcesses,
  processGroup,
  rssMiB,
  tasksetAvailable,
  withDb,
} from '../lib/processes.mjs';
import { adminPgUrl, benchRoot, builtFiles, loadCpusFor, tokenServerModule } from '../lib/setup.mjs';
import { median } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = benchRoot;
const dist = path.join(root, 'dist/apps/auth');
const { auth: mainJs } = builtFiles(['auth']);

const env = process.env;
const adminUrl = adminPgUrl();
const duration = Number(env.BENCH_DURATION || 10);
const rounds = Number(env.BENCH_ROUNDS || 3);
const connections = Number(env.BENCH_CONNECTIONS || 10);
const cpus = env.BENCH_SERVER_CPUS ?? '0';
const only = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',')) : undefined;
const hasTaskset = cpus !== '' && tasksetAvailable();
// where the load side runs: BENCH_LOAD_CPUS, else the CPUs the servers are not pinned to
const loadCpus = loadCpusFor(cpus);
const withBare = env.BENCH_BARE !== '0';
const withMemory = env.BENCH_MEMORY !== '0';

const procs = processGroup({ cwd: root, env });
const start = (name, args, childEnv, ready) =>
  procs.start(name, args, { childEnv, ready, cpus: hasTaskset ? cpus : undefined });
const stopAll = procs.stopAll;

const form = (o) => new URLSearchParams(o).toString();
const basicAuth = (id, secret) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function post(url, body, headers = {}) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${text}`);
  return JSON.parse(text);
}

/**
 * @param {string} name
 * @param {{ url: string; body?: string; headers?: Record<string, string>; method?: 'GET' | 'POST' }} request
 * @param {boolean} warmup
 */
function measure(name, { url, body, headers, method = 'POST' }, warmup, pid) {
  return new Promise((resolve, reject) => {
    /** @type {import('autocannon').Options} */
    const opts = {
      url,
      method,
      connections,
      pipelining: 1,
      headers:
        method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded', ...headers } : headers,
      body,
    };
    // Warm-up (JIT, pools) on the first round, then the measured run.
    autocannon({ ...opts, duration: warmup ? 2 : 0.2 }, (err) => {
      if (err) return reject(err);
      const cpu0 = pid === undefined ? undefined : cpuMs(pid);
      autocannon({ ...opts, duration }, (err2, result) => {
        if (err2) return reject(err2);
        const cpu1 = pid === undefined ? undefined : cpuMs(pid);
        const summary = autocannonSummary(name, result);
        // the server's own CPU per answered request: its cost whether or not the load side kept it busy
        const cpuUsPerReq =
          cpu0 !== undefined && cpu1 !== undefined && summary.total > 0
            ? ((cpu1 - cpu0) * 1000) / summary.total
            : undefined;
        resolve({ ...summary, cpuUsPerReq });
      });
    });
  });
}

const dbName = `gh_bench_auth_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const dbUrl = withDb(adminUrl, dbName);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-auth-'));

const results = [];
/** RSS of apps/auth: after start (idle), after the benchmark. */
const memory = {};
try {
  // ---- Gatehouse apps/auth (the built service, as in production) ----
  const ghPort = await freePort();
  const gh = `http://127.0.0.1:${ghPort}`;
  const clientId = randomUUID();
  const clientSecret = randomBytes(24).toString('base64url');
  const ghProcess = await start(
    'apps/auth',
    [...(env.BENCH_NODE_ARGS ? env.BENCH_NODE_ARGS.split(' ') : []), mainJs],
    {
      DATABASE_URL: dbUrl,
      DATA_DIR: dataDir,
      AUTH_PORT: String(ghPort),
      ISSUER: gh,
      BOOTSTRAP_CLIENT_ID: clientId,
      BOOTSTRAP_CLIENT_SECRET: clientSecret,
      BOOTSTRAP_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
      // As shipped: the request log at its default level (one line per request) unless BENCH_LOG_LEVEL says
      // otherwise, and the rate limiter counting every request (a limit too high to answer 429 here).
      ...(env.BENCH_LOG_LEVEL ? { LOG_LEVEL: env.BENCH_LOG_LEVEL } : {}),
      RATE_LIMIT_POINTS: '1000000000',
      DB_POOL_MAX: '10',
      REDIS_URL: '',
    },
    async () => (await fetch(`${gh}/readyz`)).status === 200,
  );

  // Idle RSS: 5 s after it answers /readyz, before any load.
  if (withMemory) {
    await new Promise((r) => setTimeout(r, 5000));
    memory.idleMiB = rssMiB(ghProcess.pid);
  }

  // Two more resources for the bootstrap client, in the same shape as the system ones: ES256 and opaque.
  const db = new pg.Client({ connectionString: dbUrl });
  db.on('error', () => undefined); // the final DROP ... WITH (FORCE) ends it if a step above failed
  await db.connect();
  const [{ id: instanceId }] = (await db.query('SELECT id FROM instances WHERE is_default')).rows;
  for (const [identifier, alg] of [
    ['https://bench-es256.test/', 'ES256'],
    ['https://bench-opaque.test/', 'opaque'],
  ]) {
    const {
      rows: [r],
    } = await db.query(
      `INSERT INTO resources (instance_id, resource_type, resource_name, identifier_url, signing_algorithm, token_lifetime)
       VALUES ($1, 'api', $2, $2, $3, 3600) RETURNING id`,
      [instanceId, identifier, alg],
    );
    const {
      rows: [s],
    } = await db.query(
      `INSERT INTO scopes (instance_id, resource_id, scope_name) VALUES ($1, $2, 'bench:read') RETURNING id`,
      [instanceId, r.id],
    );
    await db.query(`INSERT INTO client_resources (instance_id, client_id, resource_id) VALUES ($1, $2, $3)`, [
      instanceId,
      clientId,
      r.id,
    ]);
    await db.query(
      `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id) VALUES ($1, $2, $3, $4)`,
      [instanceId, clientId, r.id, s.id],
    );
  }

  // The same private keys for the bare provider, read as the token server reads them.
  const { loadSecretBox } = await import(
    pathToFileURL(path.join(dist, 'libs/identity/data/src/secret-box.js')).href
  );
  const { SigningKeys } = await import(pathToFileURL(tokenServerModule(dist, 'keys/signing-keys.js')).href);
  // The @gatehouse/db Sql shape SigningKeys reads through (rows; load() needs no transaction).
  const sql = { rows: async (t, p) => (await db.query(t, p)).rows };
  const keys = await new SigningKeys(sql, loadSecretBox({ DATA_DIR: dataDir }).box).load();
  await db.end();

  // ---- bare oidc-provider ----
  const barePort = await freePort();
  const bare = `http://127.0.0.1:${barePort}`;
  const bareProcess = withBare
    ? await start(
        'bare oidc-provider',
        [path.join(here, 'bare-provider.mjs')],
        {
          BARE_PORT: String(barePort),
          BARE_ISSUER: bare,
          BARE_DATABASE_URL: dbUrl,
          BARE_CLIENT_ID: clientId,
          BARE_CLIENT_SECRET: clientSecret,
          BARE_JWKS: JSON.stringify({ keys: keys.keys.map((k) => k.privateJwk) }),
          BARE_RESOURCES: JSON.stringify({
            'urn:gatehouse:management': {
              format: 'jwt',
              alg: 'RS256',
              kid: keys.active.RS256,
              scope: 'clients:read clients:write',
            },
            'https://bench-es256.test/': {
              format: 'jwt',
              alg: 'ES256',
              kid: keys.active.ES256,
              scope: 'bench:read',
            },
            'https://bench-opaque.test/': { format: 'opaque', scope: 'bench:read' },
          }),
        },
        async () => (await fetch(`${bare}/.well-known/openid-configuration`)).status === 200,
      )
    : undefined;

  const auth = { authorization: basicAuth(clientId, clientSecret) };
  const cc = (audience, scope) => form({ grant_type: 'client_credentials', audience, scope });
  const ccBare = (resource, scope) => form({ grant_type: 'client_credentials', resource, scope });
  const M = 'urn:gatehouse:management';
  const ES = 'https://bench-es256.test/';
  const OP = 'https://bench-opaque.test/';

  // Tokens to introspect (long-lived enough for the run).
  const ghJwt = (await post(`${gh}/token`, cc(M, 'clients:read clients:write'), auth)).access_token;
  const ghOpaque = (await post(`${gh}/token`, cc(OP, 'bench:read'), auth)).access_token;
  const bareOpaque = withBare
    ? (await post(`${bare}/token`, ccBare(OP, 'bench:read'), auth)).access_token
    : undefined;
  const ghInfo = await post(`${gh}/tokeninfo`, form({ token: ghJwt }), auth);
  if (!ghInfo.active) throw new Error('tokeninfo says the fresh token is inactive');

  /** @type {[string, string, { url: string; method?: 'GET' | 'POST'; body?: string; headers?: Record<string, string> }][]} */
  const scenarios = [
    // The same oidc-provider route on both: the difference is what sits in front of it (Nest, logging, metrics,
    // rate limit, our body handling).
    ['GET /jwks', 'gatehouse', { url: `${gh}/jwks`, method: 'GET' }],
    ['GET /jwks', 'bare', { url: `${bare}/jwks`, method: 'GET' }],
    [
      'token RS256 JWT',
      'gatehouse',
      { url: `${gh}/token`, body: cc(M, 'clients:read clients:write'), headers: auth },
    ],
    [
      'token RS256 JWT',
      'bare',
      { url: `${bare}/token`, body: ccBare(M, 'clients:read clients:write'), headers: auth },
    ],
    ['token ES256 JWT', 'gatehouse', { url: `${gh}/token`, body: cc(ES, 'bench:read'), headers: auth }],
    ['token ES256 JWT', 'bare', { url: `${bare}/token`, body: ccBare(ES, 'bench:read'), headers: auth }],
    [
      'token opaque (pg write)',
      'gatehouse',
      { url: `${gh}/token`, body: cc(OP, 'bench:read'), headers: auth },
    ],
    [
      'token opaque (pg write)',
      'bare',
      { url: `${bare}/token`, body: ccBare(OP, 'bench:read'), headers: auth },
    ],
    [
      'tokeninfo JWT (Basic)',
      'gatehouse',
      { url: `${gh}/tokeninfo`, body: form({ token: ghJwt }), headers: auth },
    ],
    [
      'tokeninfo JWT (self Bearer)',
      'gatehouse',
      { url: `${gh}/tokeninfo`, body: form({ token: ghJwt }), headers: { authorization: `Bearer ${ghJwt}` } },
    ],
    [
      'tokeninfo opaque (Basic)',
      'gatehouse',
      { url: `${gh}/tokeninfo`, body: form({ token: ghOpaque }), headers: auth },
    ],
    [
      'introspection opaque (Basic)',
      'bare',
      { url: `${bare}/token/introspection`, body: form({ token: bareOpaque }), headers: auth },
    ],
  ];

  const runs = new Map();
  for (let round = 1; round <= rounds; round++) {
    for (const [name, server, opts] of scenarios) {
      if (only && !only.has(name)) continue;
      if (server === 'bare' && !withBare) continue;
      process.stderr.write(`  round ${round} ${server.padEnd(9)} ${name} ...`);
      // the load side (this process's autocannon, PostgreSQL's backends: the audit events' inserts) off the
      // servers' core, as the other benchmarks; pinned before every run, since the pools open backends as needed
      if (hasTaskset) pinProcesses([process.pid, ...(await backendPids(admin, [dbName]))], loadCpus);
      const r = await measure(name, opts, round === 1, (server === 'bare' ? bareProcess : ghProcess)?.pid);
      const key = `${server}\t${name}`;
      if (!runs.has(key)) runs.set(key, []);
      runs.get(key).push(r);
      process.stderr.write(` ${Math.round(r.rps)}/s p99 ${r.p99} ms\n`);
    }
  }
  if (withMemory) {
    memory.afterMiB = rssMiB(ghProcess.pid);
    await new Promise((r) => setTimeout(r, 10_000));
    memory.after10sMiB = rssMiB(ghProcess.pid);
  }
  for (const [key, rs] of runs) {
    const [server, name] = key.split('\t');
    results.push({
      server,
      name,
      rps: median(rs.map((r) => r.rps)),
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      max: Math.max(...rs.map((r) => r.max)),
      non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      total: rs.reduce((a, r) => a + r.total, 0),
      runs: rs.map((r) => Math.round(r.rps)),
      cpuUsPerReq: rs.every((r) => r.cpuUsPerReq !== undefined)
        ? median(rs.map((r) => r.cpuUsPerReq))
        : undefined,
    });
  }
} finally {
  await stopAll();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const pgVersion = await (async () => {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  const v = (await c.query('SHOW server_version')).rows[0].server_version;
  await c.end();
  return v;
})();
const machine = `${cpu}, ${os.cpus().length} vCPU, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}, PostgreSQL ${pgVersion}; servers ${hasTaskset ? `pinned to CPU ${cpus}, load and PostgreSQL backends to ${loadCpus || 'any'}` : 'not pinned'}; ${connections} connections, median of ${rounds} interleaved ${duration} s runs (after a 2 s warm-up); load average at the end ${os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}`;

const lines = [
  `| scenario | server | req/s (median) | runs req/s | server CPU µs/req | p50 ms | p99 ms | max ms | non-2xx | errors |`,
  `|---|---|---:|---|---:|---:|---:|---:|---:|---:|`,
  ...results.map(
    (r) =>
      `| ${r.name} | ${r.server === 'bare' ? 'bare oidc-provider' : 'Gatehouse apps/auth'} | ${Math.round(r.rps)} | ${r.runs.join(', ')} | ${r.cpuUsPerReq === undefined ? '-' : Math.round(r.cpuUsPerReq)} | ${r.p50} | ${r.p99} | ${r.max} | ${r.non2xx} | ${r.errors} |`,
  ),
];
// The comparisons with the bare provider: Gatehouse / bare, each from the medians of the same run.
const rpsOf = (server, name) => results.find((r) => r.server === server && r.name === name)?.rps;
/** @type {{ label: string; ours: string; theirs: string; target?: number }[]} */
const comparisons = [
  { label: 'client_credentials ES256 JWT', ours: 'token ES256 JWT', theirs: 'token ES256 JWT', target: 1.0 },
  { label: 'client_credentials RS256 JWT', ours: 'token RS256 JWT', theirs: 'token RS256 JWT' },
  {
    label: '/tokeninfo JWT (Basic) vs bare introspection',
    ours: 'tokeninfo JWT (Basic)',
    theirs: 'introspection opaque (Basic)',
    target: 3.0,
  },
  { label: 'GET /jwks', ours: 'GET /jwks', theirs: 'GET /jwks', target: 0.8 },
];
const ratios = comparisons.flatMap(({ label, ours, theirs, target }) => {
  const a = rpsOf('gatehouse', ours);
  const b = rpsOf('bare', theirs);
  return a && b ? [{ label, ratio: a / b, target }] : [];
});
const p99Max = Math.max(...results.filter((r) => r.server === 'gatehouse').map((r) => r.p99));
console.log(`\nMachine: ${machine}\n`);
console.log(lines.join('\n'));
console.log('\n| comparison | Gatehouse / bare | target |\n|---|---:|---:|');
for (const r of ratios)
  console.log(`| ${r.label} | ${r.ratio.toFixed(2)}x | ${r.target ? `>= ${r.target.toFixed(1)}x` : ''} |`);
console.log(
  `\nGatehouse p99 at ${connections} connections: at most ${p99Max} ms over its scenarios (target < 25 ms).` +
    (withMemory
      ? `\nRSS of apps/auth: ${memory.idleMiB} MiB idle after start (target < 150), ${memory.afterMiB} MiB right after` +
        ` the benchmark, ${memory.after10sMiB} MiB 10 s later (target < 250).`
      : ''),
);
if (env.BENCH_JSON)
  writeFileSync(
    env.BENCH_JSON,
    JSON.stringify({ machine, date: new Date().toISOString(), results, ratios, memory }, null, 2),
  );
