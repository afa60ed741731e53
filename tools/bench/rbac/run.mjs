#!/usr/bin/env node
// RBAC benchmark: 10,000 users, 1,000 groups nested up to depth 8 (some with two parents), 200 roles.
// Measures, in the same run and interleaved, password-grant tokens/s for an RBAC resource (the token carries the
// user's effective scopes, one more indexed query per token) and for a resource without RBAC, and the effective
// permission list of a user (GET /api/v1/users/:id/permissions?effective=true) at the management API.
//
//   npx nx run-many -t build -p auth identity && node tools/bench/rbac/run.mjs
//
// Variables: BENCH_PG_URL (admin URL of a PostgreSQL where a throw-away database may be created; default TEST_PG_URL,
// DATABASE_URL, postgres://postgres@127.0.0.1:5432/postgres), BENCH_DURATION (s, default 10), BENCH_ROUNDS (default
// 3; medians reported), BENCH_CONNECTIONS (default 10), BENCH_SERVER_CPUS (taskset CPU list of the measured service,
// default 0; empty: no pinning), BENCH_JSON (write the results there), BENCH_KEEP=1 (keep the database), BENCH_ONLY
// (scenarios whose name contains one of these |-separated strings; the targets of the others are not judged),
// BENCH_ROOT (the checkout whose dist/ is measured, default this one: bench:compare points it at another build).
//
// Targets: RBAC password-grant tokens/s within 10% of the non-RBAC ones; effective-permission list p99 < 20 ms.
// The run fails (exit 1) when a target is missed.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { autocannonSummary, freePort, processGroup, tasksetAvailable, withDb } from '../lib/processes.mjs';
import { adminPgUrl, benchRoot, benchServiceEnv, builtFiles } from '../lib/setup.mjs';
import { medianBy } from '../lib/stats.mjs';

const root = benchRoot;
const {
  identity: identityMain,
  auth: authMain,
  passwords: passwordsJs,
} = builtFiles(['auth', 'identity'], { passwords: 'auth/libs/identity/data/src/passwords.js' });

const env = process.env;
const adminUrl = adminPgUrl();
const duration = Number(env.BENCH_DURATION || 10);
const connections = Number(env.BENCH_CONNECTIONS || 10);
// The latency target of the effective-permission list is measured below saturation of the one core: at
// BENCH_CONNECTIONS the requests queue behind each other (reported too, without a target).
const listConnections = Number(env.BENCH_LIST_CONNECTIONS || 4);
const rounds = Number(env.BENCH_ROUNDS || 3);
const cpus = env.BENCH_SERVER_CPUS ?? '0';
const hasTaskset = cpus !== '' && tasksetAvailable();
const only = env.BENCH_ONLY ? env.BENCH_ONLY.split('|') : undefined;
const USERS = 10_000;
const GROUPS = 1_000;
const ROLES = 200;
const MAX_DEPTH = 8;
const SCOPES = 50;
const PASSWORD = 'bench-password-1';

const procs = processGroup({ cwd: root, env });

const dbName = `gh_bench_rbac_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const dbUrl = withDb(adminUrl, dbName);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-rbac-'));

/** One autocannon run: a 2 s warm-up, then `duration` seconds measured. */
function measure(name, opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections, ...opts, duration: 2 }, (err) => {
      if (err) return reject(err);
      autocannon({ connections, ...opts, duration }, (err2, result) => {
        if (err2) return reject(err2);
        resolve(autocannonSummary(name, result));
      });
    });
  });
}

/** A request body per call, cycling through the users (each login a different account, as in production). */
function cycling(make) {
  let i = 0;
  return (req) => ({ ...req, ...make(i++ % USERS) });
}

const results = [];
const seed = {};
let failure;
try {
  const shared = benchServiceEnv({
    DATABASE_URL: dbUrl,
    DATA_DIR: dataDir,
    RATE_LIMIT_AUTH_FAILURES: '1000000000',
  });
  const authPort = await freePort();
  const authUrl = `http://127.0.0.1:${authPort}`;
  await procs.start('apps/auth', [authMain], {
    childEnv: { ...shared, AUTH_PORT: String(authPort), ISSUER: authUrl },
    ready: async () => (await fetch(`${authUrl}/readyz`)).status === 200,
    cpus: hasTaskset ? cpus : undefined,
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

  // ---------------------------------------------------------------- data, set-based
  const db = new pg.Client({ connectionString: dbUrl });
  db.on('error', () => undefined);
  await db.connect();
  /** @type {(text: string, params?: unknown[]) => Promise<import('pg').QueryResult<any>>} */
  const q = (text, params) => db.query(text, params);
  const t0 = performance.now();
  const { hashPassword } = await import(pathToFileURL(passwordsJs).href);
  // One argon2id hash for every user (10,000 hashes would take minutes): each login still verifies its own row.
  const hash = await hashPassword(PASSWORD);
  const [{ id: instanceId }] = (await q('SELECT id FROM instances WHERE is_default')).rows;
  const resource = async (name, rbac) =>
    (
      await q(
        `INSERT INTO resources (instance_id, resource_type, resource_name, identifier_url, rbac_enabled, scopes_added)
         VALUES ($1, 'api', $2, $3, $4, true) RETURNING id`,
        [instanceId, name, `https://${name}.bench`, rbac],
      )
    ).rows[0].id;
  const rbacApi = await resource('rbac-api', true);
  const plainApi = await resource('plain-api', false);
  for (const api of [rbacApi, plainApi]) {
    await q(
      `INSERT INTO scopes (instance_id, resource_id, scope_name)
       SELECT $1, $2, 'scope:' || lpad(g::text, 2, '0') FROM generate_series(1, $3) g`,
      [instanceId, api, SCOPES],
    );
  }
  const clientSecret = randomBytes(24).toString('base64url');
  const { box, sealedIn } = await import(
    pathToFileURL(path.join(root, 'dist/apps/auth/libs/identity/data/src/secret-box.js')).href
  ).then((m) => ({ box: m.loadSecretBox({ ...shared }).box, sealedIn: m.sealedIn }));
  const newClientId = randomUUID();
  const clientId = (
    await q(
      `INSERT INTO clients (id, instance_id, client_name, client_secret_enc, client_metadata, is_first_party)
       VALUES ($3, $1, 'bench-app', $2, '{"grant_types": ["password"]}', true) RETURNING id`,
      [instanceId, box.encrypt(clientSecret, sealedIn.clientSecret(newClientId)), newClientId],
    )
  ).rows[0].id;
  await q(
    `INSERT INTO client_resources (instance_id, client_id, resource_id) SELECT $1, $2, unnest($3::uuid[])`,
    [instanceId, clientId, [rbacApi, plainApi]],
  );
  await q(
    `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id)
     SELECT $1, $2, s.resource_id, s.id FROM scopes s WHERE s.resource_id = ANY($3::uuid[])`,
    [instanceId, clientId, [rbacApi, plainApi]],
  );
  await q(
    `INSERT INTO users (instance_id, user_email, password_hash, email_verified)
     SELECT $1, 'user' || g || '@bench.test', $2, true FROM generate_series(0, $3 - 1) g`,
    [instanceId, hash, USERS],
  );
  await q(
    `INSERT INTO roles (instance_id, role_name) SELECT $1, 'role-' || g FROM generate_series(1, $2) g`,
    [instanceId, ROLES],
  );
  // each role: 5 scopes of each API (plain ones too: the same data behind both measurements)
  await q(
    `INSERT INTO role_permissions (instance_id, role_id, resource_id, scope_id)
     SELECT $1, r.id, s.resource_id, s.id
       FROM roles r JOIN scopes s ON s.resource_id = ANY($2::uuid[])
      WHERE (hashtext(r.id::text || s.id::text) & 1023) < 103`,
    [instanceId, [rbacApi, plainApi]],
  );
  // groups in levels: each group's parent is a group of the level above (depth 1..8); every tenth group also has a
  // second parent above it (a DAG), so ancestry has several paths
  await q(
    `INSERT INTO groups (instance_id, group_name) SELECT $1, 'group-' || lpad(g::text, 4, '0') FROM generate_series(0, $2 - 1) g`,
    [instanceId, GROUPS],
  );
  const groups = (await q(`SELECT id FROM groups ORDER BY group_name`)).rows.map((r) => r.id);
  const perLevel = Math.ceil(GROUPS / MAX_DEPTH);
  const edges = [];
  for (let g = perLevel; g < GROUPS; g++) {
    const level = Math.floor(g / perLevel);
    const above = (level - 1) * perLevel;
    edges.push([groups[above + (g % perLevel)], groups[g]]);
    if (g % 10 === 0) edges.push([groups[above + ((g * 7 + 3) % perLevel)], groups[g]]);
  }
  const uniqueEdges = [...new Map(edges.map((e) => [e.join(), e])).values()];
  await q(
    `INSERT INTO group_children (instance_id, parent_id, child_id) SELECT $1, p, c FROM unnest($2::uuid[], $3::uuid[]) AS x(p, c)`,
    [instanceId, uniqueEdges.map((e) => e[0]), uniqueEdges.map((e) => e[1])],
  );
  // the ancestry with its path counts, as the nesting operations keep it
  await q(
    `INSERT INTO group_closure (descendant_id, ancestor_id, instance_id, paths)
     WITH RECURSIVE up(descendant_id, ancestor_id) AS (
       SELECT id, id FROM groups
       UNION ALL
       SELECT up.descendant_id, e.parent_id FROM up JOIN group_children e ON e.child_id = up.ancestor_id)
     SELECT descendant_id, ancestor_id, $1, count(*) FROM up GROUP BY descendant_id, ancestor_id`,
    [instanceId],
  );
  await q(
    `INSERT INTO group_roles (instance_id, group_id, role_id)
     SELECT $1, g.id, r.id FROM groups g JOIN roles r ON (hashtext(g.id::text || r.id::text) & 1023) < 8`,
    [instanceId],
  );
  const users = (
    await q(
      `SELECT id FROM users WHERE user_email LIKE '%@bench.test' ORDER BY regexp_replace(user_email, '\\D', '', 'g')::int`,
    )
  ).rows.map((r) => r.id);
  // every user: 3 groups (deep ones more often), 2 roles, 3 direct permissions
  await q(
    `INSERT INTO group_members (instance_id, group_id, user_id)
     SELECT DISTINCT $1::uuid, ($2::uuid[])[1 + (abs(hashtext(u.id::text || k)) % $3)], u.id
       FROM users u, generate_series(1, 3) k WHERE u.user_email LIKE '%@bench.test'`,
    [instanceId, groups, GROUPS],
  );
  await q(
    `INSERT INTO user_roles (instance_id, user_id, role_id)
     SELECT DISTINCT $1::uuid, u.id, r.id FROM users u
       JOIN LATERAL (SELECT id FROM roles ORDER BY hashtext(u.id::text || id::text) LIMIT 2) r ON true
      WHERE u.user_email LIKE '%@bench.test'`,
    [instanceId],
  );
  await q(
    `INSERT INTO user_permissions (instance_id, user_id, resource_id, scope_id)
     SELECT DISTINCT $1::uuid, u.id, s.resource_id, s.id FROM users u
       JOIN LATERAL (SELECT id, resource_id FROM scopes WHERE resource_id = ANY($2::uuid[])
                      ORDER BY hashtext(u.id::text || id::text) LIMIT 3) s ON true
      WHERE u.user_email LIKE '%@bench.test'`,
    [instanceId, [rbacApi, plainApi]],
  );
  await q('VACUUM ANALYZE');
  Object.assign(seed, {
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
    users: USERS,
    groups: GROUPS,
    roles: ROLES,
    nestings: uniqueEdges.length,
    closureRows: Number((await q('SELECT count(*) FROM group_closure')).rows[0].count),
    maxDepth: MAX_DEPTH,
    groupMembers: Number((await q('SELECT count(*) FROM group_members')).rows[0].count),
    rolePermissions: Number((await q('SELECT count(*) FROM role_permissions')).rows[0].count),
  });
  const sample = users[1234];
  const effective = (
    await q(
      `SELECT count(DISTINCT s.scope_name)::int AS n FROM scopes s WHERE s.resource_id = $2 AND s.id IN (
         SELECT scope_id FROM user_permissions WHERE user_id = $1 AND resource_id = $2
         UNION ALL SELECT rp.scope_id FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id AND rp.resource_id = $2 WHERE ur.user_id = $1
         UNION ALL SELECT rp.scope_id FROM group_members gm JOIN group_closure gc ON gc.descendant_id = gm.group_id
           JOIN group_roles gr ON gr.group_id = gc.ancestor_id JOIN role_permissions rp ON rp.role_id = gr.role_id AND rp.resource_id = $2
          WHERE gm.user_id = $1)`,
      [sample, rbacApi],
    )
  ).rows[0].n;
  seed.sampleEffectiveScopes = effective;
  await db.end();

  // ---------------------------------------------------------------- scenarios
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  const grant = (identifier) => ({
    url: authUrl,
    requests: [
      {
        method: 'POST',
        path: '/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        setupRequest: cycling((i) => ({
          body: new URLSearchParams({
            grant_type: 'password',
            username: `user${i}@bench.test`,
            password: PASSWORD,
            resource: identifier,
          }).toString(),
        })),
      },
    ],
  });
  const check = async (identifier, rbac) => {
    const res = await fetch(`${authUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'user1234@bench.test',
        password: PASSWORD,
        resource: identifier,
      }),
    });
    const body = /** @type {any} */ (await res.json());
    if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`);
    const n = String(body.scope ?? '')
      .split(' ')
      .filter(Boolean).length;
    if (rbac && n !== effective)
      throw new Error(`RBAC token carries ${n} scopes, the user holds ${effective}`);
    if (!rbac && n !== SCOPES) throw new Error(`plain token carries ${n} scopes, the client holds ${SCOPES}`);
  };
  await check('https://rbac-api.bench', true);
  await check('https://plain-api.bench', false);

  const mgmt = /** @type {any} */ (
    await (
      await fetch(`${authUrl}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${shared.BOOTSTRAP_CLIENT_ID}:${shared.BOOTSTRAP_CLIENT_SECRET}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', audience: 'urn:gatehouse:management' }),
      })
    ).json()
  ).access_token;
  const list = {
    url: idUrl,
    requests: [
      {
        method: 'GET',
        path: `/api/v1/users/${sample}/permissions?effective=true`,
        headers: { authorization: `Bearer ${mgmt}` },
        setupRequest: cycling((i) => ({
          path: `/api/v1/users/${users[i]}/permissions?effective=true&total_count=true`,
        })),
      },
    ],
  };
  const firstPage = /** @type {any} */ (
    await (
      await fetch(`${idUrl}/api/v1/users/${sample}/permissions?effective=true&total_count=true`, {
        headers: { authorization: `Bearer ${mgmt}` },
      })
    ).json()
  );
  seed.sampleEffectiveSources = firstPage.total_count;

  const scenarios = [
    { name: 'password grant, RBAC resource', opts: grant('https://rbac-api.bench') },
    { name: 'password grant, resource without RBAC', opts: grant('https://plain-api.bench') },
    {
      name: `effective permissions of a user (GET ...?effective=true), ${listConnections} connections`,
      opts: { ...list, connections: listConnections },
    },
    {
      name: `effective permissions of a user (GET ...?effective=true), ${connections} connections`,
      opts: list,
    },
  ];
  const runs = new Map();
  for (let round = 1; round <= rounds; round++) {
    for (const s of scenarios) {
      if (only && !only.some((o) => s.name.includes(o))) continue;
      process.stderr.write(`  round ${round}: ${s.name} ...`);
      const r = await measure(s.name, s.opts);
      runs.set(s.name, [...(runs.get(s.name) ?? []), r]);
      process.stderr.write(` ${Math.round(r.rps)}/s p99 ${r.p99} ms, non-2xx ${r.non2xx}\n`);
    }
  }
  for (const s of scenarios) {
    const all = runs.get(s.name);
    if (!all) continue;
    const median = medianBy(all, (r) => r.rps);
    results.push({ ...median, runs: all.map((r) => Math.round(r.rps)), p99s: all.map((r) => r.p99) });
  }
} catch (err) {
  failure = err;
} finally {
  await procs.stopAll();
  if (env.BENCH_KEEP === '1') console.error(`[bench] kept the database ${dbName}`);
  else await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}

if (failure) {
  console.error(failure);
  process.exit(1);
}

const byName = (prefix) => results.find((r) => r.name.startsWith(prefix));
const rbac = byName('password grant, RBAC');
const plain = byName('password grant, resource without');
const effective = byName(`effective permissions of a user (GET ...?effective=true), ${listConnections} `);
const saturated = byName(`effective permissions of a user (GET ...?effective=true), ${connections} `);
const ratio = rbac && plain ? rbac.rps / plain.rps : undefined;
/** @type {Record<string, boolean>} */
const targets = {
  ...(ratio !== undefined ? { 'RBAC tokens/s within 10% of non-RBAC': ratio >= 0.9 } : {}),
  ...(effective
    ? { [`effective-permission list p99 < 20 ms (${listConnections} connections)`]: effective.p99 < 20 }
    : {}),
  'no errors': results.every((r) => r.non2xx === 0 && r.errors === 0),
};
const machine =
  `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} vCPU, Node ${process.versions.node}; ` +
  `apps/auth and apps/identity ${hasTaskset ? `pinned to CPU ${cpus}` : 'not pinned'}; ${connections} connections, ` +
  `${rounds} interleaved rounds of ${duration} s per scenario (each after a 2 s warm-up), medians`;
const lines = [
  `| scenario | req/s (median) | runs req/s | p50 ms | p99 ms | p99 of each run | max ms | non-2xx | errors |`,
  `|---|---:|---|---:|---:|---|---:|---:|---:|`,
  ...results.map(
    (r) =>
      `| ${r.name} | ${Math.round(r.rps)} | ${r.runs.join(', ')} | ${r.p50} | ${r.p99} | ${r.p99s.join(', ')} | ${r.max} | ${r.non2xx} | ${r.errors} |`,
  ),
];
console.log(`\nMachine: ${machine}`);
console.log(`Data: ${JSON.stringify(seed)}\n`);
console.log(lines.join('\n'));
if (ratio !== undefined) console.log(`\nRBAC / non-RBAC tokens/s: ${ratio.toFixed(3)}`);
if (saturated)
  console.log(`effective list at ${connections} connections (no target): p99 ${saturated.p99} ms`);
for (const [name, ok] of Object.entries(targets)) console.log(`${ok ? 'met' : 'MISSED'}: ${name}`);
if (env.BENCH_JSON) {
  writeFileSync(
    env.BENCH_JSON,
    JSON.stringify({ machine, date: new Date().toISOString(), seed, results, ratio, targets }, null, 2),
  );
}
if (Object.values(targets).some((ok) => !ok)) process.exitCode = 1;
