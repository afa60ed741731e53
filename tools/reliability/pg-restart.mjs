// PostgreSQL restart under load. 50 connections of mixed writes (tree node creates and moves,
// client and user creates, token issuance) while the embedded PostgreSQL is stopped for 5 s and started again.
// Pass: every request answered 2xx or 503 (never 500, never a hang over the timeout), readiness false during the
// outage, every write that got a 2xx present afterwards, nothing written twice, and every kind of request succeeding
// again within 5 s of the database's return, without restarting a service.
//
//   node tools/reliability/pg-restart.mjs   (RELIABILITY_CONNECTIONS, default 50; RELIABILITY_OUTAGE_SEC, default 5)
import pg from 'pg';
import { percentile, prepareLoad } from './lib/load.mjs';
import { buildServices, startStack } from './lib/stack.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function readyz(url) {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * @param {import('./lib/stack.mjs').Stack} stack  an embedded-PostgreSQL stack
 * @param {{ connections: number; outageMs: number; warmMs: number; afterMs: number; timeoutMs: number; log?: (s: string) => void }} o
 */
export async function pgRestart(stack, o) {
  const log = o.log ?? (() => undefined);
  const load = await prepareLoad(stack, { timeoutMs: o.timeoutMs });
  const services = { auth: stack.authUrl, identity: stack.identityUrl, tree: stack.treeUrl };
  const pids = Object.fromEntries(Object.entries(stack.procs).map(([k, p]) => [k, p.pid]));
  let stopAt = Infinity;
  let phase = 'warm';
  const readiness = {
    during: { checks: 0, ready: 0 },
    after: /** @type {Record<string, number | undefined>} */ ({}),
  };
  let dbDownAt = 0;
  let dbUpAt = 0;
  const firstSuccessAfterUp = /** @type {Record<string, number>} */ ({});

  const driving = load.drive({
    connections: o.connections,
    until: () => Date.now() >= stopAt,
    onOutcome: (out) => {
      if (
        phase === 'after' &&
        out.status >= 200 &&
        out.status < 300 &&
        firstSuccessAfterUp[out.kind] === undefined
      ) {
        firstSuccessAfterUp[out.kind] = out.at - dbUpAt;
      }
    },
  });

  await sleep(o.warmMs);
  phase = 'down';
  log('stopping PostgreSQL');
  await stack.stopDatabase();
  dbDownAt = Date.now();
  let restartingAt = Infinity;
  const pollDuring = (async () => {
    while (phase === 'down') {
      for (const url of Object.values(services)) {
        const ready = await readyz(url);
        // Only answers given while the database was surely down count (not those racing its start).
        if (Date.now() >= restartingAt) break;
        readiness.during.checks++;
        if (ready) readiness.during.ready++;
      }
      await sleep(250);
    }
  })();
  await sleep(o.outageMs);
  restartingAt = Date.now();
  await stack.startDatabase();
  dbUpAt = Date.now();
  phase = 'after';
  await pollDuring;
  log('PostgreSQL is back');
  await Promise.all(
    Object.entries(services).map(async ([name, url]) => {
      while (Date.now() - dbUpAt < 60_000) {
        if (await readyz(url)) {
          readiness.after[name] = Date.now() - dbUpAt;
          return;
        }
        await sleep(100);
      }
    }),
  );
  stopAt = Date.now() + o.afterMs;
  const outcomes = await driving;
  load.close();

  // What the database holds now, against what was answered.
  const db = new pg.Client({ connectionString: stack.dbUrl });
  await db.connect();
  /** @type {(sql: string, names: (string | undefined)[]) => Promise<Map<string, number>>} */
  const counts = async (sql, names) => {
    const { rows } = await db.query(sql, [names]);
    return new Map(rows.map((r) => [r.name, Number(r.n)]));
  };
  const named = (kind) => outcomes.filter((x) => x.kind === kind && x.name);
  const found = {
    'client create': await counts(
      'SELECT client_name AS name, count(*) AS n FROM clients WHERE client_name = ANY($1) GROUP BY 1',
      named('client create').map((x) => x.name),
    ),
    'user create': await counts(
      'SELECT user_name AS name, count(*) AS n FROM users WHERE user_name = ANY($1) GROUP BY 1',
      named('user create').map((x) => x.name),
    ),
    'node create': await counts(
      `SELECT n.code AS name, count(*) AS n FROM tree_nodes n WHERE n.code = ANY($1) GROUP BY 1`,
      named('node create').map((x) => x.name),
    ),
  };
  await db.end();
  const lost = [];
  const twice = [];
  for (const [kind, map] of Object.entries(found)) {
    for (const x of named(kind)) {
      const n = map.get(x.name) ?? 0;
      if (x.status >= 200 && x.status < 300 && n === 0) lost.push(`${kind} ${x.name}`);
      if (n > 1) twice.push(`${kind} ${x.name} x${n}`);
    }
  }
  const byStatus = {};
  for (const x of outcomes) byStatus[x.status] = (byStatus[x.status] ?? 0) + 1;
  const bad = outcomes.filter((x) => !((x.status >= 200 && x.status < 300) || x.status === 503));
  const restarted = Object.entries(stack.procs).filter(([k, p]) => p.pid !== pids[k] || p.exitCode !== null);
  const kinds = [...new Set(outcomes.map((x) => x.kind))];
  const slowest = Math.max(...kinds.map((k) => firstSuccessAfterUp[k] ?? Infinity));
  const problems = [];
  if (bad.length) {
    const sample = bad.slice(0, 5).map((x) => `${x.kind} -> ${x.status || x.error} ${x.body ?? ''}`);
    problems.push(`${bad.length} answers neither 2xx nor 503: ${sample.join(' | ')}`);
  }
  if (readiness.during.ready > 0)
    problems.push(`readiness true ${readiness.during.ready} times during the outage`);
  if (lost.length)
    problems.push(`${lost.length} acknowledged writes missing: ${lost.slice(0, 5).join(', ')}`);
  if (twice.length) problems.push(`${twice.length} writes found twice: ${twice.slice(0, 5).join(', ')}`);
  if (restarted.length) problems.push(`services restarted: ${restarted.map(([k]) => k).join(', ')}`);
  for (const [k, p] of restarted) {
    // why it stopped: its exit and the end of its log
    const tail = stack
      .logOf(/** @type {'auth' | 'identity' | 'tree'} */ (k))
      .trimEnd()
      .split('\n')
      .slice(-40)
      .join('\n');
    problems.push(`${k} exited (code ${p.exitCode}, signal ${p.signalCode}); its log ends:\n${tail}`);
  }
  if (!(slowest <= 5000))
    problems.push(
      `recovery took ${slowest} ms (first success per kind: ${JSON.stringify(firstSuccessAfterUp)})`,
    );
  for (const [name, ms] of Object.entries(readiness.after)) {
    if (ms === undefined || ms > 5000) problems.push(`${name} not ready within 5 s of the database's return`);
  }
  return {
    requests: outcomes.length,
    byStatus,
    outageMs: dbUpAt - dbDownAt,
    readinessDuring: readiness.during,
    readyAfterMs: readiness.after,
    firstSuccessAfterUpMs: firstSuccessAfterUp,
    p99Ms: Math.round(
      percentile(
        outcomes.map((x) => x.ms),
        99,
      ),
    ),
    maxMs: Math.round(outcomes.reduce((m, x) => Math.max(m, x.ms), 0)),
    acknowledgedWrites: Object.values(found).reduce((a, m) => a + [...m.values()].length, 0),
    lost: lost.length,
    twice: twice.length,
    problems,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  buildServices();
  const stack = await startStack({
    embedded: true,
    env: {
      RATE_LIMIT_POINTS: '1000000000',
      RATE_LIMIT_AUTH_FAILURES: '1000000000',
      DB_POOL_MAX: '20',
    },
    log: (s) => console.log(`  ${s}`),
  });
  let failed = true;
  try {
    const result = await pgRestart(stack, {
      connections: Number(process.env.RELIABILITY_CONNECTIONS ?? 50),
      outageMs: Number(process.env.RELIABILITY_OUTAGE_SEC ?? 5) * 1000,
      warmMs: 3000,
      afterMs: 10_000,
      timeoutMs: 15_000,
      log: (s) => console.log(`  ${s}`),
    });
    console.log(JSON.stringify(result, null, 2));
    failed = result.problems.length > 0;
    if (failed) {
      for (const name of /** @type {const} */ (['auth', 'identity', 'tree'])) {
        const lines = stack.logOf(name).split('\n');
        const crash = lines.findIndex((l) => /^(Error|error|[A-Za-z]+Error):/.test(l));
        const errors =
          crash >= 0
            ? lines.slice(crash, crash + 30)
            : lines.filter((l) => /"level":"(error|fatal)"/.test(l)).slice(0, 4);
        console.log(
          `--- ${name} (${lines.length} lines), first errors:\n${errors.join('\n').slice(0, 2500)}\n--- last lines:\n${lines.slice(-6).join('\n').slice(0, 2500)}`,
        );
      }
    }
  } finally {
    await stack.close();
  }
  console.log(failed ? 'pg-restart: FAILED' : 'pg-restart: passed');
  process.exit(failed ? 1 : 0);
}
