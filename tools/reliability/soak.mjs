// Soak (issue 17, part 4): mixed load (tree node creates and moves, client and user creates, token issuance) at 50
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
 * @param {{ seconds: number; warmupSec: number; connections: number; windowSec?: number; steadiness?: boolean; log?: (s: string) => void }} o
 *   steadiness: false skips the RSS-growth and p99 checks (a short smoke run measures neither meaningfully)
 */
export async function soak(stack, o) {
  const log = o.log ?? (() => undefined);
  const windowMs = (o.windowSec ?? 60) * 1000;
  const load = await prepareLoad(stack, { timeoutMs: 15_000 });
  const startedAt = Date.now();
  const warmEnd = startedAt + o.warmupSec * 1000;
  const endAt = startedAt + o.seconds * 1000;
  /** @type {{ at: number; auth?: number; identity?: number; tree?: number }[]} */
  const rss = [];
  const sample = () => {
    rss.push({
      at: Date.now(),
      auth: rssBytes(stack.procs.auth.pid),
      identity: rssBytes(stack.procs.identity.pid),
      tree: rssBytes(stack.procs.tree.pid),
    });
  };
  sample();
  const sampler = setInterval(sample, 5000);
  const progress = setInterval(() => log(`${Math.round((Date.now() - startedAt) / 1000)} s`), 60_000);
  let outcomes;
  try {
    outcomes = await load.drive({ connections: o.connections, until: () => Date.now() >= endAt });
  } finally {
    clearInterval(sampler);
    clearInterval(progress);
    load.close();
  }
  sample();
  const measured = outcomes.filter((x) => x.at >= warmEnd);
  const errors = outcomes.filter((x) => !(x.status >= 200 && x.status < 300));
  const first = measured.filter((x) => x.at < warmEnd + windowMs).map((x) => x.ms);
  const last = measured.filter((x) => x.at >= endAt - windowMs).map((x) => x.ms);
  const p99First = percentile(first, 99);
  const p99Last = percentile(last, 99);
  const atWarmEnd = rss.find((r) => r.at >= warmEnd) ?? rss[rss.length - 1];
  const atEnd = rss[rss.length - 1];
  const growth = Object.fromEntries(
    ['auth', 'identity', 'tree'].map((k) => [k, (atEnd[k] ?? 0) / (atWarmEnd[k] || 1) - 1]),
  );
  const mb = (b) => Math.round(((b ?? 0) / 1024 / 1024) * 10) / 10;
  const problems = [];
  if (errors.length) {
    const sample = errors.slice(0, 5).map((x) => `${x.kind} -> ${x.status || x.error} ${x.body ?? ''}`);
    problems.push(`${errors.length} errors: ${sample.join(' | ')}`);
  }
  const steadiness = o.steadiness ?? true;
  for (const [k, g] of Object.entries(growth)) {
    if (steadiness && g >= 0.1) problems.push(`${k} RSS grew ${(g * 100).toFixed(1)}% after the warm-up`);
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
    rssMB: {
      start: { auth: mb(rss[0].auth), identity: mb(rss[0].identity), tree: mb(rss[0].tree) },
      warmEnd: { auth: mb(atWarmEnd.auth), identity: mb(atWarmEnd.identity), tree: mb(atWarmEnd.tree) },
      end: { auth: mb(atEnd.auth), identity: mb(atEnd.identity), tree: mb(atEnd.tree) },
    },
    rssGrowthPct: Object.fromEntries(Object.entries(growth).map(([k, g]) => [k, Math.round(g * 1000) / 10])),
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
