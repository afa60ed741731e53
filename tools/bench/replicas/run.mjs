#!/usr/bin/env node
// Scale-out benchmark: client_credentials (RS256 JWT) and /tokeninfo throughput of 1 and 2 apps/auth replicas
// behind HAProxy, on one PostgreSQL and one Redis (the deployment of docs/deployment.md, "Many replicas behind a
// load balancer"). Target: 2 replicas >= 1.6x one.
//
//   npx nx run auth:build && node tools/bench/replicas/run.mjs      (or: npm run bench:scaleout)
//
// Both replicas run for the whole benchmark; two HAProxy frontends sit in front of them, one routing to auth-1 only,
// one round-robin over auth-1 and auth-2. The 1- and 2-replica runs alternate round by round over the same
// processes, database and proxy, so a burst of load elsewhere skews one run, not the ratio, and the only
// difference between the two is the second replica.
//
// Options (or variables): --rounds N (BENCH_ROUNDS, default 3), --duration S (BENCH_DURATION, default 10),
// --connections N (BENCH_CONNECTIONS, default 10, as tools/bench/auth), --load autocannon|wrk (BENCH_LOAD, default
// autocannon: in this process; wrk: Debian's wrk, one thread, a C load generator that costs the shared cores about a
// tenth of autocannon's CPU per request, so more of them is left to the replicas), --feed (also run tools/bench/feed
// with 1 and 3 token servers subscribed: a management write's latency, the settle protocol's cost per replica).
// Variables: BENCH_SERVER_CPUS (taskset CPU lists of the replicas, `;`-separated, default `0;1`: one core each;
// empty: no pinning), BENCH_PG_URL (as the other benchmarks), BENCH_REDIS_URL (default TEST_REDIS_URL, else
// redis://127.0.0.1:6379; empty: no Redis), BENCH_LOG_LEVEL (default: the services' own level), BENCH_JSON (write
// the results there), BENCH_ROOT (the checkout whose dist/ is measured), HAPROXY (the haproxy binary).
import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { SERVICE_NODE_FLAGS } from '../../launcher/node-flags.mjs';
import { findHaproxy, renderHaproxyConfig, startHaproxy } from '../../replicas/lib/haproxy.mjs';
import { replicaHandle, startCluster } from '../../replicas/lib/cluster.mjs';
import { autocannonSummary, freePort, tasksetAvailable } from '../lib/processes.mjs';
import { adminPgUrl, benchRoot, builtFiles } from '../lib/setup.mjs';
import { median } from '../lib/stats.mjs';

const env = process.env;
const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    load: { type: 'string' },
    feed: { type: 'boolean', default: false },
  },
});
const rounds = Number(args.rounds ?? (env.BENCH_ROUNDS || 3));
const duration = Number(args.duration ?? (env.BENCH_DURATION || 10));
const connections = Number(args.connections ?? (env.BENCH_CONNECTIONS || 10));
const load = args.load ?? (env.BENCH_LOAD || 'autocannon');
if (load !== 'autocannon' && load !== 'wrk') {
  console.error(`--load must be autocannon or wrk, not ${load}`);
  process.exit(1);
}
const { auth: mainJs } = builtFiles(['auth']);
const adminUrl = adminPgUrl();
const redisUrl = env.BENCH_REDIS_URL ?? (env.TEST_REDIS_URL || 'redis://127.0.0.1:6379');
const cpuLists = (env.BENCH_SERVER_CPUS ?? '0;1').split(';');
const pinned = cpuLists.some((c) => c !== '') && tasksetAvailable();
const REPLICAS = 2;

const haproxyBin = env.HAPROXY || findHaproxy();
if (!haproxyBin) {
  console.error('haproxy is missing: install it (apt-get install haproxy) or set HAPROXY');
  process.exit(1);
}

/**
 * A replica as startProcessReplica starts it, with two differences that matter under load: it runs under
 * `taskset` when pinned (a core of its own, as in the other benchmarks), and its output goes straight to a file
 * (no copy through this process, which also runs autocannon).
 * @type {import('../../replicas/lib/cluster.mjs').StartReplica}
 */
async function startPinnedReplica({ service, name, env: replicaEnv, port, dir }) {
  const index = Number(name.split('-').pop()) - 1;
  const cpus = pinned ? cpuLists[index % cpuLists.length] : '';
  const file = path.join(dir, `${name}.log`);
  const fd = openSync(file, 'a');
  const node = [...SERVICE_NODE_FLAGS, mainJs];
  const child = spawn(
    cpus ? 'taskset' : process.execPath,
    cpus ? ['-c', cpus, process.execPath, ...node] : node,
    {
      cwd: benchRoot,
      env: { ...env, ...replicaEnv, AUTH_PORT: String(port) },
      stdio: ['ignore', fd, fd],
    },
  );
  closeSync(fd);
  return replicaHandle({ service, name, port, child, file });
}

/**
 * @param {string} name
 * @param {{ url: string; body: string; headers: Record<string, string> }} request
 * @param {number} seconds
 */
function measure(name, { url, body, headers }, seconds) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        method: 'POST',
        connections,
        pipelining: 1,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
        duration: seconds,
      },
      (err, result) => (err ? reject(err) : resolve(autocannonSummary(name, result))),
    );
  });
}

/** wrk's latency figure (`812.00us`, `2.05ms`, `1.20s`) in ms. */
function wrkMs(/** @type {string} */ text) {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!m) throw new Error(`wrk latency ${text}?`);
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[/** @type {'us'|'ms'|'s'|'m'} */ (m[2])];
}

/**
 * The same run as {@link measure} with wrk (one thread, `connections` connections, whole seconds): its summary in
 * autocannon's shape.
 * @param {string} name
 * @param {{ url: string; body: string; headers: Record<string, string> }} request
 * @param {number} seconds
 */
async function measureWrk(name, { url, body, headers }, seconds) {
  const script = path.join(work, 'request.lua');
  const all = { 'content-type': 'application/x-www-form-urlencoded', ...headers };
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(body)}`,
      ...Object.entries(all).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
    ].join('\n'),
  );
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${Math.max(1, Math.round(seconds))}s`,
    '--latency',
    '-s',
    script,
    url,
  ];
  const out = await new Promise((resolve, reject) =>
    execFile('wrk', args, { encoding: 'utf8' }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
  const num = (re) => Number(re.exec(out)?.[1] ?? 0);
  const lat = (pct) => wrkMs(new RegExp(`^\\s+${pct}%\\s+(\\S+)$`, 'm').exec(out)?.[1] ?? '0ms');
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    name,
    rps: num(/^Requests\/sec:\s+([\d.]+)/m),
    p50: lat(50),
    p99: lat(99),
    max: wrkMs(/^\s+Latency\s+\S+\s+\S+\s+(\S+)/m.exec(out)?.[1] ?? '0ms'),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
    errors: socket ? socket.slice(1).reduce((a, n) => a + Number(n), 0) : 0,
    total: num(/^\s+(\d+) requests in/m),
  };
}

const log = (s) => process.stderr.write(`[scaleout] ${s}\n`);
const form = (o) => new URLSearchParams(o).toString();

const cluster = await startCluster({
  counts: { auth: REPLICAS, identity: 0, tree: 0 },
  haproxyBin,
  adminUrl,
  redisUrl,
  startReplica: startPinnedReplica,
  log,
  env: {
    // As tools/bench/auth: the request log at the services' default level unless told otherwise, the rate limiter
    // counting every request (in Redis, shared by the replicas) with a limit too high to answer 429, a pool of 10.
    LOG_LEVEL: env.BENCH_LOG_LEVEL ?? 'info',
    RATE_LIMIT_POINTS: '1000000000',
    DB_POOL_MAX: '10',
  },
});
const work = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-scaleout-'));
let proxy;
const results = [];
try {
  // Our own proxy, in the shape of the cluster's: frontend `one` reaches auth-1 only, `two` both replicas.
  const ports = { one: await freePort(), two: await freePort() };
  const servers = cluster.replicas.auth.map((r) => ({ name: r.name, host: '127.0.0.1', port: r.port }));
  proxy = await startHaproxy({
    bin: haproxyBin,
    dir: work,
    config: renderHaproxyConfig({
      frontends: [
        { service: 'one', bind: `127.0.0.1:${ports.one}`, servers: servers.slice(0, 1) },
        { service: 'two', bind: `127.0.0.1:${ports.two}`, servers },
      ],
    }),
  });
  const front = { 1: `http://127.0.0.1:${ports.one}`, 2: `http://127.0.0.1:${ports.two}` };
  // Both backends up (rise 1) and `two` answering from both replicas before any load.
  for (const n of /** @type {const} */ ([1, 2])) {
    const seen = new Set();
    const deadline = Date.now() + 10_000;
    while (seen.size < n) {
      const res = await fetch(`${front[n]}/readyz`).catch(() => null);
      await res?.arrayBuffer();
      const by = res?.status === 200 ? res.headers.get('x-served-by') : null;
      if (by) seen.add(by);
      if (Date.now() > deadline)
        throw new Error(`HAProxy does not route to ${n} replica(s):\n${proxy.log()}`);
      if (seen.size < n) await new Promise((r) => setTimeout(r, 100));
    }
  }

  const auth = {
    authorization: `Basic ${Buffer.from(`${cluster.client.id}:${cluster.client.secret}`).toString('base64')}`,
  };
  const M = 'urn:gatehouse:management';
  const scope = 'clients:read clients:write';
  const jwt = await cluster.token(M);
  const info = await fetch(`${front[1]}/tokeninfo`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth },
    body: form({ token: jwt }),
  });
  if (!(/** @type {any} */ (await info.json()).active))
    throw new Error('tokeninfo says the fresh token is inactive');

  // The request shapes of tools/bench/auth: RS256 JWT for the management API, tokeninfo of such a JWT (Basic).
  /** @type {[string, (n: 1 | 2) => { url: string; body: string; headers: Record<string, string> }][]} */
  const scenarios = [
    [
      'token RS256 JWT',
      (n) => ({
        url: `${front[n]}/token`,
        body: form({ grant_type: 'client_credentials', audience: M, scope }),
        headers: auth,
      }),
    ],
    [
      'tokeninfo JWT (Basic)',
      (n) => ({ url: `${front[n]}/tokeninfo`, body: form({ token: jwt }), headers: auth }),
    ],
  ];

  const runs = new Map();
  for (let round = 1; round <= rounds; round++) {
    for (const [name, request] of scenarios) {
      for (const n of /** @type {const} */ ([1, 2])) {
        // Warm-up (JIT, pools, HAProxy's server connections): 2 s in the first round, a touch in the others.
        const run = load === 'wrk' ? measureWrk : measure;
        await run(name, request(n), round === 1 ? 2 : load === 'wrk' ? 1 : 0.2);
        process.stderr.write(`  round ${round} ${n} replica(s) ${name} ...`);
        const r = await run(name, request(n), duration);
        const key = `${n}\t${name}`;
        if (!runs.has(key)) runs.set(key, []);
        runs.get(key).push(r);
        process.stderr.write(` ${Math.round(r.rps)}/s p99 ${r.p99} ms\n`);
      }
    }
  }
  for (const [key, rs] of runs) {
    const [n, name] = key.split('\t');
    results.push({
      replicas: Number(n),
      name,
      rps: median(rs.map((r) => r.rps)),
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      runs: rs.map((r) => Math.round(r.rps)),
    });
  }
} finally {
  await proxy?.stop();
  await cluster.close();
  rmSync(work, { recursive: true, force: true });
}

const placement = pinned
  ? `auth-1 pinned to CPU ${cpuLists[0]}, auth-2 to CPU ${cpuLists[1 % cpuLists.length]} (taskset); HAProxy, ` +
    `PostgreSQL, Redis and ${load === 'wrk' ? 'wrk' : 'autocannon (in this process)'} unpinned`
  : 'nothing pinned';
const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} vCPU, Node ${process.versions.node}; ${placement}; Redis ${redisUrl || 'off'}; load ${load}, ${connections} connections through HAProxy, median of ${rounds} interleaved ${duration} s runs (after a 2 s warm-up); load average at the end ${os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}`;
const of = (n, name) => results.find((r) => r.replicas === n && r.name === name);
const lines = [
  '| scenario | replicas | req/s (median) | runs req/s | p50 ms | p99 ms | non-2xx | errors | ratio 2/1 |',
  '|---|---:|---:|---|---:|---:|---:|---:|---:|',
  ...results.map((r) => {
    const one = of(1, r.name);
    const ratio = r.replicas === 2 && one ? `${(r.rps / one.rps).toFixed(2)}x` : '';
    return `| ${r.name} | ${r.replicas} | ${Math.round(r.rps)} | ${r.runs.join(', ')} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${ratio} |`;
  }),
];
console.log(`\nMachine: ${machine}\n`);
console.log(lines.join('\n'));
const ratios = [...new Set(results.map((r) => r.name))].map((name) => ({
  name,
  ratio: of(2, name).rps / of(1, name).rps,
}));
console.log(
  `\nTarget: 2 replicas >= 1.6x one. ${ratios.map((r) => `${r.name}: ${r.ratio.toFixed(2)}x ${r.ratio >= 1.6 ? 'met' : 'missed'}`).join('; ')}.`,
);
if (env.BENCH_JSON)
  writeFileSync(
    env.BENCH_JSON,
    JSON.stringify({ machine, date: new Date().toISOString(), results, ratios }, null, 2),
  );

// The other half of the scale-out question: what one more subscribed token server costs a management write. The
// feed benchmark measures exactly that; only its 1- and 3-subscriber phases are asked for here.
if (args.feed) {
  log('tools/bench/feed with 1 and 3 token servers subscribed');
  const feed = spawn(process.execPath, [fileURLToPath(new URL('../feed/run.mjs', import.meta.url))], {
    env: { ...env, BENCH_SUBSCRIBERS: env.BENCH_SUBSCRIBERS ?? '1,3' },
    stdio: 'inherit',
  });
  const code = await new Promise((resolve) => feed.once('exit', resolve));
  if (code !== 0) process.exitCode = Number(code) || 1;
}
