#!/usr/bin/env node
// The regression guard: the hot paths of a git ref ("before") and of this work tree ("after"), built side
// by side and measured in short interleaved A/B rounds by the same benchmark scripts (this work tree's
// tools/bench/{auth,rbac,identity,tree}/run.mjs, pointed at either build with BENCH_ROOT). Prints, per path, the
// median of each side, the ratio after/before and its spread over the rounds. A benchmark, not a test: CI does not
// run it and nothing fails on a ratio.
//
//   npm run bench:compare -- <git ref> [--rounds N] [--duration S] [--only name,name] [--list]
//   npm run bench:compare -- --same --before-env NAME=VALUE [--after-env NAME=VALUE] [...]
//
//   <git ref>      what "before" is: a branch, tag or commit (e.g. main, HEAD~3). "after" is the work tree as it is,
//                  uncommitted changes included.
//   --rounds N     A/B rounds (default 3). Each round runs every selected benchmark once against each build, the
//                  order swapped every round (before, after; then after, before) so a drift of the machine's load
//                  hits both alike. Medians and the spread are over the rounds.
//   --duration S   seconds of each measured autocannon run (default 5; each after a 2 s warm-up).
//   --only a,b     a subset of the paths (names: --list). Default: all eight, about 2.5 minutes a round on 2 vCPU
//                  at the default duration.
//   --list         print the path names and exit.
//   --same         no ref: both sides are the work tree, told apart by their environments (a setting's cost, e.g.
//                  `--same --before-env AUTH_EVENTS=false`: the token server without its audit events).
//   --before-env NAME=VALUE, --after-env NAME=VALUE
//                  a variable for that side's benchmark and the services it starts (repeatable; with or without a ref).
//
// The ref is exported with `git archive` into .bench-compare/<sha>/ (ignored by git), with a symlink to this work
// tree's node_modules, and built there with Nx; it stays there for the next run (delete the folder to rebuild). The
// work tree is built too (`nx run-many -t build -p auth,identity,tree`). PostgreSQL: BENCH_PG_URL, TEST_PG_URL,
// DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres, as the benchmarks themselves (the tree benchmark too,
// not its embedded server); every run makes and drops its own databases, after a CHECKPOINT. Each benchmark runs in
// its own process group: on Ctrl-C or SIGTERM the group is ended, servers included (that benchmark's throw-away
// database may stay). Variables the benchmarks read (BENCH_SERVER_CPUS, BENCH_CONNECTIONS, ...) pass through.
//
// Reading the ratios: > 1.00 is faster after, < 1.00 slower. For req/s rows the ratio is after/before of req/s; for
// the tree's ms rows it is before/after of the time (speed, so the same direction). The spread is the lowest and the
// highest per-round ratio: a spread that straddles 1.00 means no difference this run can tell (the "reading" column
// says "within noise"; "faster" or "SLOWER" only when every round agrees by more than 5%, with a "?" when the load
// average was above 0.75 per vCPU: on a shared machine that can be noise too). One round gives no spread.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { median } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

/**
 * The benchmarks a round runs, each once per side, and the paths read from its BENCH_JSON.
 * @typedef {{ name: string; label: string; bench: string; unit: 'req/s' | 'ms'; pick: (json: any) => any }} Path
 * @type {Path[]}
 */
const PATHS = [
  {
    name: 'cc',
    label: 'client_credentials RS256 JWT',
    bench: 'auth',
    unit: 'req/s',
    pick: (j) => j.results.find((r) => r.server === 'gatehouse' && r.name === 'token RS256 JWT'),
  },
  {
    name: 'tokeninfo',
    label: '/tokeninfo JWT (Basic)',
    bench: 'auth',
    unit: 'req/s',
    pick: (j) => j.results.find((r) => r.server === 'gatehouse' && r.name === 'tokeninfo JWT (Basic)'),
  },
  {
    name: 'password',
    label: 'password grant (argon2id)',
    bench: 'rbac',
    unit: 'req/s',
    pick: (j) => j.results.find((r) => r.name === 'password grant, resource without RBAC'),
  },
  {
    name: 'tree-list',
    label: 'tree list (10 trees), 10 connections',
    bench: 'tree',
    unit: 'req/s',
    pick: (j) => j.throughput.find((/** @type {any} */ r) => r.name.startsWith('List the trees')),
  },
  {
    name: 'tree-read',
    label: 'tree subtree read (11,111 nodes)',
    bench: 'tree',
    unit: 'ms',
    pick: (j) => j.results.find((r) => r.name.startsWith('Read a subtree')),
  },
  {
    name: 'tree-move',
    label: 'tree move (1,111 nodes)',
    bench: 'tree',
    unit: 'ms',
    pick: (j) => j.results.find((r) => r.name.startsWith('Move a subtree')),
  },
  {
    name: 'mgmt-list',
    label: 'management list q+sort+total_count',
    bench: 'identity',
    unit: 'req/s',
    pick: (j) => j.results.find((r) => r.name.startsWith('v1 list: q tenant_id')),
  },
  {
    name: 'mgmt-write',
    label: 'management write (PATCH client)',
    bench: 'identity',
    unit: 'req/s',
    pick: (j) => j.results.find((r) => r.name.startsWith('v1 write: PATCH')),
  },
];

/** What each benchmark is told to run, from the selected paths. */
const BENCH_ENV = {
  auth: (sel) => ({
    BENCH_ONLY: [sel.has('cc') && 'token RS256 JWT', sel.has('tokeninfo') && 'tokeninfo JWT (Basic)']
      .filter(Boolean)
      .join(','),
    BENCH_BARE: '0',
    BENCH_MEMORY: '0',
  }),
  rbac: () => ({ BENCH_ONLY: 'password grant, resource without RBAC' }),
  identity: (sel) => ({
    BENCH_ONLY: [sel.has('mgmt-list') && 'v1 list: q tenant_id', sel.has('mgmt-write') && 'v1 write: PATCH']
      .filter(Boolean)
      .join('|'),
  }),
  tree: (sel) => ({
    BENCH_ONLY: ['list', 'read', 'move'].filter((o) => sel.has(`tree-${o}`)).join(','),
    // 111,111 nodes: a subtree read of 11,111 and a move of 1,111, seconds rather than minutes a run.
    BENCH_DEPTH: '5',
    BENCH_REPEAT: '3',
    BENCH_LIST_REQUESTS: '300',
    BENCH_LIST_ROUTES: 'trees',
    BENCH_LIST_SECONDS: String(duration),
  }),
};

// ------------------------------------------------------------------------------------------------ arguments
const args = process.argv.slice(2);
let ref;
let rounds = 3;
let duration = 5;
let only;
let same = false;
/** Variables per side (--before-env, --after-env). */
const sideEnv = { before: {}, after: {} };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--same') same = true;
  else if (a === '--before-env' || a === '--after-env') {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(args[++i] ?? '');
    if (!m) usage(`${a} takes NAME=VALUE`);
    sideEnv[a === '--before-env' ? 'before' : 'after'][m[1]] = m[2];
  } else if (a === '--rounds') rounds = Number(args[++i]);
  else if (a === '--duration') duration = Number(args[++i]);
  else if (a === '--only') only = args[++i].split(',').map((s) => s.trim());
  else if (a === '--list') {
    for (const p of PATHS) console.log(`${p.name.padEnd(11)} ${p.label} (tools/bench/${p.bench})`);
    process.exit(0);
  } else if (a.startsWith('--')) usage(`unknown option ${a}`);
  else if (ref === undefined) ref = a;
  else usage(`one ref only, got ${ref} and ${a}`);
}
if (same && ref) usage('--same compares the work tree with itself: no ref');
if (!same && !ref) usage('a git ref to compare with (or --same) is required');
if (same && !Object.keys(sideEnv.before).length && !Object.keys(sideEnv.after).length) {
  usage('--same needs --before-env or --after-env: what tells the sides apart');
}
if (!(rounds >= 1) || !(duration > 0)) usage('--rounds and --duration take positive numbers');
for (const o of only ?? []) {
  if (!PATHS.some((p) => p.name === o)) usage(`unknown path ${o}`);
}
const selected = new Set(only ?? PATHS.map((p) => p.name));
const paths = PATHS.filter((p) => selected.has(p.name));
const benches = [...new Set(paths.map((p) => p.bench))];

/** @returns {never} */
function usage(message) {
  console.error(`bench:compare: ${message}`);
  console.error(
    'usage: npm run bench:compare -- <git ref> | --same [--before-env NAME=VALUE] [--after-env NAME=VALUE]' +
      ' [--rounds N] [--duration S] [--only name,name] [--list]',
  );
  process.exit(2);
}

const log = (...a) => console.error('[compare]', ...a);
const git = (...a) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();

// ------------------------------------------------------------------------------------------------ builds
const sha = (() => {
  if (same) return git('rev-parse', 'HEAD');
  try {
    return git('rev-parse', '--verify', `${ref}^{commit}`);
  } catch {
    return usage(`not a commit: ${ref}`);
  }
})();
const headSha = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const beforeRoot = same ? root : path.join(root, '.bench-compare', sha);
const builtStamp = path.join(beforeRoot, '.bench-compare-built');

/** Nx's build of the three apps in `cwd`, with the output shown on failure. */
function build(cwd, extra = []) {
  execFileSync(
    'npx',
    ['nx', 'run-many', '-t', 'build', '-p', 'auth,identity,tree', '--outputStyle=static', ...extra],
    {
      cwd,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
    },
  );
}

if (same) {
  // both sides are the work tree, built below
} else if (!existsSync(builtStamp)) {
  log(`exporting ${ref} (${sha.slice(0, 12)}) to ${path.relative(root, beforeRoot)}`);
  rmSync(beforeRoot, { recursive: true, force: true });
  mkdirSync(beforeRoot, { recursive: true });
  execFileSync('sh', ['-c', `git archive --format=tar ${sha} | tar -x -C "${beforeRoot}"`], {
    cwd: root,
    stdio: 'inherit',
  });
  // The work tree's installed packages: the ref is measured with the same dependencies (a ref whose package.json
  // differs is measured with today's packages; say so when comparing across a dependency upgrade).
  symlinkSync(path.join(root, 'node_modules'), path.join(beforeRoot, 'node_modules'), 'dir');
  log(`building ${ref}`);
  build(beforeRoot, ['--skip-nx-cache']);
  writeFileSync(builtStamp, `${sha}\n${new Date().toISOString()}\n`);
} else {
  log(`${ref} (${sha.slice(0, 12)}) already built in ${path.relative(root, beforeRoot)}`);
}
log('building the work tree');
build(root);

// ------------------------------------------------------------------------------------------------ runs
/** @type {import('node:child_process').ChildProcess | undefined} */
let current;
let stopping = false;
for (const sig of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(sig, () => {
    stopping = true;
    log(`${sig}: ending the running benchmark and its servers`);
    // The benchmark leads its own process group (detached): the signal reaches it and the servers it started.
    if (current?.pid) {
      try {
        process.kill(-current.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      setTimeout(() => {
        try {
          if (current?.pid) process.kill(-current.pid, 'SIGKILL');
        } catch {
          // already gone
        }
        process.exit(130);
      }, 5000).unref();
    } else process.exit(130);
  });
}

const tmp = path.join(os.tmpdir(), `gh-bench-compare-${process.pid}`);
mkdirSync(tmp, { recursive: true });

const adminUrl =
  process.env.BENCH_PG_URL ||
  process.env.TEST_PG_URL ||
  process.env.DATABASE_URL ||
  'postgres://postgres@127.0.0.1:5432/postgres';

/** A CHECKPOINT before each run: the previous run's writes are flushed before this one, not during it. */
async function checkpoint() {
  const c = new pg.Client({ connectionString: adminUrl });
  try {
    await c.connect();
    await c.query('CHECKPOINT');
  } catch (err) {
    log(`CHECKPOINT skipped: ${err instanceof Error ? err.message : err}`);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** One benchmark against one build: its BENCH_JSON, parsed. */
async function runBench(bench, side, buildRoot, round) {
  await checkpoint();
  const json = path.join(tmp, `${bench}-${side}-${round}.json`);
  rmSync(json, { force: true });
  const logFile = path.join(tmp, `${bench}-${side}-${round}.log`);
  const env = {
    ...process.env,
    BENCH_ROOT: buildRoot,
    BENCH_ROUNDS: '1',
    BENCH_DURATION: String(duration),
    BENCH_JSON: json,
    ...BENCH_ENV[bench](selected),
    ...sideEnv[side],
  };
  // The tree benchmark starts an embedded PostgreSQL unless given one: the same server as the others.
  if (bench === 'tree') env.BENCH_PG_URL = adminUrl;
  const t0 = Date.now();
  return await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, bench, 'run.mjs')], {
      cwd: root,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    current = child;
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      current = undefined;
      writeFileSync(logFile, out);
      if (stopping) {
        log(
          `ended; its throw-away database (gh_bench_${bench}_*) may be left behind, and its log: ${logFile}`,
        );
        process.exit(130);
      }
      // identity and rbac exit 1 when one of their own targets is missed: their results still count here.
      if (!existsSync(json)) {
        return reject(
          new Error(`${bench} against ${side} exited ${code} without results; its output: ${logFile}`),
        );
      }
      log(`round ${round}: ${bench} ${side} done in ${Math.round((Date.now() - t0) / 1000)} s`);
      resolve(JSON.parse(readFileSync(json, 'utf8')));
    });
  });
}

/** Per path and side: the measured value (req/s or ms) and the p99 of each round. */
const samples = new Map(paths.map((p) => [p.name, { before: [], after: [] }]));
const sides = { before: beforeRoot, after: root };
const startedAt = new Date();
const loadStart = os.loadavg()[0];
for (let round = 1; round <= rounds; round++) {
  for (const bench of benches) {
    const order = round % 2 === 1 ? ['before', 'after'] : ['after', 'before'];
    for (const side of order) {
      const json = await runBench(bench, side, sides[side], round);
      for (const p of paths.filter((x) => x.bench === bench)) {
        const r = p.pick(json);
        if (!r) throw new Error(`${p.name}: no result in the ${bench} benchmark's output (${side})`);
        samples.get(p.name)[side].push({
          value: p.unit === 'req/s' ? r.rps : r.api,
          p99: r.p99,
          cpu: r.cpuUsPerReq,
          bad: (r.non2xx ?? 0) + (r.errors ?? 0),
        });
      }
    }
  }
}
rmSync(tmp, { recursive: true, force: true });

// ------------------------------------------------------------------------------------------------ report
const num = (x, unit) => (unit === 'ms' ? x.toFixed(1) : String(Math.round(x)));
// Busy: a load average above 0.75 per vCPU at the start or the end (other work shares the machine).
const busy = Math.max(loadStart, os.loadavg()[0]) > os.cpus().length * 0.75;
const lines = [
  '| path | unit | before (median) | after (median) | ratio | spread (per round) | reading | p99 ms before / after | server CPU µs/req before / after (ratio) | non-2xx+errors |',
  '|---|---|---:|---:|---:|---|---|---|---|---:|',
];
for (const p of paths) {
  const { before, after } = samples.get(p.name);
  // Speed ratio per round: > 1 is faster after, whichever the unit.
  const ratioOf = (b, a) => (p.unit === 'req/s' ? a / b : b / a);
  const perRound = before.map((b, i) => ratioOf(b.value, after[i].value));
  const mb = median(before.map((s) => s.value));
  const ma = median(after.map((s) => s.value));
  const p99 =
    before[0].p99 === undefined
      ? '-'
      : `${median(before.map((s) => s.p99))} / ${median(after.map((s) => s.p99))}`;
  const bad = [...before, ...after].reduce((n, s) => n + s.bad, 0);
  // The measured server's CPU per request (where the benchmark reports it): its cost per request whatever the load
  // side managed, the steadier figure on a shared machine. Ratio before/after: > 1.00 is cheaper after.
  const cpuText = [...before, ...after].every((s) => s.cpu !== undefined)
    ? (() => {
        const cb = median(before.map((s) => s.cpu));
        const ca = median(after.map((s) => s.cpu));
        return `${Math.round(cb)} / ${Math.round(ca)} (${(cb / ca).toFixed(2)})`;
      })()
    : '-';
  const lo = Math.min(...perRound);
  const hi = Math.max(...perRound);
  // Every round on the same side of 1.00, by more than 5%: a difference. Otherwise this run cannot tell.
  const reading =
    perRound.length < 2
      ? 'one round: no spread'
      : lo > 1.05
        ? 'faster'
        : hi < 0.95
          ? 'SLOWER'
          : 'within noise';
  const qualified =
    busy && reading !== 'within noise' && perRound.length > 1 ? `${reading}? (busy)` : reading;
  lines.push(
    `| ${p.label} | ${p.unit} | ${num(mb, p.unit)} | ${num(ma, p.unit)} | ${ratioOf(mb, ma).toFixed(2)} | ` +
      `${lo.toFixed(2)}..${hi.toFixed(2)} | ${qualified} | ${p99} | ${cpuText} | ${bad} |`,
  );
}
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const envText = (side) =>
  Object.entries(sideEnv[side])
    .map(([k, v]) => ` ${k}=${v}`)
    .join('');
const tree = `the work tree (${headSha.slice(0, 12)}${dirty ? ' + uncommitted changes' : ''})`;
console.log(
  `\nbench:compare ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC: before ` +
    `${same ? tree : `${ref} (${sha.slice(0, 12)})`}${envText('before')}, after ${tree}${envText('after')}`,
);
console.log(
  `${cpu}, ${os.cpus().length} vCPU, Node ${process.versions.node}; ${rounds} interleaved round(s) of ${duration} s ` +
    `runs; load average ${loadStart.toFixed(1)} at start, ${os.loadavg()[0].toFixed(1)} at end\n`,
);
console.log(lines.join('\n'));
console.log(
  '\nratio > 1.00: faster after (req/s after/before; for ms rows, time before/after). reading: "faster" or' +
    ' "SLOWER" when every round says so by more than 5%, else "within noise".',
);
if (busy)
  console.log(
    `Warning: the machine was busy (load average above ${(os.cpus().length * 0.75).toFixed(1)} on ` +
      `${os.cpus().length} vCPU): other work moves single runs by tens of percent, and a "faster?" or "SLOWER?"` +
      ' can be that; re-run when it is quiet, with more rounds.',
  );
