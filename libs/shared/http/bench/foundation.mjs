#!/usr/bin/env node
// Foundation overhead benchmark: `GET /ping` (a raw Express handler) through createHttpApp, against Express
// alone, one server process pinned to one core, autocannon in this process.
//
//   npx swc libs -d /tmp/gh-after --config-file .swcrc --ignore '**/*.spec.ts' --only '**/*.ts' -q
//   node libs/shared/http/bench/foundation.mjs express node /tmp/gh-before /tmp/gh-after lane:/tmp/gh-after
//
// Each argument is a variant: `express` (Express alone), `node` (node:http alone, the floor of the fast lane), the
// swc output root of libs (so a before/after compares two builds), or `lane:<root>` (the same build serving /ping
// on its fast lane: a raw node handler behind request id, log, metrics and rate limits, without Express).
// Variables: BENCH_DURATION (s, default 5), BENCH_CONNECTIONS (default 20), BENCH_ROUNDS (default 3, interleaved,
// median reported), BENCH_LEVELS (log levels, default 'warn,info'), BENCH_SERVER_CPUS (taskset list, default 0).
import { fork, execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const duration = Number(env.BENCH_DURATION || 5);
const connections = Number(env.BENCH_CONNECTIONS || 20);
const rounds = Number(env.BENCH_ROUNDS || 3);
const levels = (env.BENCH_LEVELS || 'warn,info').split(',');
const cpus = env.BENCH_SERVER_CPUS ?? '0';
const variants = process.argv.slice(2);
if (variants.length === 0) {
  console.error('usage: foundation.mjs <express|dist root>...');
  process.exit(1);
}

function start(variant, level) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(here, 'server.mjs'), [], {
      env: {
        ...env,
        FOUNDATION_DIST: variant.replace(/^lane:/, ''),
        FOUNDATION_LANE: variant.startsWith('lane:') ? '1' : '0',
        LOG_LEVEL: level,
        PORT: '0',
      },
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
  const url = `http://127.0.0.1:${port}/ping`;
  await autocannon({ url, connections, duration: 1 }); // warm-up
  const r = await autocannon({ url, connections, duration });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

const cases = [];
const floor = (v) => v === 'express' || v === 'node';
for (const v of variants) for (const level of floor(v) ? ['-'] : levels) cases.push({ v, level });
const results = new Map(cases.map((c) => [c, []]));
for (let i = 0; i < rounds; i++) {
  for (const c of cases) {
    const { child, port } = await start(c.v, c.level === '-' ? 'warn' : c.level);
    results.get(c).push(await measure(port));
    child.removeAllListeners('exit');
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ${os.cpus().length} CPUs, ${duration}s x ${rounds} rounds, ${connections} connections`,
);
console.log('| variant | LOG_LEVEL | req/s (median) | rounds | p50 ms | p99 ms | µs/request | errors |');
console.log('|---|---|---:|---|---:|---:|---:|---:|');
for (const c of cases) {
  const rs = results.get(c);
  const rps = median(rs.map((r) => r.rps));
  console.log(
    `| ${c.v} | ${c.level} | ${Math.round(rps)} | ${rs.map((r) => Math.round(r.rps)).join(', ')} | ${median(rs.map((r) => r.p50))} | ${median(rs.map((r) => r.p99))} | ${(1e6 / rps).toFixed(0)} | ${rs.reduce((s, r) => s + r.non2xx, 0)} |`,
  );
}
