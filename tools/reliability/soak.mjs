// Soak: mixed load (tree node creates and moves, client and user creates, token issuance) at 50
// connections for 10 minutes. Pass: zero errors (every answer 2xx), the RSS of each service grows less than 10% from
// the end of the warm-up to the end, and p99 is steady (the last minute within 20% of the first minute after the
// warm-up).
//
//   node tools/reliability/soak.mjs   (RELIABILITY_SOAK_SEC, default 600; RELIABILITY_WARMUP_SEC, default 60;
//                                      RELIABILITY_CONNECTIONS, default 50)
import { percentile, prepareLoad } from './lib/load.mjs';
import { buildServices, rssBytes, startStack } from './lib/stack.mjs';

/**
 * @param {import('./lib/stack.mjs').Stack} stack
 * @param {{ seconds: number; warmupSec: number; connections: number; windowSec?: number; floorSec?: number; steadiness?: boolean; log?: (s: string) => void }} o
 *   steadiness: false skips the RSS-growth and p99 checks (a short smoke run measures neither meaningfully)
 */
export async function soak(stack, o) {
  const log = o.log ?? (() => undefined);
  const windowMs = (o.windowSec ?? 60) * 1000;
  const load = await prepareLoad(stack, { timeoutMs: 15_000 });
  const startedAt = Date.now();
  const warmEnd = startedAt + o.warmupSec * 1000;
  const endAt = startedAt + o.seconds * 1000;
  const services = /** @type {const} */ (['auth', 'identity', 'tree']);
  const urls = { auth: stack.authUrl, identity: stack.identityUrl, tree: stack.treeUrl };
  /** The V8 heap in use, from the service's own /metrics (prom-client's default metrics). */
  const heapUsed = async (name) => {
    try {
      const text = await (await fetch(`${urls[name]}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
      const m = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(text);
      return m ? Number(m[1]) : undefined;
    } catch {
      return undefined;
    }
  };
  /** @type {{ at: number; rss: Record<string, number | undefined>; heap: Record<string, number | undefined> }[]} */
  const samples = [];
  const sample = async () => {
    /** @type {Record<string, number | undefined>} */
    const rss = {};
    /** @type {Record<string, number | undefined>} */
    const heap = {};
    for (const name of services) {
      rss[name] = rssBytes(stack.procs[name].pid);
      heap[name] = await heapUsed(name);
    }
    samples.push({ at: Date.now(), rss, heap });
  };
  await sample();
  const sampler = setInterval(() => void sample(), 5000);
  const progress = setInterval(() => log(`${Math.round((Date.now() - startedAt) / 1000)} s`), 60_000);
  let outcomes;
  try {
    outcomes = await load.drive({ connections: o.connections, until: () => Date.now() >= endAt });
  } finally {
    clearInterval(sampler);
    clearInterval(progress);
    load.close();
  }
  await sample();
  const measured = outcomes.filter((x) => x.at >= warmEnd);
  const errors = outcomes.filter((x) => !(x.status >= 200 && x.status < 300));
  const first = measured.filter((x) => x.at < warmEnd + windowMs).map((x) => x.ms);
  const last = measured.filter((x) => x.at >= endAt - windowMs).map((x) => x.ms);
  const p99First = percentile(first, 99);
  const p99Last = percentile(last, 99);
  // RSS of a garbage-collected runtime is a sawtooth: the heap grows until a major collection, then drops (seen here:
  // 190-330 MB within two minutes at a steady load). A leak shows as a rising floor, so growth is measured on the
  // floor (the lowest sample) of the first and the last `floorSec` (default 120 s, a few collections) after the
  // warm-up; the peaks are reported beside it.
  const floorMs = (o.floorSec ?? 120) * 1000;
  const early = samples.filter((x) => x.at >= warmEnd && x.at < warmEnd + floorMs);
  const late = samples.filter((x) => x.at >= endAt - floorMs);
  const floor = (rows, key, name) => Math.min(...rows.map((r) => r[key][name] ?? Infinity));
  const peak = (rows, key, name) => Math.max(...rows.map((r) => r[key][name] ?? 0));
  const growth = Object.fromEntries(
    services.map((k) => [k, floor(late, 'rss', k) / floor(early, 'rss', k) - 1]),
  );
  const mb = (b) => Math.round(((b ?? 0) / 1024 / 1024) * 10) / 10;
  const problems = [];
  if (errors.length) {
    const sample = errors.slice(0, 5).map((x) => `${x.kind} -> ${x.status || x.error} ${x.body ?? ''}`);
    problems.push(`${errors.length} errors: ${sample.join(' | ')}`);
  }
  const steadiness = o.steadiness ?? true;
  for (const [k, g] of Object.entries(growth)) {
    if (steadiness && !(g < 0.1))
      problems.push(`${k} RSS floor grew ${(g * 100).toFixed(1)}% after the warm-up`);
  }
  if (steadiness && (p99Last > p99First * 1.2 || p99Last < p99First * 0.8)) {
    problems.push(
      `p99 not steady: first minute ${p99First.toFixed(1)} ms, last minute ${p99Last.toFixed(1)} ms`,
    );
  }
  const byKind = {};
  for (const x of measured) (byKind[x.kind] ??= []).push(x.ms);
  return {
    seconds: o.seconds,
    warmupSec: o.warmupSec,
    connections: o.connections,
    requests: outcomes.length,
    requestsPerSec: Math.round(measured.length / ((endAt - warmEnd) / 1000)),
    errors: errors.length,
    p99FirstMinuteMs: Math.round(p99First * 10) / 10,
    p99LastMinuteMs: Math.round(p99Last * 10) / 10,
    p99ByKindMs: Object.fromEntries(
      Object.entries(byKind).map(([k, v]) => [k, Math.round(percentile(v, 99))]),
    ),
    memoryMB: Object.fromEntries(
      services.map((k) => [
        k,
        {
          rssAtStart: mb(samples[0].rss[k]),
          rssFloorFirst: mb(floor(early, 'rss', k)),
          rssFloorLast: mb(floor(late, 'rss', k)),
          rssPeakFirst: mb(peak(early, 'rss', k)),
          rssPeakLast: mb(peak(late, 'rss', k)),
          heapFloorFirst: mb(floor(early, 'heap', k)),
          heapFloorLast: mb(floor(late, 'heap', k)),
        },
      ]),
    ),
    rssFloorGrowthPct: Object.fromEntries(
      Object.entries(growth).map(([k, g]) => [k, Math.round(g * 1000) / 10]),
    ),
    problems,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  buildServices();
  const stack = await startStack({
    env: { RATE_LIMIT_POINTS: '1000000000', RATE_LIMIT_AUTH_FAILURES: '1000000000' },
    adminUrl: process.env.RELIABILITY_PG_URL,
    embedded: !process.env.RELIABILITY_PG_URL,
    log: (s) => console.log(`  ${s}`),
  });
  let failed = true;
  try {
    const result = await soak(stack, {
      seconds: Number(process.env.RELIABILITY_SOAK_SEC ?? 600),
      warmupSec: Number(process.env.RELIABILITY_WARMUP_SEC ?? 60),
      connections: Number(process.env.RELIABILITY_CONNECTIONS ?? 50),
      log: (s) => console.log(`  ${s}`),
    });
    console.log(JSON.stringify(result, null, 2));
    failed = result.problems.length > 0;
  } finally {
    await stack.close();
  }
  console.log(failed ? 'soak: FAILED' : 'soak: passed');
  process.exit(failed ? 1 : 0);
}
