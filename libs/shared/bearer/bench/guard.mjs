#!/usr/bin/env node
// Bearer guard benchmark: `GET /api/v1/trees` behind BearerModule's guard with a cached token (the path of every
// authenticated tree and management request), one server process pinned to one core, autocannon in this process.
// Compares builds of libs, e.g. before and after a change of the guard:
//
//   npx swc libs -d dist/bench-after --config-file .swcrc --ignore '**/*.spec.ts' --only '**/*.ts' -q
//   node libs/shared/bearer/bench/guard.mjs dist/bench-before dist/bench-after
//
// (The builds must sit inside the repository, so that their imports find node_modules.)
// Variables: BENCH_DURATION (s, default 5), BENCH_CONNECTIONS (default 20), BENCH_ROUNDS (default 3, interleaved,
// median reported), BENCH_SERVER_CPUS (taskset list, default 0).
import { execFileSync, fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const duration = Number(env.BENCH_DURATION || 5);
const connections = Number(env.BENCH_CONNECTIONS || 20);
const rounds = Number(env.BENCH_ROUNDS || 3);
const cpus = env.BENCH_SERVER_CPUS ?? '0';
const variants = process.argv.slice(2).map((v) => path.resolve(v));
if (variants.length === 0) {
  console.error('usage: guard.mjs <dist root>...');
  process.exit(1);
}

function start(dist) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(here, 'guard-server.mjs'), [], {
      env: { ...env, GUARD_DIST: dist, PORT: '0' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    if (cpus !== '') {
      try {
        execFileSync('taskset', ['-pc', cpus, String(child.pid)], { stdio: 'ignore' });
      } catch {
        /* no taskset: unpinned */
      }
    }
    child.once('message', (/** @type {any} */ m) => resolve({ child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

async function measure(port) {
  const opts = {
    url: `http://127.0.0.1:${port}/api/v1/trees`,
    headers: { authorization: 'Bearer bench-token' },
    connections,
  };
  await autocannon({ ...opts, duration: 1 }); // warm-up (and the one /tokeninfo call)
  const r = await autocannon({ ...opts, duration });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

const results = new Map(variants.map((v) => [v, []]));
for (let i = 0; i < rounds; i++) {
  for (const v of variants) {
    const { child, port } = await start(v);
    results.get(v).push(await measure(port));
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log('| build | requests/s (median) | each round | p50 ms | p99 ms | non-2xx |');
console.log('|---|---|---|---|---|---|');
for (const [v, rs] of results) {
  console.log(
    `| ${path.basename(v)} | ${Math.round(median(rs.map((r) => r.rps)))} | ${rs.map((r) => Math.round(r.rps)).join(', ')} | ` +
      `${median(rs.map((r) => r.p50))} | ${median(rs.map((r) => r.p99))} | ${rs.reduce((n, r) => n + r.non2xx, 0)} |`,
  );
}
