// `npm run reliability`: every scenario of the reliability suite in full, on this machine, one after the other, each on
// a fresh stack (embedded PostgreSQL, the three services built into dist/). Prints each scenario's figures and writes
// them all to RELIABILITY_JSON (default docs/reliability-results.json); exits 1 when a scenario failed.
//
//   npm run reliability                      all of them (about 20 minutes: the soak alone is 10)
//   npm run reliability -- fuzz pg-restart   only those (fuzz, pg-restart, auth-down, soak)
//
// Variables: RELIABILITY_SEED (fuzz seed; printed, replayable), RELIABILITY_FUZZ_REQUESTS (10,000 per service),
// RELIABILITY_CONNECTIONS (50), RELIABILITY_OUTAGE_SEC (5), RELIABILITY_SOAK_SEC (600), RELIABILITY_WARMUP_SEC (60),
// RELIABILITY_CACHE_TTL_SEC (5), RELIABILITY_SKIP_BUILD=1 (use dist/ as it is).
import { randomInt } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { authDown } from './auth-down.mjs';
import { fuzzStack, summarizeFailures } from './fuzz.mjs';
import { pgRestart } from './pg-restart.mjs';
import { soak } from './soak.mjs';
import { buildServices, ROOT, startStack } from './lib/stack.mjs';

const env = process.env;
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const all = ['fuzz', 'pg-restart', 'auth-down', 'soak'];
const scenarios = wanted.length ? all.filter((s) => wanted.includes(s)) : all;
const out = env.RELIABILITY_JSON ?? path.join(ROOT, 'docs/reliability-results.json');
const log = (s) => console.log(`  ${s}`);
const unlimited = { RATE_LIMIT_POINTS: '1000000000', RATE_LIMIT_AUTH_FAILURES: '1000000000' };

/** Runs `fn` on a fresh stack and always closes it. */
async function onStack(opts, fn) {
  const stack = await startStack({ log, ...opts });
  try {
    return await fn(stack);
  } finally {
    await stack.close();
  }
}

buildServices();
const report = {
  machine: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  startedAt: new Date().toISOString(),
  results: /** @type {Record<string, any>} */ ({}),
};
let failed = false;
for (const name of scenarios) {
  console.log(`\n== ${name}`);
  const started = Date.now();
  let result;
  try {
    if (name === 'fuzz') {
      const seed = Number(env.RELIABILITY_SEED ?? randomInt(1, 2 ** 31 - 1));
      const requests = Number(env.RELIABILITY_FUZZ_REQUESTS ?? 10_000);
      console.log(`  seed ${seed} (replay: RELIABILITY_SEED=${seed} npm run reliability -- fuzz)`);
      // Multi-instance mode on, so the instance operations are fuzzed too (off, they answer a documented 501).
      const services = await onStack({ env: { ...unlimited, MULTI_INSTANCE: 'true' } }, (s) =>
        fuzzStack(s, { requests, seed, log }),
      );
      const problems = services.flatMap((r) =>
        summarizeFailures(r.failures).map(
          (g) => `${r.service}: x${g.count} ${g.key} (e.g. ${g.example.request} [${g.example.note}])`,
        ),
      );
      result = {
        seed,
        services: services.map(({ failures, ...r }) => ({ ...r, failures: failures.length })),
        problems,
      };
    } else if (name === 'pg-restart') {
      result = await onStack({ embedded: true, env: { ...unlimited, DB_POOL_MAX: '20' } }, (s) =>
        pgRestart(s, {
          connections: Number(env.RELIABILITY_CONNECTIONS ?? 50),
          outageMs: Number(env.RELIABILITY_OUTAGE_SEC ?? 5) * 1000,
          warmMs: 3000,
          afterMs: 10_000,
          timeoutMs: 15_000,
          log,
        }),
      );
    } else if (name === 'auth-down') {
      const cacheTtlSec = Number(env.RELIABILITY_CACHE_TTL_SEC ?? 5);
      result = await onStack({ env: { BEARER_CACHE_TTL_SEC: String(cacheTtlSec) } }, (s) =>
        authDown(s, { cacheTtlSec, log }),
      );
    } else if (name === 'soak') {
      result = await onStack({ env: unlimited }, (s) =>
        soak(s, {
          seconds: Number(env.RELIABILITY_SOAK_SEC ?? 600),
          warmupSec: Number(env.RELIABILITY_WARMUP_SEC ?? 60),
          connections: Number(env.RELIABILITY_CONNECTIONS ?? 50),
          log,
        }),
      );
    }
  } catch (err) {
    result = { problems: [`the scenario itself failed: ${err instanceof Error ? err.stack : err}`] };
  }
  result.seconds = Math.round((Date.now() - started) / 1000);
  result.ranAt = new Date(started).toISOString();
  report.results[name] = result;
  console.log(JSON.stringify(result, null, 2));
  if (result.problems?.length) failed = true;
  console.log(`== ${name}: ${result.problems?.length ? 'FAILED' : 'passed'} in ${result.seconds} s`);
}
report.finishedAt = new Date().toISOString();
// A run of some scenarios keeps the others' last results in the file (each result says when it ran).
let previous = {};
try {
  previous = JSON.parse(readFileSync(out, 'utf8')).results ?? {};
} catch {
  /* no earlier results */
}
report.results = { ...previous, ...report.results };
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(
  `\nresults written to ${path.relative(ROOT, out)}; ${failed ? 'FAILED' : 'every scenario passed'}`,
);
process.exit(failed ? 1 : 0);
