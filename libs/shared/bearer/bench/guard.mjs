#!/usr/bin/env node
// Bearer guard benchmark: `GET /api/v1/trees` behind BearerModule's guard with a cached token (the path of every
// authenticated tree and management request), one server process pinned to one core, autocannon in this process.
// Compares builds of libs, e.g. before and after a change of the guard:
//
//   npx swc libs -d dist/bench-after --config-file .swcrc --ignore '**/*.spec.ts' --only '**/*.ts' -q
//   node libs/shared/bearer/bench/guard.mjs dist/bench-before dist/bench-after
//
// (The builds must sit inside the repository, so that their imports find node_modules.)
// Variables: forkedBenchSettings's (tools/bench/lib/forked.mjs).
import path from 'node:path';
import * as bench from '../../../../tools/bench/lib/forked.mjs';

const settings = bench.forkedBenchSettings('guard.mjs <dist root>...');
const { duration, connections, rounds, cpus } = settings;
const variants = settings.variants.map((v) => path.resolve(v));

const start = (dist) =>
  bench.forkServer(new URL('./guard-server.mjs', import.meta.url), { GUARD_DIST: dist, PORT: '0' }, cpus);

const measure = (port) =>
  bench.measureWarm(
    {
      url: `http://127.0.0.1:${port}/api/v1/trees`,
      headers: { authorization: 'Bearer bench-token' },
      connections,
    },
    duration, // the warm-up also makes the one /tokeninfo call
  );

const results = new Map(variants.map((v) => [v, []]));
for (let i = 0; i < rounds; i++) {
  for (const v of variants) {
    const { child, port } = await start(v);
    results.get(v).push(await measure(port));
    await bench.stopServer(child);
  }
}
const median = bench.medianOfRounds;
console.log('| build | requests/s (median) | each round | p50 ms | p99 ms | non-2xx |');
console.log('|---|---|---|---|---|---|');
for (const [v, rs] of results) {
  console.log(
    `| ${path.basename(v)} | ${Math.round(median(rs.map((r) => r.rps)))} | ${rs.map((r) => Math.round(r.rps)).join(', ')} | ` +
      `${median(rs.map((r) => r.p50))} | ${median(rs.map((r) => r.p99))} | ${rs.reduce((n, r) => n + r.non2xx, 0)} |`,
  );
}
