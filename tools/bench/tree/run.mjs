#!/usr/bin/env node
// Tree manager benchmark: a generated version of 1,111,111 nodes (fan-out 10, depth 6), each operation timed through
// the API of the built apps/tree (behind the real token server) and as the equivalent raw SQL, in the same run.
//
//   npx nx run-many -t build -p auth,tree && node tools/bench/tree/run.mjs
//
// Variables:
//   BENCH_PG_URL     admin URL of a PostgreSQL where throw-away databases may be created. Unset: an embedded
//                    PostgreSQL 18 is started for the run (settings in PG_FLAGS below) and removed afterwards.
//   BENCH_FANOUT     children per node (default 10); BENCH_DEPTH deepest level (default 6): 1,111,111 nodes.
//   BENCH_INSERTS    sequential leaf inserts measured per side (default 300).
//   BENCH_REPEAT     repetitions of the subtree read and of the move, per side (default 5).
//   BENCH_ROUNDS     rounds of clone, export and import, per side (default 3).
//   BENCH_JSON       write the results there as JSON.
//   BENCH_KEEP=1     keep the databases (with BENCH_PG_URL) for a closer look; their names are printed.
//   BENCH_PG_FLAGS   extra settings of the embedded PostgreSQL, "name=value name=value" (later ones win).
//   BENCH_TREE_NODE_ARGS  extra node flags for apps/tree (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
//   BENCH_ONLY       comma-separated subset of list,read,move,insert,clone,export,import to run (default: all;
//                    import runs the export too, it imports that file). For experiments: a full run takes 8-25 minutes.
//   BENCH_LIST_REQUESTS  sequential GET /api/v1/trees timed by the list operation (default 500).
//   BENCH_LIST_SECONDS   seconds of each throughput run of the list operation (default 10; 0: none).
//   BENCH_LIST_ROUTES    which throughput runs: comma-separated subset of trees,settings,404 (default all three).
//   BENCH_ROOT       the checkout whose dist/ is measured (default this one: bench:compare points it at another build).
// Prints a table (API | raw SQL | ratio | target) and the machine it ran on.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { autocannonSummary, cpuMs, processGroup, tasksetAvailable } from '../lib/processes.mjs';
import { benchRoot, builtFiles, clientCredentialsToken } from '../lib/setup.mjs';
import {
  randomPassword,
  startEmbeddedPostgres,
  stopEmbeddedPostgres,
} from '../../../libs/shared/testing/src/embedded-pg.mjs';
import { median, percentile } from '../lib/stats.mjs';
import { firstLabel, seedGeneratedVersion, totalNodes } from './seed.mjs';

const root = benchRoot;
const mains = builtFiles(['auth', 'tree']);

const env = process.env;
const FANOUT = Number(env.BENCH_FANOUT || 10);
const DEPTH = Number(env.BENCH_DEPTH || 6);
const INSERTS = Number(env.BENCH_INSERTS || 300);
const REPEAT = Number(env.BENCH_REPEAT || 5);
const ROUNDS = Number(env.BENCH_ROUNDS || 3);
const LIST_REQUESTS = Number(env.BENCH_LIST_REQUESTS || 500);
const LIST_SECONDS = Number(env.BENCH_LIST_SECONDS ?? 10);
const LIST_ROUTES = (env.BENCH_LIST_ROUTES ?? 'trees,settings,404').split(',').map((r) => r.trim());
const OPERATIONS = ['list', 'read', 'move', 'insert', 'clone', 'export', 'import'];
const ONLY = env.BENCH_ONLY ? env.BENCH_ONLY.split(',').map((s) => s.trim()) : OPERATIONS;
for (const o of ONLY) {
  if (!OPERATIONS.includes(o)) {
    console.error(`BENCH_ONLY: unknown operation ${o} (known: ${OPERATIONS.join(', ')})`);
    process.exit(1);
  }
}
const selected = (o) => ONLY.includes(o) || (o === 'export' && ONLY.includes('import'));
const TOTAL = totalNodes(FANOUT, DEPTH);
const PG_FLAGS = [
  ['shared_buffers', '1GB'],
  ['work_mem', '64MB'],
  ['maintenance_work_mem', '256MB'],
  ['max_wal_size', '8GB'],
  ['checkpoint_timeout', '30min'],
  // The WAL writer flushes every 10 ms instead of every 200 ms: a transaction writing megabytes of WAL (a move of
  // 11,111 nodes writes about 8 MB) then finds most of it already on disk at COMMIT. Measured on this VM: COMMIT of
  // such a move took 30-100 ms in about half of the runs with the default, 1-2 ms in most with 10 ms.
  ['wal_writer_delay', '10ms'],
  // BENCH_PG_FLAGS="name=value name=value" adds settings or overrides the ones above (for experiments).
  ...(process.env.BENCH_PG_FLAGS ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((kv) => {
      const i = kv.indexOf('=');
      if (i < 1) throw new Error(`BENCH_PG_FLAGS: expected name=value, got ${kv}`);
      return [kv.slice(0, i), kv.slice(i + 1)];
    }),
];

const log = (...a) => console.error('[bench]', ...a);
// Node paths are bytea, 4 bytes big-endian a label (apps/tree/src/nodes/paths.ts).
const label32 = (label) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(label);
  return b;
};
const subtreeEnd = (path) => {
  const end = Buffer.from(path);
  end.writeInt32BE(end.readInt32BE(end.length - 4) + 1, end.length - 4);
  return end;
};
const ms = (t0) => performance.now() - t0;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

const withDb = (url, db) => {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
};

const procs = processGroup({ cwd: root, env, killAfterMs: 10_000 });
// BENCH_TREE_NODE_ARGS (see the top) goes to apps/tree only.
const nodeArgs = (name) =>
  name === 'apps/tree' ? (env.BENCH_TREE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean) : [];
const start = (name, main, childEnv, readyUrl) =>
  procs.start(name, [...nodeArgs(name), main], {
    childEnv,
    ready: () => fetch(readyUrl).then((r) => r.status === 200),
    timeoutMs: 120_000,
  });
const stopChildren = procs.stopAll;

function machine() {
  const cpus = os.cpus();
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'} x ${cpus.length}`,
    memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    loadavg: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
}

// ------------------------------------------------------------------------------------------------ set-up

let embedded;
let adminUrl = env.BENCH_PG_URL;
const dataDirs = [];
if (!adminUrl) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-tree-pg-'));
  chmodSync(dir, 0o711); // run as root, the server runs as `postgres` and must enter it
  dataDirs.push(dir);
  log('starting embedded PostgreSQL', PG_FLAGS.map(([k, v]) => `${k}=${v}`).join(' '));
  embedded = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'data'),
    port: await freePort(),
    password: randomPassword(),
    flags: PG_FLAGS.flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  });
  adminUrl = embedded.url();
}
const suffix = randomBytes(4).toString('hex');
const authDb = `gh_bench_tree_auth_${suffix}`;
const treeDb = `gh_bench_tree_${suffix}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${authDb}`);
await admin.query(`CREATE DATABASE ${treeDb}`);
const serverVersion = (await admin.query('SHOW server_version')).rows[0].server_version;
const authData = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-tree-auth-'));
dataDirs.push(authData);

const results = [];
const notes = [];
/** Throughput runs of the list operation (autocannon summaries). */
const throughput = [];
const row = (name, api, raw, target, extra = '') => {
  results.push({ name, api, raw, ratio: raw ? api / raw : undefined, target, extra });
  log(`${name}: API ${api.toFixed(1)} ms, raw SQL ${raw?.toFixed(1) ?? '-'} ms ${extra}`);
};

const pool = new pg.Pool({ connectionString: withDb(adminUrl, treeDb), max: 4 });
const startLoad = os.loadavg()[0];

try {
  const authPort = await freePort();
  const treePort = await freePort();
  const authUrl = `http://127.0.0.1:${authPort}`;
  const api = `http://127.0.0.1:${treePort}`;
  const clientId = randomUUID();
  const clientSecret = randomBytes(24).toString('base64url');
  const common = { LOG_LEVEL: 'warn', RATE_LIMIT_POINTS: '1000000000', REDIS_URL: '' };
  await start(
    'apps/auth',
    mains.auth,
    {
      ...common,
      DATABASE_URL: withDb(adminUrl, authDb),
      DATA_DIR: authData,
      AUTH_PORT: String(authPort),
      ISSUER: authUrl,
      BOOTSTRAP_CLIENT_ID: clientId,
      BOOTSTRAP_CLIENT_SECRET: clientSecret,
      BOOTSTRAP_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
    `${authUrl}/readyz`,
  );
  const treeProc = await start(
    'apps/tree',
    mains.tree,
    {
      ...common,
      TREE_DATABASE_URL: withDb(adminUrl, treeDb),
      TREE_PORT: String(treePort),
      AUTH_URL: authUrl,
      DB_POOL_MAX: '10',
    },
    `${api}/readyz`,
  );
  const token = await clientCredentialsToken(authUrl, clientId, clientSecret, {
    resource: 'urn:gatehouse:tree',
  });
  const H = { authorization: `Bearer ${token}` };
  const call = async (method, p, body, expect = [200, 201, 204]) => {
    const r = await fetch(`${api}${p}`, {
      method,
      headers: body === undefined ? H : { ...H, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (!expect.includes(r.status)) throw new Error(`${method} ${p}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  // The same over node:http with one kept-alive connection, for the timed sequences of small requests (leaf inserts,
  // fixed request cost): undici's fetch costs about 0.5 ms a request on this VM by itself (0.52-0.68 ms against
  // 0.09-0.17 ms of node:http, sequential POSTs to a bare node:http server), which is the client's, not the API's.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const quick = (method, p, body, headers = H) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        `${api}${p}`,
        {
          method,
          agent,
          headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode >= 300) reject(new Error(`${method} ${p}: ${res.statusCode} ${text}`));
            else resolve(text ? JSON.parse(text) : undefined);
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });

  /**
   * Requests/s of the list at 10 connections, the identity benchmark's method: apps/tree pinned to CPU 0,
   * autocannon (this process) and the tree database's PostgreSQL backends to the other CPUs. Beside it, on the same
   * run and pinning: a bearer-guarded route that reads one row (`/api/v1/settings`) and an unauthenticated 404 (the
   * stack's floor), so the list's own cost shows as the difference.
   */
  async function listThroughput(headers) {
    const pin = tasksetAvailable() && os.cpus().length > 1;
    const all = `0-${os.cpus().length - 1}`;
    const taskset = (cpus, pid) => {
      try {
        execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
      } catch {
        // a process that exited or is not ours: left where it is
      }
    };
    const routes = [
      ['trees', 'List the trees, 10 connections (GET /api/v1/trees)', '/api/v1/trees', headers],
      ['settings', 'Bearer-guarded one-row read (GET /api/v1/settings)', '/api/v1/settings', headers],
      ['404', 'Unauthenticated 404 (GET /api/v1/no-such-route)', '/api/v1/no-such-route', {}],
    ].filter(([key]) => LIST_ROUTES.includes(key));
    try {
      for (const [, name, route, h] of routes) {
        const opts = { url: `${api}${route}`, connections: 10, headers: h };
        await autocannon({ ...opts, duration: 2 }); // warm-up; opens the pool's connections
        const backends = (
          await q(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
          )
        ).rows.map((r) => r.pid);
        if (pin) {
          taskset('0', treeProc.pid);
          for (const pid of backends) taskset(`1-${os.cpus().length - 1}`, pid);
          taskset(`1-${os.cpus().length - 1}`, process.pid);
        }
        // A backend that exits during the run (the pool closes idle connections, e.g. while the 404 runs) has no
        // second reading: it counts for nothing rather than for minus what it had used before.
        const cpuOf = () => [cpuMs(treeProc.pid), ...backends.map((pid) => cpuMs(pid))];
        const before = cpuOf();
        const result = await autocannon({ ...opts, duration: LIST_SECONDS });
        const after = cpuOf();
        const s = autocannonSummary(name, result);
        const per = (used) => (result.requests.total ? used / result.requests.total : undefined);
        const cpuPerRequest =
          before[0] !== undefined && after[0] !== undefined ? per(after[0] - before[0]) : undefined;
        const pgCpuPerRequest = per(
          after
            .slice(1)
            .reduce(
              (sum, a, i) => (a !== undefined && before[i + 1] !== undefined ? sum + a - before[i + 1] : sum),
              0,
            ),
        );
        throughput.push({ ...s, cpuPerRequest, pgCpuPerRequest, pinned: pin });
        log(
          `${name}: ${Math.round(s.rps)} req/s, p50 ${s.p50} ms, p99 ${s.p99} ms, non-2xx ${s.non2xx}` +
            (cpuPerRequest !== undefined ? `, apps/tree CPU ${cpuPerRequest.toFixed(2)} ms a request` : '') +
            (pgCpuPerRequest !== undefined ? `, PostgreSQL ${pgCpuPerRequest.toFixed(2)} ms` : ''),
        );
      }
    } finally {
      if (pin) {
        taskset(all, treeProc.pid);
        taskset(all, process.pid);
      }
    }
  }

  // ---------------------------------------------------------------------------------------- data
  const code = 'bench';
  await call('POST', '/api/v1/trees', { code, name: 'Benchmark tree' });
  const base = `/api/v1/trees/${code}/versions`;
  const v1 = await call('GET', `${base}/v1`);
  /** @type {(text: string, params?: unknown[]) => Promise<import('pg').QueryResult<any>>} */
  const q = (text, params) => pool.query(text, params);
  log(`generating ${TOTAL.toLocaleString('en')} nodes (fan-out ${FANOUT}, depth ${DEPTH}) with SQL ...`);
  const genMs = await seedGeneratedVersion(q, v1, FANOUT, DEPTH);
  let t0 = performance.now();
  await q('VACUUM ANALYZE tree_nodes');
  log(`generated in ${(genMs / 1000).toFixed(1)} s, vacuum analyze ${(ms(t0) / 1000).toFixed(1)} s`);
  const size = (
    await q(
      `SELECT pg_size_pretty(sum(pg_total_relation_size(relid))) AS s FROM pg_partition_tree('tree_nodes')`,
    )
  ).rows[0].s;
  notes.push(
    `generation of ${TOTAL.toLocaleString('en')} nodes by one INSERT ... SELECT: ${(genMs / 1000).toFixed(1)} s; tree_nodes with indexes: ${size}`,
  );
  const check = await call('GET', `${base}/v1`);
  if (check.aggregations.nodes !== TOTAL || check.aggregations.levels !== DEPTH + 1) {
    throw new Error(`generated version looks wrong: ${JSON.stringify(check.aggregations)}`);
  }
  const idOf = async (label) => (await q(`SELECT tree_node_id($1, $2) AS id`, [v1.id, label])).rows[0].id;
  const first = (d) => firstLabel(FANOUT, d);

  // ------------------------------------------------------------------ 0. list the trees (10 trees)
  if (selected('list')) {
    for (let i = 1; i < 10; i++)
      await call('POST', '/api/v1/trees', { code: `list-${i}`, name: `List tree ${i}` });
    for (let i = 0; i < 50; i++) await quick('GET', '/api/v1/trees'); // warm-up
    const xs = [];
    for (let i = 0; i < LIST_REQUESTS; i++) {
      t0 = performance.now();
      await quick('GET', '/api/v1/trees');
      xs.push(ms(t0));
    }
    row(
      'List the trees (GET /api/v1/trees, 10 trees, sequential)',
      median(xs),
      undefined,
      '-',
      `p50 of ${LIST_REQUESTS} requests over one kept-alive connection; p99 ${percentile(xs, 99).toFixed(2)} ms`,
    );
    if (LIST_SECONDS > 0) await listThroughput(H);
  }

  // ------------------------------------------------------------------ 1. subtree read (111,111 nodes)
  if (selected('read')) {
    const subRoot = await idOf(first(1)); // first node of level 1: its subtree holds TOTAL / FANOUT nodes (rounded down)
    const subPath = (
      await q(`SELECT path FROM tree_nodes WHERE tree_version_id = $1 AND id = $2`, [v1.id, subRoot])
    ).rows[0].path;
    const subEnd = subtreeEnd(subPath);
    const NODE_COLUMNS = `n.id, n.tree_id, n.tree_version_id, n.code, n.name, n.description, n.metadata, n.depth,
    n.leaf, n.parent_id, n.path, n.enabled, n.created_by, n.created_at, n.updated_by, n.updated_at`;
    const apiRead = [];
    const rawRead = [];
    // CPU of apps/tree per streamed read: on a busy machine the wall times swing, the process's own work much less.
    const apiCpu = [];
    let apiCount = 0;
    let rawCount = 0;
    for (let i = 0; i < REPEAT; i++) {
      const cpu0 = cpuMs(treeProc.pid);
      t0 = performance.now();
      const res = await fetch(`${api}${base}/v1/nodes/${subRoot}/descendants`, {
        headers: { ...H, accept: 'application/x-ndjson' },
      });
      if (res.status !== 200) throw new Error(`descendants: ${res.status}`);
      let lines = 0;
      for await (const chunk of res.body) {
        const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        for (let j = buf.indexOf(10); j !== -1; j = buf.indexOf(10, j + 1)) lines++;
      }
      apiRead.push(ms(t0));
      if (cpu0 !== undefined) apiCpu.push(cpuMs(treeProc.pid) - cpu0);
      apiCount = lines;
      t0 = performance.now();
      const r = await q(
        `SELECT ${NODE_COLUMNS}, coalesce(c.n, 0) AS child_count
         FROM tree_nodes n
         LEFT JOIN (SELECT parent_id, count(*)::int AS n FROM tree_nodes
                     WHERE tree_version_id = $1 AND path > $2 AND path < $3 GROUP BY parent_id) c ON c.parent_id = n.id
        WHERE n.tree_version_id = $1 AND n.path > $2 AND n.path < $3 ORDER BY n.path`,
        [v1.id, subPath, subEnd],
      );
      rawRead.push(ms(t0));
      rawCount = r.rowCount;
    }
    if (apiCount !== rawCount) throw new Error(`subtree: API ${apiCount} rows, SQL ${rawCount}`);
    row(
      `Read a subtree of ${(apiCount + 1).toLocaleString('en')} nodes (all descendants)`,
      median(apiRead),
      median(rawRead),
      'API within 2x of SQL',
      `NDJSON stream vs one SELECT of the same columns and child counts; runs s: API ${apiRead.map((x) => (x / 1000).toFixed(2)).join(', ')}; SQL ${rawRead.map((x) => (x / 1000).toFixed(2)).join(', ')}${apiCpu.length ? `; apps/tree CPU a read ms: ${apiCpu.join(', ')}` : ''}`,
    );
    // For reference: one JSON page at the start and deep into the same subtree.
    t0 = performance.now();
    await call('GET', `${base}/v1/nodes/${subRoot}/descendants?limit=100`);
    const pageFirst = ms(t0);
    t0 = performance.now();
    await call('GET', `${base}/v1/nodes/${subRoot}/descendants?limit=100&offset=100000`);
    const pageDeep = ms(t0);
    notes.push(
      `paged JSON descendants (limit 100): first page ${pageFirst.toFixed(1)} ms, page at offset 100,000 ${pageDeep.toFixed(1)} ms`,
    );
  }

  // ------------------------------------------------------------------ 2. move an 11,111-node subtree
  if (selected('move')) {
    const mover = await idOf(first(2)); // first node of level 2: TOTAL / FANOUT^2 nodes
    const targets = [await idOf(first(1) + 1), await idOf(first(1))];
    const moveSize = (
      await q(
        `SELECT count(*)::int AS n FROM tree_nodes s, tree_nodes m
        WHERE m.tree_version_id = $2 AND m.id = $1 AND s.tree_version_id = $2
          AND s.path >= m.path
          AND s.path < substring(m.path for length(m.path) - 4) || int4send((tree_path_labels(m.path))[length(m.path) / 4] + 1)`,
        [mover, v1.id],
      )
    ).rows[0].n;
    const apiMove = [];
    const rawMove = [];
    for (let i = 0; i < REPEAT; i++) {
      t0 = performance.now();
      await call('PATCH', `${base}/v1/nodes/${mover}`, { parent_id: targets[0] });
      apiMove.push(ms(t0));
      // The same statements the service runs, in one transaction, straight from a client.
      const c = await pool.connect();
      try {
        t0 = performance.now();
        await c.query('BEGIN');
        await c.query('SELECT id FROM tree_versions WHERE id = $1 FOR NO KEY UPDATE', [v1.id]);
        const node = (
          await c.query('SELECT id, parent_id, path FROM tree_nodes WHERE tree_version_id = $1 AND id = $2', [
            v1.id,
            mover,
          ])
        ).rows[0];
        const parent = (
          await c.query('SELECT id, path, leaf FROM tree_nodes WHERE tree_version_id = $1 AND id = $2', [
            v1.id,
            targets[1],
          ])
        ).rows[0];
        const end = subtreeEnd(node.path);
        await c.query(
          `UPDATE tree_nodes SET path = $4::bytea || substring(path from $5::int), depth = depth + $6,
                parent_id = CASE WHEN id = $7 THEN $8::uuid ELSE parent_id END
          WHERE tree_version_id = $1 AND path >= $2 AND path < $3`,
          [
            v1.id,
            node.path,
            end,
            parent.path,
            node.path.length - 3, // the node's own label: its last 4 bytes
            parent.path.length / 4 + 1 - node.path.length / 4,
            node.id,
            parent.id,
          ],
        );
        await c.query(
          `UPDATE tree_nodes p SET leaf = NOT EXISTS (SELECT 1 FROM tree_nodes x WHERE x.tree_version_id = $1 AND x.parent_id = p.id)
          WHERE p.tree_version_id = $1 AND p.id = $2`,
          [v1.id, node.parent_id],
        );
        await c.query('UPDATE tree_nodes SET leaf = false WHERE tree_version_id = $1 AND id = $2 AND leaf', [
          v1.id,
          parent.id,
        ]);
        await c.query('COMMIT');
        rawMove.push(ms(t0));
      } finally {
        c.release();
      }
    }
    row(
      `Move a subtree of ${moveSize.toLocaleString('en')} nodes (PATCH parent_id)`,
      median(apiMove),
      median(rawMove),
      'API under 300 ms',
      `runs ms: API ${apiMove.map((x) => x.toFixed(0)).join(', ')}; SQL ${rawMove.map((x) => x.toFixed(0)).join(', ')}`,
    );
    // The moves left 2 x REPEAT x 11,114 dead row versions with their index entries. Vacuum them here, timed and
    // reported, so that autovacuum does not do it during the next phases (in a full run without this step the leaf
    // insert's p50 was 2.4 ms of raw SQL and 6.3 ms through the API, against 1.4-1.8 and 4.3-4.7 ms in runs of the
    // insert alone).
    t0 = performance.now();
    await q('VACUUM (ANALYZE) tree_nodes');
    notes.push(`VACUUM (ANALYZE) after the moves: ${(ms(t0) / 1000).toFixed(1)} s (not part of any timing)`);
  }

  // ------------------------------------------------------------------ fixed cost of one request, for reference
  const fixed = async (p, headers, viaFetch = false) => {
    const xs = [];
    for (let i = 0; i < 200; i++) {
      t0 = performance.now();
      if (viaFetch) await (await fetch(`${api}${p}`, { headers })).text();
      else await quick('GET', p, undefined, headers);
      xs.push(ms(t0));
    }
    return median(xs);
  };
  const livez = await fixed('/livez', {});
  const settings = await fixed('/api/v1/settings', H);
  const livezFetch = await fixed('/livez', {}, true);
  const settingsFetch = await fixed('/api/v1/settings', H, true);
  const rawOne = [];
  for (let i = 0; i < 200; i++) {
    t0 = performance.now();
    // One row per instance since migration 1790000500000; the default instance's is keyed by the nil uuid.
    await q('SELECT environment FROM tree_settings WHERE instance_id = $1', [
      '00000000-0000-0000-0000-000000000000',
    ]);
    rawOne.push(ms(t0));
  }
  notes.push(
    `fixed request cost (p50 of 200): GET /livez ${livez.toFixed(2)} ms; GET /api/v1/settings (token check from the cache + one-row SELECT) ${settings.toFixed(2)} ms; the SELECT alone ${median(rawOne).toFixed(2)} ms; the same two with fetch instead of node:http: ${livezFetch.toFixed(2)} and ${settingsFetch.toFixed(2)} ms`,
  );

  // ------------------------------------------------------------------ 3. insert a leaf
  if (selected('insert')) {
    const parentsFrom = first(DEPTH - 1);
    const parentIds = [];
    for (let i = 0; i < INSERTS * 2; i++)
      parentIds.push(await idOf(parentsFrom + ((i * 7919) % FANOUT ** (DEPTH - 1))));
    for (let i = 0; i < 20; i++)
      await quick('POST', `${base}/v1/nodes`, { code: `warm-${i}`, name: 'warm', parent_id: parentIds[i] });
    // Interleaved, one API insert then one raw insert, so load elsewhere on the machine hits both sides alike. Raw SQL:
    // the statement the service sends (one call of tree_create_node); then, for comparison, the same steps as a
    // client-side transaction of four statements.
    const apiIns = [];
    const rawIns = [];
    const rawInsTx = [];
    const c = await pool.connect();
    try {
      for (let i = 0; i < INSERTS; i++) {
        t0 = performance.now();
        await quick('POST', `${base}/v1/nodes`, {
          code: `api-${i}`,
          name: `Inserted ${i}`,
          parent_id: parentIds[i],
        });
        apiIns.push(ms(t0));
        t0 = performance.now();
        // First parameter: the instance (migration 1790000500000); the bench tree is the default instance's.
        await c.query(`SELECT * FROM tree_create_node($1, $2, 'v1', $3, $4, NULL, '{}', $5, NULL)`, [
          '00000000-0000-0000-0000-000000000000',
          code,
          `sql-${i}`,
          `Inserted ${i}`,
          parentIds[INSERTS + i],
        ]);
        rawIns.push(ms(t0));
      }
      for (let i = 0; i < INSERTS; i++) {
        t0 = performance.now();
        await c.query('BEGIN');
        const label = (
          await c.query(
            'UPDATE tree_versions SET next_label = next_label + 1, node_count = node_count + 1 WHERE id = $1 RETURNING next_label',
            [v1.id],
          )
        ).rows[0].next_label;
        const parent = (
          await c.query('SELECT id, path, leaf FROM tree_nodes WHERE tree_version_id = $1 AND id = $2', [
            v1.id,
            parentIds[i],
          ])
        ).rows[0];
        await c.query(
          `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, depth, leaf, parent_id, path)
         VALUES (tree_node_id($1, $2), $3, $1, $4, $5, $6, true, $7, $8)`,
          [
            v1.id,
            label,
            v1.tree_id,
            `sqltx-${i}`,
            `Inserted ${i}`,
            parent.path.length / 4,
            parent.id,
            Buffer.concat([parent.path, label32(label)]),
          ],
        );
        if (parent.leaf) {
          await c.query('UPDATE tree_nodes SET leaf = false WHERE tree_version_id = $1 AND id = $2', [
            v1.id,
            parent.id,
          ]);
        }
        await c.query('COMMIT');
        rawInsTx.push(ms(t0));
      }
    } finally {
      c.release();
    }
    notes.push(
      `leaf insert as a client-side transaction of 4 statements: p50 ${median(rawInsTx).toFixed(2)} ms`,
    );
    row(
      `Insert a leaf (p50 of ${INSERTS} sequential)`,
      median(apiIns),
      median(rawIns),
      'API p50 under 5 ms',
      `p95 API ${percentile(apiIns, 95).toFixed(1)} ms, SQL ${percentile(rawIns, 95).toFixed(1)} ms`,
    );
  }

  // ------------------------------------------------------------------ 4-6. clone, export, import: in rounds
  // Each round measures both sides back to back, the API first in odd rounds and raw SQL first in even ones; the
  // median of the rounds is reported and every run listed.
  const nodesNow = (await call('GET', `${base}/v1`)).aggregations.nodes;
  const csvFile = path.join(authData, 'export.csv');
  const timings = { apiClone: [], rawClone: [], apiExport: [], rawExport: [], apiImport: [], rawImport: [] };
  let csvLines = 0;
  let csvBytes = 0;

  const apiCloneRun = async (r) => {
    t0 = performance.now();
    await call('POST', `${base}/v1/clone`, { version: `api-clone-${r}`, name: 'API clone' });
    timings.apiClone.push(ms(t0));
  };
  const rawCloneRun = async (r) => {
    const cl = await pool.connect();
    try {
      t0 = performance.now();
      await cl.query('BEGIN');
      const src = (await cl.query('SELECT * FROM tree_versions WHERE id = $1 FOR SHARE', [v1.id])).rows[0];
      const target = (
        await cl.query(
          `INSERT INTO tree_versions (tree_id, version, name, next_label, node_count) VALUES ($1, $4, 'SQL clone', $2, $3) RETURNING id`,
          [src.tree_id, src.next_label, src.node_count, `sql-clone-${r}`],
        )
      ).rows[0].id;
      // The new version's partition: filled while it has no index, indexed, attached (migration 1790000300000).
      await cl.query(`SELECT tree_nodes_copy_version($1, $2, $3, NULL)`, [v1.id, target, src.tree_id]);
      await cl.query('COMMIT');
      timings.rawClone.push(ms(t0));
    } finally {
      cl.release();
    }
  };
  const apiExportRun = async () => {
    t0 = performance.now();
    const exp = await fetch(`${api}${base}/v1/export`, { headers: H });
    if (exp.status !== 200) throw new Error(`export: ${exp.status}`);
    const parts = [];
    for await (const chunk of exp.body) parts.push(Buffer.from(chunk));
    timings.apiExport.push(ms(t0));
    const csv = Buffer.concat(parts);
    writeFileSync(csvFile, csv);
    csvBytes = csv.length;
    csvLines = 0;
    for (let j = csv.indexOf(10); j !== -1; j = csv.indexOf(10, j + 1)) csvLines++;
    csvLines -= 1; // header
  };
  /** @type {import('pg').QueryResult<any> | undefined} */
  let rawRows;
  const rawExportRun = async () => {
    t0 = performance.now();
    rawRows = await q(
      `SELECT n.code, p.code AS parent_code, n.name, n.description FROM tree_nodes n
         LEFT JOIN tree_nodes p ON p.tree_version_id = $1 AND p.id = n.parent_id
        WHERE n.tree_version_id = $1 ORDER BY n.path`,
      [v1.id],
    );
    timings.rawExport.push(ms(t0));
  };
  const apiImportRun = async (r) => {
    await call('POST', base, { version: `api-import-${r}` });
    t0 = performance.now();
    // replace=true: the file's root takes the place of the one the new version was created with.
    const imp = await fetch(`${api}${base}/api-import-${r}/import?replace=true`, {
      method: 'POST',
      headers: { ...H, 'content-type': 'text/csv' },
      body: readFileSync(csvFile),
    });
    const impText = await imp.text();
    timings.apiImport.push(ms(t0));
    if (imp.status !== 200) throw new Error(`import: ${imp.status} ${impText.slice(0, 500)}`);
    const imported = await call('GET', `${base}/api-import-${r}`);
    if (imported.aggregations.nodes !== csvLines)
      throw new Error(`import: ${imported.aggregations.nodes} nodes`);
  };
  // Raw SQL import: the rows (labels and paths computed by the client from the parents-first file) in batches.
  const rawImportRun = async (r) => {
    const sqlVersion = await call('POST', base, { version: `sql-import-${r}` });
    t0 = performance.now();
    const ic = await pool.connect();
    try {
      await ic.query('BEGIN');
      // As the API import with replace=true: the version's own root goes, the file's nodes come.
      await ic.query('DELETE FROM tree_nodes WHERE tree_version_id = $1', [sqlVersion.id]);
      const pathByCode = new Map();
      let label = 0;
      let batch = [];
      const flush = async () => {
        if (batch.length === 0) return;
        const cols = [[], [], [], [], [], []];
        for (const b of batch) b.forEach((v, i) => cols[i].push(v));
        await ic.query(
          `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, depth, leaf, parent_id, path)
           SELECT tree_node_id($1, u.label), $2, $1, u.code, u.name, u.description, length(u.path) / 4 - 1, u.leaf,
                  CASE WHEN length(u.path) = 4 THEN NULL
                       ELSE tree_path_node_id($1, substring(u.path for length(u.path) - 4)) END,
                  u.path
             FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::boolean[])
                  AS u(label, code, name, description, path, leaf)`,
          [sqlVersion.id, v1.tree_id, ...cols],
        );
        batch = [];
      };
      const isParent = new Set(rawRows.rows.map((x) => x.parent_code).filter(Boolean));
      for (const x of rawRows.rows) {
        label++;
        const p = x.parent_code
          ? Buffer.concat([pathByCode.get(x.parent_code), label32(label)])
          : label32(label);
        pathByCode.set(x.code, p);
        batch.push([label, x.code, x.name, x.description, p, !isParent.has(x.code)]);
        if (batch.length >= 5000) await flush();
      }
      await flush();
      await ic.query('UPDATE tree_versions SET next_label = $2, node_count = $2 WHERE id = $1', [
        sqlVersion.id,
        label,
      ]);
      await ic.query('COMMIT');
    } finally {
      ic.release();
    }
    timings.rawImport.push(ms(t0));
  };
  const cleanup = async (r) => {
    for (const v of [`api-clone-${r}`, `sql-clone-${r}`, `api-import-${r}`, `sql-import-${r}`]) {
      await call('DELETE', `${base}/${v}`, undefined, [204, 404]);
    }
    await q('VACUUM ANALYZE tree_nodes');
  };
  for (let r = 1; r <= ROUNDS; r++) {
    log(`round ${r} of ${ROUNDS}: clone, export, import`);
    /** @type {[string, (r: number) => Promise<void>, (r: number) => Promise<void>][]} */
    const runs = [
      ['clone', apiCloneRun, rawCloneRun],
      ['export', apiExportRun, rawExportRun],
      ['import', apiImportRun, rawImportRun],
    ];
    const pairs = runs.filter(([o]) => selected(o)).map(([, a, b]) => [a, b]);
    if (pairs.length === 0) break;
    for (const [a, b] of pairs) {
      if (r % 2 === 1) {
        await a(r);
        await b(r);
      } else {
        await b(r);
        await a(r);
      }
    }
    if (selected('export') && rawRows?.rowCount !== csvLines)
      throw new Error(`export: CSV ${csvLines} lines, SQL ${rawRows?.rowCount} rows`);
    await cleanup(r);
  }
  const runs = (xs) => xs.map((x) => (x / 1000).toFixed(1)).join(', ');
  if (selected('clone'))
    row(
      `Clone the version (${nodesNow.toLocaleString('en')} nodes)`,
      median(timings.apiClone),
      median(timings.rawClone),
      'API under 20 s',
      `runs s: API ${runs(timings.apiClone)}; SQL ${runs(timings.rawClone)}`,
    );
  if (selected('export'))
    row(
      `Export the version to CSV (${csvLines.toLocaleString('en')} lines, ${(csvBytes / 2 ** 20).toFixed(0)} MiB)`,
      median(timings.apiExport),
      median(timings.rawExport),
      '-',
      `streamed CSV vs one SELECT with the parent join; runs s: API ${runs(timings.apiExport)}; SQL ${runs(timings.rawExport)}`,
    );
  if (selected('import'))
    row(
      'Import that CSV into a new version (replacing its root)',
      median(timings.apiImport),
      median(timings.rawImport),
      '-',
      `streamed upload, all-or-nothing vs client-computed batched INSERTs; runs s: API ${runs(timings.apiImport)}; SQL ${runs(timings.rawImport)}`,
    );
} finally {
  await stopChildren();
  await pool.end().catch(() => undefined);
  if (env.BENCH_KEEP === '1' && !embedded) {
    log(`kept databases ${authDb} and ${treeDb}`);
  } else {
    await admin.query(`DROP DATABASE IF EXISTS ${authDb} WITH (FORCE)`).catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${treeDb} WITH (FORCE)`).catch(() => undefined);
  }
  await admin.end().catch(() => undefined);
  if (embedded) await stopEmbeddedPostgres(embedded, { removeData: true });
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
}

// ------------------------------------------------------------------------------------------------ report
const m = machine();
const fmt = (x) => (x === undefined ? '-' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`);
const lines = [
  `| Operation | API | Raw SQL | API / SQL | Target |`,
  `|---|---:|---:|---:|---|`,
  ...results.map(
    (r) =>
      `| ${r.name}${r.extra ? ` (${r.extra})` : ''} | ${fmt(r.api)} | ${fmt(r.raw)} | ${r.ratio ? `${r.ratio.toFixed(2)}x` : '-'} | ${r.target} |`,
  ),
];
console.log(lines.join('\n'));
if (throughput.length) {
  console.log('');
  console.log(
    `| Throughput (10 connections, apps/tree on one core${throughput[0].pinned ? '' : ': not pinned'}) | req/s | p50 ms | p99 ms | apps/tree CPU ms a request | PostgreSQL CPU ms a request | non-2xx + errors |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const t of throughput)
    console.log(
      `| ${t.name} | ${Math.round(t.rps)} | ${t.p50} | ${t.p99} | ${t.cpuPerRequest?.toFixed(2) ?? '-'} | ${t.pgCpuPerRequest?.toFixed(2) ?? '-'} | ${t.non2xx + t.errors} |`,
    );
}
console.log('');
for (const n of notes) console.log(`- ${n}`);
console.log(
  `- machine: ${m.cpu}, ${m.memory}, ${m.os}, Node ${m.node}, PostgreSQL ${serverVersion}` +
    `${embedded ? ` (embedded, ${PG_FLAGS.map(([k, v]) => `${k}=${v}`).join(', ')})` : ''}; load average ${startLoad.toFixed(2)} at start, ${m.loadavg} at end`,
);
if (env.BENCH_JSON)
  writeFileSync(
    env.BENCH_JSON,
    JSON.stringify({ results, throughput, notes, machine: m, serverVersion }, null, 2),
  );
