#!/usr/bin/env node
// Audit trail benchmark: GET /logs pages over 10,000,000 events (30 days, two instances, 100 tenants, 10,000
// users, 500 clients, 20 event types), p99 of each scenario, and the PostgreSQL plans of the statements the
// service runs for them.
//
//   npx nx run-many -t build -p auth identity && node tools/bench/logs/run.mjs
//
// Variables: BENCH_PG_URL (admin URL of a PostgreSQL where a throw-away database may be created; default
// TEST_PG_URL, DATABASE_URL, postgres://postgres@127.0.0.1:5432/postgres), BENCH_EVENTS (default 10000000),
// BENCH_DURATION (s, default 10), BENCH_ROUNDS (default 3; the median run by p99 is reported), BENCH_CONNECTIONS
// (default 10), BENCH_SERVER_CPUS (taskset CPU list of the identity service, default 0; empty: no pinning),
// BENCH_LOAD_CPUS (the load side, as tools/bench/identity), BENCH_ONLY (|-separated scenario name parts),
// BENCH_JSON (write the results there), BENCH_KEEP=1 (keep the database), BENCH_DB (reuse a kept database:
// no seeding; its services start on it).
//
// Target: every GET /logs scenario with p99 < 50 ms, its statement read through indexes (no sequential scan that
// reads an event). The run fails (exit 1) when a target is missed. Not part of CI.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  autocannonSummary,
  freePort,
  pinProcesses,
  processGroup,
  tasksetAvailable,
  withDb,
} from '../lib/processes.mjs';
import {
  adminPgUrl,
  benchRoot,
  benchServiceEnv,
  builtFiles,
  clientCredentialsToken,
  loadCpusFor,
} from '../lib/setup.mjs';
import { medianBy } from '../lib/stats.mjs';

const root = benchRoot;
const { identity: identityMain, auth: authMain } = builtFiles(['auth', 'identity']);

const env = process.env;
const adminUrl = adminPgUrl();
const eventCount = Number(env.BENCH_EVENTS || 10_000_000);
const duration = Number(env.BENCH_DURATION || 10);
const connections = Number(env.BENCH_CONNECTIONS || 10);
const rounds = Number(env.BENCH_ROUNDS || 3);
const cpus = env.BENCH_SERVER_CPUS ?? '0';
const loadCpus = loadCpusFor(cpus);
const only = env.BENCH_ONLY ? env.BENCH_ONLY.split('|') : undefined;
const hasTaskset = cpus !== '' && tasksetAvailable();
const DAYS = 30;
const TENANTS = 100;
const USERS = 10_000;
const CLIENTS = 500;
const BATCH = 1_000_000;

const procs = processGroup({ cwd: root, env });

const pinToLoadCpus = (pids) => pinProcesses(pids, hasTaskset ? loadCpus : '');

/** One autocannon run after a 2 s warm-up. */
function measure(name, url, headers) {
  return new Promise((resolve, reject) => {
    const opts = { url, connections, pipelining: 1, headers };
    autocannon({ ...opts, duration: 2 }, (err) => {
      if (err) return reject(err);
      autocannon({ ...opts, duration }, (err2, result) => {
        if (err2) return reject(err2);
        resolve(autocannonSummary(name, result));
      });
    });
  });
}

/**
 * 10,000,000 events in SQL, set-based: the secondary indexes are dropped first and built again after the load (one
 * sort per index instead of ten million index insertions), then VACUUM ANALYZE, as a table in service is. Event i
 * is spread evenly over the last 30 days; 90% belong to the default instance, 70% to one of 100 tenants; users,
 * clients and types cycle with coprime strides, so every filter value is spread over the whole time range.
 */
async function seed(db, instanceId, tenants) {
  await db.query(`SET synchronous_commit = off`);
  await db.query(`SET maintenance_work_mem = '256MB'`);
  await db.query(`SELECT events_ensure_partitions((now() AT TIME ZONE 'UTC')::date - $1::int, $1::int + 2)`, [
    DAYS + 1,
  ]);
  const indexes = (
    await db.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'events' AND indexname <> 'pk_events'`,
    )
  ).rows;
  for (const ix of indexes) await db.query(`DROP INDEX ${ix.indexname}`);
  const types = [
    ...Array(10).fill('token.issued'),
    ...['signin.success', 'signin.success', 'signin.success', 'signin.failure', 'signin.failure'],
    ...['token.failure', 'logout', 'otp.issued', 'mgmt.updated', 'mgmt.created'],
  ];
  const otherInstance = '00000000-0000-4000-8000-0000000000ff';
  for (let from = 1; from <= eventCount; from += BATCH) {
    const to = Math.min(from + BATCH - 1, eventCount);
    await db.query(
      `INSERT INTO events (id, created_at, type, outcome, reason, instance_id, tenant_id, actor_type, actor_id,
                           via_client_id, user_id, client_id, ip, user_agent, details)
       SELECT events_uuid7(t), t, ty, CASE WHEN ty LIKE '%.failure' THEN 'failure' ELSE 'success' END,
              CASE WHEN ty = 'signin.failure' THEN 'wrong_password' END,
              CASE WHEN g % 10 = 9 THEN $2::uuid ELSE $1::uuid END,
              CASE WHEN g % 10 < 7 THEN ($3::uuid[])[1 + (g * 7) % $4] END,
              'user', u::text, c, u, c,
              '10.0.' || (g % 256) || '.' || (g / 256 % 256), 'bench/1.0',
              jsonb_build_object('grant_type', 'client_credentials')
         FROM (SELECT g, now() - g * ($5::int * interval '1 day') / $6 AS t,
                      ($7::text[])[1 + (g * 31) % 20] AS ty,
                      ('00000000-0000-4000-8000-' || lpad(to_hex((g * 13) % $8), 12, '0'))::uuid AS u,
                      ('00000000-0000-4000-9000-' || lpad(to_hex((g * 17) % $9), 12, '0'))::uuid AS c
                 FROM generate_series($10::int, $11::int) g) s`,
      [instanceId, otherInstance, tenants, TENANTS, DAYS, eventCount, types, USERS, CLIENTS, from, to],
    );
    process.stderr.write(`  seeded ${to.toLocaleString('en')} events\n`);
  }
  for (const ix of indexes) await db.query(ix.indexdef);
  await db.query('VACUUM ANALYZE events');
}

const keptDb = env.BENCH_DB;
const dbName = keptDb ?? `gh_bench_logs_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
if (!keptDb) await admin.query(`CREATE DATABASE ${dbName}`);
const dbUrl = withDb(adminUrl, dbName);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-logs-'));

const results = [];
const plans = [];
let seedSeconds;
let failure;
try {
  const shared = benchServiceEnv({ DATABASE_URL: dbUrl, DATA_DIR: dataDir });
  const db = new pg.Client({ connectionString: dbUrl });
  db.on('error', () => undefined);
  // A kept database keeps its bootstrap client: its credentials are stored in the database itself (bench only).
  if (keptDb) {
    await db.connect();
    const [kept] = (await db.query(`SELECT value FROM bench_logs_kept`)).rows;
    Object.assign(shared, kept.value);
  }
  const authPort = await freePort();
  const authUrl = `http://127.0.0.1:${authPort}`;
  const auth = await procs.start('apps/auth', [authMain], {
    childEnv: { ...shared, AUTH_PORT: String(authPort), ISSUER: authUrl },
    ready: async () => (await fetch(`${authUrl}/readyz`)).status === 200,
    timeoutMs: 90_000,
  });
  const idPort = await freePort();
  const idUrl = `http://127.0.0.1:${idPort}`;
  await procs.start('apps/identity', [identityMain], {
    childEnv: { ...shared, IDENTITY_PORT: String(idPort), AUTH_URL: authUrl, BEARER_CACHE_TTL_SEC: '3600' },
    ready: async () => (await fetch(`${idUrl}/readyz`)).status === 200,
    cpus: hasTaskset ? cpus : undefined,
    timeoutMs: 90_000,
  });
  pinToLoadCpus([process.pid, auth.pid]);

  if (!keptDb) await db.connect();
  const [{ id: instanceId }] = (await db.query('SELECT id FROM instances WHERE is_default')).rows;
  let tenants = (await db.query(`SELECT id FROM tenants WHERE name LIKE 'bench-tenant-%' ORDER BY name`))
    .rows;
  if (!keptDb) {
    tenants = (
      await db.query(
        `INSERT INTO tenants (instance_id, name)
         SELECT $1, 'bench-tenant-' || lpad(g::text, 3, '0') FROM generate_series(1, $2) g RETURNING id`,
        [instanceId, TENANTS],
      )
    ).rows;
    const t0 = performance.now();
    await seed(
      db,
      instanceId,
      tenants.map((t) => t.id),
    );
    seedSeconds = (performance.now() - t0) / 1000;
    if (env.BENCH_KEEP === '1') {
      await db.query(`CREATE TABLE bench_logs_kept (value jsonb)`);
      await db.query(`INSERT INTO bench_logs_kept VALUES ($1)`, [
        {
          SECRET_ENCRYPTION_KEY: shared.SECRET_ENCRYPTION_KEY,
          BOOTSTRAP_CLIENT_ID: shared.BOOTSTRAP_CLIENT_ID,
          BOOTSTRAP_CLIENT_SECRET: shared.BOOTSTRAP_CLIENT_SECRET,
        },
      ]);
    }
  }

  const token = await clientCredentialsToken(
    authUrl,
    shared.BOOTSTRAP_CLIENT_ID,
    shared.BOOTSTRAP_CLIENT_SECRET,
    { audience: 'urn:gatehouse:management' },
  );
  const headers = { authorization: `Bearer ${token}` };
  const api = (method, p, body) =>
    fetch(`${idUrl}${p}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });

  // A caller of one tenant (a client that is not global, holding logs:read): its lists are its tenant's events.
  const tenant = tenants[42].id;
  /** @type {any} */
  const tc = await (
    await api('POST', '/api/v1/clients', {
      client_name: `bench-logs-tenant-${Date.now()}`,
      tenant_id: tenant,
      is_global: false,
    })
  ).json();
  const [{ id: mgmtId }] = (
    await db.query(
      `SELECT id FROM resources WHERE identifier_url = 'urn:gatehouse:management' AND is_system
                     AND instance_id = $1`,
      [instanceId],
    )
  ).rows;
  const [{ id: logsRead }] = (
    await db.query(`SELECT id FROM scopes WHERE resource_id = $1 AND scope_name = 'logs:read'`, [mgmtId])
  ).rows;
  await api('POST', `/api/v1/clients/${tc.id}/resources`, { resources: [mgmtId] });
  await api('POST', `/api/v1/clients/${tc.id}/permissions`, {
    permissions: [{ resource_id: mgmtId, scopes: [logsRead] }],
  });
  const tenantToken = await clientCredentialsToken(authUrl, tc.id, tc.client_secret, {
    audience: 'urn:gatehouse:management',
  });
  const tenantHeaders = { authorization: `Bearer ${tenantToken}` };

  const user = '00000000-0000-4000-8000-000000001234';
  const client = '00000000-0000-4000-9000-000000000042';
  const day = 86_400_000;
  const from = new Date(Math.floor(Date.now() / day) * day - 10 * day).toISOString();
  const to = new Date(Math.floor(Date.now() / day) * day - 9 * day).toISOString();
  const [{ id: oneId }] = (
    await db.query(
      `SELECT id FROM events WHERE instance_id = $1 AND created_at > now() - interval '15 days'
        ORDER BY created_at DESC LIMIT 1`,
      [instanceId],
    )
  ).rows;
  const global = { instanceId, restricted: false, tenantId: null };
  const restricted = { instanceId, restricted: true, tenantId: tenant };
  const scenario = (name, version, query, extra = {}) => ({
    name,
    version,
    query,
    access: global,
    headers,
    url: `${idUrl}/api/${version}/logs?${new URLSearchParams(query)}`,
    ...extra,
  });
  /** @type {any[]} */
  const scenarios = [
    scenario('v1 first page (newest 10)', 'v1', {}),
    scenario('v2 first page (newest 10)', 'v2', {}),
    scenario('v1 by user_id', 'v1', { user_id: user }),
    scenario('v1 by client_id', 'v1', { client_id: client }),
    scenario('v1 by type (signin.failure, 5%)', 'v1', { type: 'signin.failure' }),
    scenario('v1 by two types (signin.failure,token.failure)', 'v1', {
      type: 'signin.failure,token.failure',
    }),
    scenario('v1 by date range (one day, 10 days ago)', 'v1', { from, to }),
    scenario('v1 total_count (capped at 10,000)', 'v1', { total_count: 'true' }),
    scenario('v1 by user_id with total_count (exact)', 'v1', { user_id: user, total_count: 'true' }),
    scenario('v1 by type and date range with total_count', 'v1', {
      type: 'signin.failure',
      from,
      to,
      total_count: 'true',
    }),
    scenario('v1 sort type:asc', 'v1', { sort: 'type:asc' }),
    scenario(
      'v1 tenant caller first page with total_count',
      'v1',
      { total_count: 'true' },
      {
        access: restricted,
        headers: tenantHeaders,
      },
    ),
    {
      name: 'v1 GET /logs/:id',
      url: `${idUrl}/api/v1/logs/${oneId}`,
      headers,
      single: true,
    },
  ];

  // The statements the service runs for these requests, built by its own code (dist), and their plans.
  const { logListPlan } = await import(
    pathToFileURL(path.join(root, 'dist/apps/identity/apps/identity/src/logs/logs.service.js')).href
  );
  const { logSpecs } = await import(
    pathToFileURL(path.join(root, 'dist/apps/identity/apps/identity/src/logs/log.record.js')).href
  );
  const { countedPageSql, listSql } = await import(
    pathToFileURL(path.join(root, 'dist/apps/identity/libs/shared/db/src/list.js')).href
  );
  for (const s of scenarios) {
    const first = await fetch(s.url, { headers: s.headers });
    /** @type {any} */
    const body = await first.json();
    if (first.status !== 200) throw new Error(`${s.name}: ${first.status} ${JSON.stringify(body)}`);
    s.sample = s.single ? 1 : { count: body.count, total: body.total_count ?? body.totalCount };
    if (s.single) {
      plans.push({ name: s.name, plan: '(primary key, one partition: see findEvent)', indexed: true });
      continue;
    }
    const sql = listSql(
      logListPlan(s.access, { spec: logSpecs[s.version], query: s.query, version: s.version }),
    );
    const statement = s.query.total_count ? countedPageSql(sql.pageSql, sql.countSql) : sql.pageSql;
    const plan = (await db.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${statement}`, sql.params)).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    // Read through indexes: an index scan, and no sequential scan that reads a row (the planner may scan an empty
    // partition sequentially: it has no statistics, and reading it costs nothing).
    const seqRead = /Seq Scan on events\S* \S+ \(actual time=[\d.]+\.\.[\d.]+ rows=[1-9]/;
    plans.push({
      name: s.name,
      plan,
      indexed: /Index (Only )?Scan|Bitmap Index Scan/.test(plan) && !seqRead.test(plan),
      ms: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1]),
    });
  }
  await db.end();

  const runs = new Map();
  for (let round = 1; round <= rounds; round++) {
    for (const s of scenarios) {
      if (only && !only.some((o) => s.name.includes(o))) continue;
      process.stderr.write(`  round ${round}: ${s.name} ...`);
      const r = await measure(s.name, s.url, s.headers);
      runs.set(s.name, [...(runs.get(s.name) ?? []), r]);
      process.stderr.write(` ${Math.round(r.rps)}/s p50 ${r.p50} ms p99 ${r.p99} ms\n`);
    }
  }
  for (const s of scenarios) {
    const all = runs.get(s.name);
    if (!all) continue;
    const median = medianBy(all, (r) => r.p99);
    results.push({
      ...median,
      runs: all.map((r) => r.p99),
      sample: s.sample,
      indexed: plans.find((p) => p.name === s.name)?.indexed,
      sqlMs: plans.find((p) => p.name === s.name)?.ms,
    });
  }
} catch (err) {
  failure = err;
} finally {
  await procs.stopAll();
  if (env.BENCH_KEEP === '1' || keptDb) console.error(`[bench] kept the database ${dbName}`);
  else await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
}

if (failure) {
  await admin.end();
  console.error(failure);
  process.exit(1);
}

const pgVersion = (await admin.query('SHOW server_version')).rows[0].server_version;
await admin.end();
const machine =
  `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} vCPU, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
  `Node ${process.versions.node}, PostgreSQL ${pgVersion}; apps/identity ${hasTaskset ? `pinned to CPU ${cpus}` : 'not pinned'}; ` +
  `${eventCount.toLocaleString('en')} events${seedSeconds ? ` (seeded in ${seedSeconds.toFixed(0)} s)` : ' (kept database)'}; ` +
  `${connections} connections, ${rounds} rounds of ${duration} s per scenario (each after a 2 s warm-up); ` +
  `load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
const ok = (r) => r.p99 < 50 && r.indexed !== false && r.non2xx === 0 && r.errors === 0;
const lines = [
  '| scenario | items / total | req/s | p50 ms | p99 ms (median run) | p99 of each run | non-2xx | statement ms | index | p99 < 50 ms |',
  '|---|---|---:|---:|---:|---|---:|---:|---|---|',
  ...results.map(
    (r) =>
      `| ${r.name} | ${typeof r.sample === 'object' ? `${r.sample.count} / ${r.sample.total ?? '-'}` : '1'} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.runs.join(', ')} | ${r.non2xx} | ${r.sqlMs ?? '-'} | ${r.indexed ? 'yes' : 'no'} | ${ok(r) ? 'met' : 'MISSED'} |`,
  ),
];
console.log(`\nMachine: ${machine}\n`);
console.log(lines.join('\n'));
for (const p of plans) console.log(`\n${p.name}\n\n${p.plan}`);
if (env.BENCH_JSON) {
  writeFileSync(
    env.BENCH_JSON,
    JSON.stringify({ machine, date: new Date().toISOString(), results, plans }, null, 2),
  );
}
if (results.some((r) => !ok(r))) process.exitCode = 1;
