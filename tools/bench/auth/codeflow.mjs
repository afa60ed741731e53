#!/usr/bin/env node
// Authorization code flow benchmark: the path a person takes through the token server, without a browser. One flow
// is GET /authorize (response_type=code, PKCE S256, scope "openid profile", state, nonce) -> the login page (its form
// and CSRF field read from the HTML) -> POST the login form (username + password) -> the consent page -> POST
// "allow" -> the redirect to the client's callback with `code` -> POST /token (authorization_code, client_secret_basic,
// code_verifier). Every flow has its own cookie jar (cookies kept by name and path, as a browser does); a flow that
// does not end with an access token and an ID token carrying its nonce is an error. BENCH_VUS virtual users loop
// flows for BENCH_DURATION seconds; reported: completed flows/s, p50/p99 flow latency, errors, and the server's CPU
// time per flow.
//
// Beside apps/auth, in the same run and interleaved: a bare oidc-provider with its development interactions
// (bare-codeflow-provider.mjs: same signing keys, the minimal PostgreSQL adapter, consent through the development
// consent form). Both servers are pinned to the same core (BENCH_SERVER_CPUS), the load to the others. Scenarios:
//   full flow          login (argon2id verify of a stored hash on both sides: the bare login step reads the
//                      account's row and verifies its Gatehouse hash with the same @node-rs/argon2 and parameters)
//                      + consent + code exchange;
//   returning user     a browser with an SSO session whose consent was given already: authorize -> code -> token,
//                      no page, no password (each virtual user signs in once, untimed, before the first round);
//   password grant     Gatehouse only: grant_type=password for a JWT resource, accounts cycled (logins/s per core).
// Before the rounds, argon2-cost.mjs measures one argon2id verify on the servers' core (the hash-bound ceiling).
//
//   npx nx run-many -t build -p auth && npm run bench:codeflow      (or: node tools/bench/auth/codeflow.mjs)
//
// Variables: BENCH_PG_URL (admin URL of a PostgreSQL where a throw-away database may be created; default TEST_PG_URL,
// DATABASE_URL, postgres://postgres@127.0.0.1:5432/postgres), BENCH_DURATION (s, default 10), BENCH_ROUNDS (default
// 3; every scenario runs that many times, interleaved, medians reported), BENCH_VUS (concurrent virtual users,
// default 10), BENCH_SERVER_CPUS (taskset CPU list of both servers, default 0; empty: no pinning), BENCH_LOAD_CPUS
// (taskset CPU list of this process, the load; default every CPU but the servers'), BENCH_ONLY (comma-separated
// scenario names: full,sso,password), BENCH_BARE=0 (Gatehouse alone), BENCH_JSON (write the results there),
// BENCH_NODE_ARGS (node flags for apps/auth, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_BARE_NODE_ARGS (the
// same for the bare provider), BENCH_ROOT (the checkout
// whose dist/ is measured, default this one), BENCH_ACCOUNTS (accounts cycled by the full flow and the password
// grant, default 1000), BENCH_TRACE=1 (print every request of every flow, method, URL and status). BENCH_JSON's
// results carry each run's measured window (`windows`, µs on the monotonic clock of --cpu-prof's sample times), so
// a profile can be cut to the measured runs alone (warm-up, seeding and start excluded).
import { randomBytes, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { cpuMs, freePort, processGroup, tasksetAvailable, withDb } from '../lib/processes.mjs';
import { adminPgUrl, benchRoot, builtFiles, tokenServerModule } from '../lib/setup.mjs';
import { Jar, actionOf, authorizationRequest, fieldOf, walk as walkAll } from '../lib/browser.mjs';
import { median, percentile } from '../lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = benchRoot;
const dist = path.join(root, 'dist/apps/auth');
const { auth: mainJs } = builtFiles(['auth']);

const env = process.env;
const adminUrl = adminPgUrl();
const duration = Number(env.BENCH_DURATION || 10);
const rounds = Number(env.BENCH_ROUNDS || 3);
const vus = Number(env.BENCH_VUS || 10);
const accounts = Number(env.BENCH_ACCOUNTS || 1000);
const cpus = env.BENCH_SERVER_CPUS ?? '0';
const hasTaskset = cpus !== '' && tasksetAvailable();
const only = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',')) : undefined;
const withBare = env.BENCH_BARE !== '0';
const PASSWORD = 'bench-password-1';
const CALLBACK = 'https://rp.bench.test/callback';
const login = (i) => `flow${i % accounts}@bench.test`;
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** The CPUs of a taskset list ("0", "0-1", "0,2"). */
function cpuList(list) {
  return list.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map(Number);
    return Array.from({ length: (b ?? a) - a + 1 }, (_, i) => a + i);
  });
}
// The load (this process: the virtual users' HTTP, cookie jars, HTML parsing) runs on the other cores, so the
// servers' core measures the servers alone.
const loadCpus =
  env.BENCH_LOAD_CPUS ??
  (hasTaskset
    ? os
        .cpus()
        .map((_, i) => i)
        .filter((i) => !cpuList(cpus).includes(i))
        .join(',')
    : '');
if (hasTaskset && loadCpus) execFileSync('taskset', ['-a', '-p', '-c', loadCpus, String(process.pid)]);

const procs = processGroup({ cwd: root, env });
const start = (name, args, childEnv, ready) =>
  procs.start(name, args, { childEnv, ready, cpus: hasTaskset ? cpus : undefined, timeoutMs: 90_000 });

const basicAuth = (id, secret) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The shared walk, traced with BENCH_TRACE=1. */
const walk = (jar, origin, url, form) =>
  walkAll({
    jar,
    origin,
    url,
    form,
    onHop:
      env.BENCH_TRACE === '1'
        ? (res, method, at) => console.error(`[trace] ${method} ${at} -> ${res.status}`)
        : undefined,
  });

/** The end of every flow: the callback's code for tokens; an access token and an ID token with the nonce. */
async function exchange(target, request, callbackUrl) {
  if (!callbackUrl.startsWith(`${CALLBACK}?`)) throw new Error(`the flow ended at ${callbackUrl}`);
  const back = new URL(callbackUrl).searchParams;
  if (back.get('state') !== request.state) throw new Error(`state mismatch at ${callbackUrl}`);
  const code = back.get('code');
  if (!code) throw new Error(`no code at the callback: ${callbackUrl}`);
  const res = await fetch(`${target.origin}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: target.basic },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: request.verifier,
    }).toString(),
  });
  const tokens = /** @type {any} */ (await res.json());
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(tokens)}`);
  if (!tokens.access_token || !tokens.id_token) throw new Error(`tokens missing: ${JSON.stringify(tokens)}`);
  const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1], 'base64url').toString());
  if (claims.nonce !== request.nonce) throw new Error('the ID token does not carry the nonce of the request');
  return claims;
}

/**
 * One full flow (login + consent + code exchange) on `target` with `jar`. The two servers differ only in their
 * pages: Gatehouse's forms carry a CSRF field and post to /interaction/:uid/login and .../consent; the development
 * interactions post `prompt=login` (login, password) and `prompt=consent` to /interaction/:uid.
 */
async function fullFlow(target, jar, username) {
  const request = authorizationRequest(target.origin, target.clientId, CALLBACK);
  const loginPage = await walk(jar, target.origin, request.url);
  if (loginPage.status !== 200)
    throw new Error(`login page: ${loginPage.status} at ${loginPage.url}: ${loginPage.html.slice(0, 600)}`);
  let consent;
  if (target.kind === 'gatehouse') {
    consent = await walk(jar, target.origin, actionOf(loginPage.html, loginPage.url, /\/login$/), {
      csrf: fieldOf(loginPage.html, 'csrf') ?? '',
      username,
      password: PASSWORD,
    });
  } else {
    consent = await walk(
      jar,
      target.origin,
      actionOf(loginPage.html, loginPage.url, /^\/interaction\/[\w-]+$/),
      {
        prompt: 'login',
        login: username,
        password: PASSWORD,
      },
    );
  }
  if (consent.status !== 200) throw new Error(`consent page: ${consent.status} at ${consent.url}`);
  const done =
    target.kind === 'gatehouse'
      ? await walk(jar, target.origin, actionOf(consent.html, consent.url, /\/consent$/), {
          csrf: fieldOf(consent.html, 'csrf') ?? '',
          decision: 'allow',
        })
      : await walk(jar, target.origin, actionOf(consent.html, consent.url, /^\/interaction\/[\w-]+$/), {
          prompt: 'consent',
        });
  return exchange(target, request, done.url);
}

/** A returning user: the SSO session in `jar` has the consent, so /authorize answers with the code at once. */
async function returningFlow(target, jar) {
  const request = authorizationRequest(target.origin, target.clientId, CALLBACK);
  const done = await walk(jar, target.origin, request.url);
  return exchange(target, request, done.url);
}

/** The password grant for a JWT resource: one login, no page. */
async function passwordGrant(target, username) {
  const res = await fetch(`${target.origin}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: target.passwordBasic },
    body: new URLSearchParams({
      grant_type: 'password',
      username,
      password: PASSWORD,
      resource: target.resource,
    }).toString(),
  });
  const body = /** @type {any} */ (await res.json());
  if (res.status !== 200 || !body.access_token)
    throw new Error(`password grant: ${res.status} ${JSON.stringify(body)}`);
}

/**
 * `vus` virtual users run `flow(vu, i)` in a loop for `seconds`; flows that end after the deadline are not counted.
 * @param {number} seconds
 * @param {(vu: number, i: number) => Promise<unknown>} flow
 * @param {number} pid the server's process (its CPU time over the run)
 * @param {() => Promise<number>} [statements] statements run so far in the benchmark's database (PostgreSQL's count)
 */
async function drive(seconds, flow, pid, statements) {
  const latencies = [];
  const errors = [];
  let late = 0;
  let next = 0;
  const tx0 = statements ? await statements() : undefined;
  const cpu0 = cpuMs(pid);
  const mono0 = process.hrtime.bigint();
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: vus }, async (_, vu) => {
      while (performance.now() < deadline) {
        const s = performance.now();
        try {
          await flow(vu, next++);
          const e = performance.now();
          if (e <= deadline) latencies.push(e - s);
          else late++;
        } catch (err) {
          errors.push(String(/** @type {Error} */ (err).message ?? err).slice(0, 300));
        }
      }
    }),
  );
  const cpu1 = cpuMs(pid);
  const mono1 = process.hrtime.bigint();
  const busy = performance.now() - t0;
  // PostgreSQL counts a backend's transactions when it reports its statistics (at most once a second)
  if (statements) await new Promise((r) => setTimeout(r, 1200));
  const tx1 = statements ? await statements() : undefined;
  latencies.sort((a, b) => a - b);
  const serverCpuMs = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined;
  return {
    flows: latencies.length,
    perSec: latencies.length / seconds,
    p50: Number(percentile(latencies, 50).toFixed(1)),
    p99: Number(percentile(latencies, 99).toFixed(1)),
    max: Number((latencies.at(-1) ?? 0).toFixed(1)),
    errors: errors.length,
    firstErrors: [...new Set(errors)].slice(0, 3),
    late,
    // the measured window on the monotonic clock (µs), the clock of a --cpu-prof profile's sample times on Linux:
    // the profile of a server can be cut to the runs it served
    window: [Number(mono0 / 1000n), Number(mono1 / 1000n)],
    // CPU of the server process (all its threads: the argon2 pool too) per completed flow, and its share of a core
    cpuMsPerFlow:
      serverCpuMs !== undefined && latencies.length
        ? Number((serverCpuMs / latencies.length).toFixed(2))
        : undefined,
    coreBusy: serverCpuMs !== undefined ? Number((serverCpuMs / busy).toFixed(2)) : undefined,
    // PostgreSQL transactions (a statement outside a transaction is one) per flow: work on the database's side
    txPerFlow:
      tx0 !== undefined && tx1 !== undefined && latencies.length
        ? Number(((tx1 - tx0) / latencies.length).toFixed(1))
        : undefined,
  };
}

const loadStart = loadAverage();
const startedAt = new Date().toISOString();
const dbName = `gh_bench_flow_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const dbUrl = withDb(adminUrl, dbName);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-flow-'));

const results = [];
let argon2;
let failure;
try {
  // ---- the hash-bound ceiling: one argon2id verify with the token server's code, on the servers' core ----
  argon2 = JSON.parse(
    execFileSync(
      hasTaskset ? 'taskset' : process.execPath,
      [...(hasTaskset ? ['-c', cpus, process.execPath] : []), path.join(here, 'argon2-cost.mjs')],
      { env: { ...env, BENCH_ROOT: root }, encoding: 'utf8' },
    ),
  );
  process.stderr.write(`  argon2id ${argon2.params}: ${argon2.medianMs} ms per verify (median)\n`);

  // ---- Gatehouse apps/auth (the built service, as in production) ----
  const ghPort = await freePort();
  const gh = `http://127.0.0.1:${ghPort}`;
  const ghProcess = await start(
    'apps/auth',
    [...(env.BENCH_NODE_ARGS ? env.BENCH_NODE_ARGS.split(' ') : []), mainJs],
    {
      DATABASE_URL: dbUrl,
      DATA_DIR: dataDir,
      AUTH_PORT: String(ghPort),
      ISSUER: gh,
      BOOTSTRAP_CLIENT_ID: randomUUID(),
      BOOTSTRAP_CLIENT_SECRET: randomBytes(24).toString('base64url'),
      BOOTSTRAP_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
      // As shipped (the request log at its default level) unless BENCH_LOG_LEVEL says otherwise; the rate limits
      // far above what ten users from one address do here.
      ...(env.BENCH_LOG_LEVEL ? { LOG_LEVEL: env.BENCH_LOG_LEVEL } : {}),
      RATE_LIMIT_POINTS: '1000000000',
      RATE_LIMIT_AUTH_FAILURES: '1000000000',
      DB_POOL_MAX: '10',
      REDIS_URL: '',
    },
    async () => (await fetch(`${gh}/readyz`)).status === 200,
  );

  // ---- data: accounts with one argon2id hash (each login still verifies its own row), two clients ----
  const db = new pg.Client({ connectionString: dbUrl });
  db.on('error', () => undefined); // the final DROP ... WITH (FORCE) ends it if a step above failed
  await db.connect();
  /** @type {(text: string, params?: unknown[]) => Promise<import('pg').QueryResult<any>>} */
  const q = (text, params) => db.query(text, params);
  const { hashPassword } = await import(
    pathToFileURL(path.join(dist, 'libs/identity/data/src/passwords.js')).href
  );
  const { loadSecretBox, sealedIn } = await import(
    pathToFileURL(path.join(dist, 'libs/identity/data/src/secret-box.js')).href
  );
  const box = loadSecretBox({ DATA_DIR: dataDir }).box;
  const hash = await hashPassword(PASSWORD);
  const [{ id: instanceId }] = (await q('SELECT id FROM instances WHERE is_default')).rows;
  await q(
    `INSERT INTO users (instance_id, user_email, password_hash, email_verified, given_name, family_name, nickname,
                        locale, zoneinfo)
     SELECT $1, 'flow' || g || '@bench.test', $2, true, 'Bat', 'Erdene ' || g, 'batka', 'mn-MN', 'Asia/Ulaanbaatar'
       FROM generate_series(0, $3 - 1) g`,
    [instanceId, hash, accounts],
  );
  // the code flow's client: a third-party web app (consent asked), client_secret_basic
  const clientId = randomUUID();
  const clientSecret = randomBytes(24).toString('base64url');
  await q(
    `INSERT INTO clients (id, instance_id, client_name, client_secret_enc, client_metadata)
     VALUES ($1, $2, 'bench-web-app', $3, $4::jsonb)`,
    [
      clientId,
      instanceId,
      box.encrypt(clientSecret, sealedIn.clientSecret(clientId)),
      JSON.stringify({ grant_types: ['authorization_code'], urls: { callbacks: [CALLBACK] } }),
    ],
  );
  // the password grant's client (first party, as rbac/run.mjs's) and its JWT resource
  const passwordClientId = randomUUID();
  const passwordClientSecret = randomBytes(24).toString('base64url');
  await q(
    `INSERT INTO clients (id, instance_id, client_name, client_secret_enc, client_metadata, is_first_party)
     VALUES ($1, $2, 'bench-first-party', $3, '{"grant_types": ["password"]}', true)`,
    [
      passwordClientId,
      instanceId,
      box.encrypt(passwordClientSecret, sealedIn.clientSecret(passwordClientId)),
    ],
  );
  const resource = 'https://flow-api.bench';
  const {
    rows: [api],
  } = await q(
    `INSERT INTO resources (instance_id, resource_type, resource_name, identifier_url, signing_algorithm, token_lifetime)
     VALUES ($1, 'api', 'flow-api', $2, 'RS256', 3600) RETURNING id`,
    [instanceId, resource],
  );
  const {
    rows: [scope],
  } = await q(
    `INSERT INTO scopes (instance_id, resource_id, scope_name) VALUES ($1, $2, 'read') RETURNING id`,
    [instanceId, api.id],
  );
  await q(`INSERT INTO client_resources (instance_id, client_id, resource_id) VALUES ($1, $2, $3)`, [
    instanceId,
    passwordClientId,
    api.id,
  ]);
  await q(
    `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id) VALUES ($1, $2, $3, $4)`,
    [instanceId, passwordClientId, api.id, scope.id],
  );
  // the bare provider's accounts: the same logins and hashes, and the claims its findAccount answers
  await q(`CREATE TABLE bench_bare_users (login text PRIMARY KEY, id uuid NOT NULL UNIQUE, password_hash text NOT NULL,
                                          claims jsonb NOT NULL)`);
  await q(
    `INSERT INTO bench_bare_users (login, id, password_hash, claims)
     SELECT user_email, id, password_hash, jsonb_strip_nulls(jsonb_build_object('given_name', given_name,
              'family_name', family_name, 'nickname', nickname, 'locale', locale, 'zoneinfo', zoneinfo,
              'updated_at', extract(epoch from updated_at)::bigint))
       FROM users WHERE user_email LIKE '%@bench.test'`,
  );
  await q('VACUUM ANALYZE');

  // the same private keys for the bare provider, read as the token server reads them
  const { SigningKeys } = await import(pathToFileURL(tokenServerModule(dist, 'keys/signing-keys.js')).href);
  const sql = { rows: async (t, p) => (await db.query(t, p)).rows };
  const [{ id: firstSub }] = (await q(`SELECT id FROM users WHERE user_email = $1`, [login(0)])).rows;
  const keys = await new SigningKeys(sql, box).load();
  await db.end();

  // ---- bare oidc-provider with its development interactions ----
  const barePort = await freePort();
  const bare = `http://127.0.0.1:${barePort}`;
  const bareProcess = withBare
    ? await start(
        'bare oidc-provider',
        [
          ...(env.BENCH_BARE_NODE_ARGS ? env.BENCH_BARE_NODE_ARGS.split(' ') : []),
          path.join(here, 'bare-codeflow-provider.mjs'),
        ],
        {
          BARE_PORT: String(barePort),
          BARE_ISSUER: bare,
          BARE_DATABASE_URL: dbUrl,
          BARE_CLIENT_ID: clientId,
          BARE_CLIENT_SECRET: clientSecret,
          BARE_CALLBACK: CALLBACK,
          BARE_COOKIE_KEY: randomBytes(32).toString('base64url'),
          BARE_JWKS: JSON.stringify({ keys: keys.keys.map((k) => k.privateJwk) }),
          BARE_CLAIMS_MODULE: tokenServerModule(dist, 'oidc/config/claims.js'),
        },
        async () => (await fetch(`${bare}/.well-known/openid-configuration`)).status === 200,
      )
    : undefined;

  const targets = {
    gatehouse: {
      kind: 'gatehouse',
      origin: gh,
      clientId,
      basic: basicAuth(clientId, clientSecret),
      passwordBasic: basicAuth(passwordClientId, passwordClientSecret),
      resource,
      pid: ghProcess.pid,
    },
    ...(bareProcess
      ? {
          bare: {
            kind: 'bare',
            origin: bare,
            clientId,
            basic: basicAuth(clientId, clientSecret),
            pid: bareProcess.pid,
          },
        }
      : {}),
  };

  // one check of each path before measuring: a wrong page shape fails here, not as a run of errors
  for (const t of Object.values(targets)) {
    const claims = await fullFlow(t, new Jar(), login(0));
    if (claims.sub !== firstSub)
      throw new Error(`${t.kind}: the ID token's sub ${claims.sub} is not ${firstSub}`);
  }

  // returning users: every virtual user signs in once (untimed) and keeps its browser's cookies
  const sessions = {};
  for (const [name, t] of Object.entries(targets)) {
    sessions[name] = [];
    for (let vu = 0; vu < vus; vu++) {
      const jar = new Jar();
      await fullFlow(t, jar, login(accounts - 1 - vu));
      await returningFlow(t, jar);
      sessions[name].push(jar);
    }
  }

  /** @type {{ key: string; name: string; server: 'gatehouse' | 'bare'; flow: (vu: number, i: number) => Promise<unknown> }[]} */
  const scenarios = [];
  for (const server of /** @type {const} */ (['gatehouse', 'bare'])) {
    const t = targets[server];
    if (!t) continue;
    scenarios.push({
      key: 'full',
      name: 'full flow: authorize, login (argon2id), consent, code exchange',
      server,
      flow: (_vu, i) => fullFlow(t, new Jar(), login(i)),
    });
  }
  for (const server of /** @type {const} */ (['gatehouse', 'bare'])) {
    const t = targets[server];
    if (!t) continue;
    scenarios.push({
      key: 'sso',
      name: 'returning user (SSO session, consent given): authorize, code exchange',
      server,
      flow: (vu) => returningFlow(t, sessions[server][vu]),
    });
  }
  scenarios.push({
    key: 'password',
    name: 'password grant (argon2id), JWT resource',
    server: 'gatehouse',
    flow: (_vu, i) => passwordGrant(targets.gatehouse, login(i)),
  });

  const statements = async () =>
    Number(
      (
        await admin.query(
          `SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1`,
          [dbName],
        )
      ).rows[0].n,
    );
  const runs = new Map();
  for (let round = 1; round <= rounds; round++) {
    for (const s of scenarios) {
      if (only && !only.has(s.key)) continue;
      const pid = targets[s.server].pid;
      // a warm-up (JIT, pools) on the first round
      if (round === 1) await drive(2, s.flow, pid);
      process.stderr.write(`  round ${round} ${s.server.padEnd(9)} ${s.key} ...`);
      const r = await drive(duration, s.flow, pid, statements);
      const id = `${s.server}\t${s.key}`;
      runs.set(id, [...(runs.get(id) ?? []), r]);
      process.stderr.write(
        ` ${r.perSec.toFixed(1)}/s p50 ${r.p50} ms p99 ${r.p99} ms, ${r.cpuMsPerFlow ?? '?'} ms CPU/flow, ` +
          `core ${r.coreBusy ?? '?'} busy, ${r.txPerFlow ?? '?'} pg tx/flow, errors ${r.errors}${r.errors ? ` (${r.firstErrors[0]})` : ''}\n`,
      );
    }
  }
  for (const s of scenarios) {
    const rs = runs.get(`${s.server}\t${s.key}`);
    if (!rs) continue;
    results.push({
      key: s.key,
      name: s.name,
      server: s.server,
      perSec: median(rs.map((r) => r.perSec)),
      runs: rs.map((r) => Number(r.perSec.toFixed(1))),
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      max: Math.max(...rs.map((r) => r.max)),
      cpuMsPerFlow: median(rs.map((r) => r.cpuMsPerFlow ?? NaN)),
      coreBusy: median(rs.map((r) => r.coreBusy ?? NaN)),
      txPerFlow: median(rs.map((r) => r.txPerFlow ?? NaN)),
      flows: rs.reduce((a, r) => a + r.flows, 0),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      firstErrors: [...new Set(rs.flatMap((r) => r.firstErrors))].slice(0, 3),
      windows: rs.map((r) => r.window),
    });
  }
} catch (err) {
  failure = err;
} finally {
  await procs.stopAll();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}
if (failure) {
  console.error(failure);
  process.exit(1);
}

const loadEnd = loadAverage();
const machine =
  `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} vCPU, Node ${process.versions.node}; servers ` +
  `${hasTaskset ? `pinned to CPU ${cpus}, load on CPU ${loadCpus || 'any'}` : 'not pinned'}; ${vus} virtual users, ` +
  `median of ${rounds} interleaved ${duration} s runs (after a 2 s warm-up); load average ${loadStart} at the start, ` +
  `${loadEnd} at the end`;
const label = (server) =>
  server === 'bare' ? 'bare oidc-provider, dev interactions + argon2id login' : 'Gatehouse apps/auth';
const lines = [
  `| scenario | server | flows/s (median) | runs flows/s | p50 ms | p99 ms | max ms | server CPU ms/flow | core busy | pg tx/flow | errors |`,
  `|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|`,
  ...results.map(
    (r) =>
      `| ${r.name} | ${label(r.server)} | ${r.perSec.toFixed(1)} | ${r.runs.join(', ')} | ${r.p50} | ${r.p99} | ${r.max} | ${r.cpuMsPerFlow} | ${r.coreBusy} | ${r.txPerFlow} | ${r.errors} |`,
  ),
];
const of = (server, key) => results.find((r) => r.server === server && r.key === key);
const ratios = ['full', 'sso'].flatMap((key) => {
  const a = of('gatehouse', key);
  const b = of('bare', key);
  return a && b
    ? [{ key, label: a.name, ratio: a.perSec / b.perSec, cpuRatio: b.cpuMsPerFlow / a.cpuMsPerFlow }]
    : [];
});
console.log(`\nStarted ${startedAt}. Machine: ${machine}`);
console.log(
  `argon2id (Gatehouse's passwords.ts, @node-rs/argon2): ${argon2.algorithm} ${argon2.version} ${argon2.params}; ` +
    `one verify ${argon2.medianMs} ms median, ${argon2.p90Ms} ms p90 on the servers' core: at most ` +
    `${argon2.ceilingPerCore} logins/s per core\n`,
);
console.log(lines.join('\n'));
if (ratios.length) {
  console.log(
    '\n| comparison | Gatehouse / bare flows/s | bare / Gatehouse CPU per flow | target |\n|---|---:|---:|---:|',
  );
  for (const r of ratios)
    console.log(`| ${r.label} | ${r.ratio.toFixed(2)}x | ${r.cpuRatio.toFixed(2)}x | >= 1.0x |`);
}
const pw = of('gatehouse', 'password');
if (pw)
  console.log(
    `\nPassword-grant logins: ${pw.perSec.toFixed(1)}/s on one core (target >= 30, 2x Keycloak's 15 per vCPU); ` +
      `${((pw.perSec / argon2.ceilingPerCore) * 100).toFixed(0)}% of the argon2id ceiling of ${argon2.ceilingPerCore}/s.`,
  );
for (const r of results)
  if (r.errors) console.log(`errors of ${r.server} ${r.key}: ${r.firstErrors.join(' | ')}`);
if (env.BENCH_JSON)
  writeFileSync(
    env.BENCH_JSON,
    JSON.stringify({ machine, date: startedAt, loadStart, loadEnd, argon2, results, ratios }, null, 2),
  );
if (results.some((r) => r.errors)) process.exitCode = 1;
