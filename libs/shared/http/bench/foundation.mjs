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
// Variables: BENCH_LEVELS (log levels, default 'warn,info') and forkedBenchSettings's (tools/bench/lib/forked.mjs).
import os from 'node:os';
import * as bench from '../../../../tools/bench/lib/forked.mjs';

const { duration, connections, rounds, cpus, variants } = bench.forkedBenchSettings(
  'foundation.mjs <express|dist root>...',
);
const levels = (process.env.BENCH_LEVELS || 'warn,info').split(',');

const start = (variant, level) =>
  bench.forkServer(
    new URL('./server.mjs', import.meta.url),
    {
      FOUNDATION_DIST: variant.replace(/^lane:/, ''),
      FOUNDATION_LANE: variant.startsWith('lane:') ? '1' : '0',
      LOG_LEVEL: level,
      PORT: '0',
    },
    cpus,
  );

const measure = (port) => bench.measureWarm({ url: `http://127.0.0.1:${port}/ping`, connections }, duration);

const cases = [];
const floor = (v) => v === 'express' || v === 'node';
for (const v of variants) for (const level of floor(v) ? ['-'] : levels) cases.push({ v, level });
const results = new Map(cases.map((c) => [c, []]));
for (let i = 0; i < rounds; i++) {
  for (const c of cases) {
    const { child, port } = await start(c.v, c.level === '-' ? 'warn' : c.level);
    results.get(c).push(await measure(port));
    await bench.stopServer(child);
  }
}
const median = bench.medianOfRounds;
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
