#!/usr/bin/env node
// The raw cost of one argon2id verification on this CPU, with the token server's own code and parameters (the built
// libs/identity/data/src/passwords.js: hashPassword, verifyPassword), so a login benchmark can say how close it runs
// to the hash-bound ceiling. codeflow.mjs runs it pinned to the servers' core; alone:
//
//   taskset -c 0 node tools/bench/auth/argon2-cost.mjs        (BENCH_ROOT: the checkout whose dist/ is used)
//
// Prints one JSON line: the parameters read back from a fresh hash's PHC string, the median and p90 of ARGON2_RUNS
// (default 40) sequential verifications in ms, and the ceiling that makes on one core (1000 / median).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, percentile } from '../lib/stats.mjs';

const root = process.env.BENCH_ROOT
  ? path.resolve(process.env.BENCH_ROOT)
  : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const passwordsJs = path.join(root, 'dist/apps/auth/libs/identity/data/src/passwords.js');
if (!existsSync(passwordsJs)) {
  console.error(`${passwordsJs} is missing: build first (npx nx run auth:build)`);
  process.exit(1);
}
const { hashPassword, verifyPassword } = await import(pathToFileURL(passwordsJs).href);
const runs = Number(process.env.ARGON2_RUNS || 40);
const password = 'bench-password-1';
const hash = await hashPassword(password);
// $argon2id$v=19$m=19456,t=2,p=1$salt$hash
const [, algorithm, version, params] = hash.split('$');
const times = [];
for (let i = 0; i < runs + 3; i++) {
  const t0 = performance.now();
  if (!(await verifyPassword(hash, password))) throw new Error('argon2 verify failed');
  // the first three warm up (the 19 MiB allocation, the thread pool)
  if (i >= 3) times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const p50 = median(times);
const p90 = percentile(times, 90);
console.log(
  JSON.stringify({
    algorithm,
    version,
    params,
    runs,
    medianMs: Number(p50.toFixed(2)),
    p90Ms: Number(p90.toFixed(2)),
    ceilingPerCore: Number((1000 / p50).toFixed(1)),
  }),
);
