#!/usr/bin/env node
// `npm start`: the three Gatehouse services and the admin console on one machine, with nothing to install.
//
//   DATA_DIR            where data lives (default .data/): embedded PostgreSQL in DATA_DIR/pg, its log in
//                       DATA_DIR/postgres.log, its password in DATA_DIR/pg-password; passed on to the services.
//   DATABASE_URL        identity + auth database. Unset: an embedded PostgreSQL is started (databases `gatehouse`
//   TREE_DATABASE_URL   and `gatehouse_tree`). TREE_DATABASE_URL defaults to DATABASE_URL.
//   EMBEDDED_PG_PORT    port of the embedded PostgreSQL (default 54329, 127.0.0.1 only).
//   EMBEDDED_PG_PASSWORD  password of its `postgres` user when the cluster is first created (default: random,
//                       kept in DATA_DIR/pg-password).
//   AUTH_PORT, IDENTITY_PORT, TREE_PORT, CONSOLE_PORT   3000, 3001, 3002, 3003 (the console: apps/console, a static
//                       server of the built single-page app; it signs in through the token server).
//   LAUNCHER_SKIP_BUILD=1       do not run `nx run-many -t build` (the dist/ output is already there, e.g. an image).
//   LAUNCHER_DIST_DIR           where built apps are (default dist/apps): <dir>/<app>/apps/<app>/src/main.js.
//   LAUNCHER_READY_TIMEOUT_SEC  how long each service may take to answer /readyz (default 60).
//   BOOTSTRAP_SECRETS_FILE      where first start writes the generated credentials (mode 0600; default here
//                       bootstrap-secrets.txt in DATA_DIR, so they stay out of the terminal's scrollback and any log;
//                       set it empty to print them instead).
//
// Every other variable is passed through to the services. Output lines are prefixed [auth], [identity], [tree],
// [console].
// Ctrl-C / SIGTERM: the services get SIGTERM (SIGKILL after 10 s), then the database stops. Exit code 0 then;
// non-zero when the build fails, the database or a service cannot start, or a service dies.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  isPortFree,
  randomPassword,
  startEmbeddedPostgres,
} from '../../libs/shared/testing/src/embedded-pg.mjs';
import { SERVICE_NODE_FLAGS } from './node-flags.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVICES = [
  { name: 'auth', portVar: 'AUTH_PORT', defaultPort: 3000 },
  { name: 'identity', portVar: 'IDENTITY_PORT', defaultPort: 3001 },
  { name: 'tree', portVar: 'TREE_PORT', defaultPort: 3002 },
  // no database, no /docs: the built console and its /config.json (apps/console/server/main.mjs)
  { name: 'console', portVar: 'CONSOLE_PORT', defaultPort: 3003, docs: false },
];
const DATABASES = ['gatehouse', 'gatehouse_tree'];
const STOP_GRACE_MS = 10_000;

const say = (msg) => process.stdout.write(`[launcher] ${msg}\n`);
const complain = (msg) => process.stderr.write(`[launcher] ${msg}\n`);

class StartError extends Error {}

function portFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new StartError(`${name} must be a port number, got "${raw}"`);
  return n;
}

/** Copies a child's output to ours line by line, each line prefixed. */
function pipeLines(stream, out, prefix, { skipBlank = false } = {}) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (!skipBlank || line.trim()) out.write(`${prefix}${line}\n`);
  });
  stream.on('end', () => {
    if (rest) out.write(`${prefix}${rest}\n`);
    rest = '';
  });
}

function run(cmd, args, prefix, env, state) {
  return new Promise((resolve) => {
    // Own process group, so stopping the build stops npx and the nx processes under it.
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    state.build = { child, exited: new Promise((r) => child.once('exit', r)) };
    void state.build.exited.then(() => (state.build = undefined));
    pipeLines(child.stdout, process.stdout, prefix, { skipBlank: true });
    pipeLines(child.stderr, process.stderr, prefix, { skipBlank: true });
    child.once('error', (err) => {
      complain(`${cmd}: ${err.message}`);
      resolve(1);
    });
    child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function buildApps(state) {
  if (['1', 'true', 'yes'].includes(String(process.env.LAUNCHER_SKIP_BUILD ?? '').toLowerCase())) return;
  say(`building ${SERVICES.map((s) => s.name).join(', ')} ...`);
  const started = Date.now();
  const code = await run(
    'npx',
    ['nx', 'run-many', '-t', 'build', '-p', SERVICES.map((s) => s.name).join(','), '--output-style=static'],
    '[build] ',
    { ...process.env, NX_DAEMON: process.env.NX_DAEMON ?? 'false' },
    state,
  );
  if (code !== 0) throw new StartError(`build failed (exit code ${code})`);
  say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** As root the server runs as `postgres`: it must be able to enter DATA_DIR (we made it, so we may allow that). */
async function letPostgresEnter(dataDir) {
  if (process.getuid?.() !== 0) return;
  const st = await fsp.stat(dataDir);
  if ((st.mode & 0o001) === 0) {
    await fsp.chmod(dataDir, (st.mode & 0o7777) | 0o001);
    say(`allowed the postgres user to enter ${dataDir} (chmod o+x)`);
  }
}

async function embeddedPassword(dataDir, pgDir) {
  const file = path.join(dataDir, 'pg-password');
  try {
    const saved = (await fsp.readFile(file, 'utf8')).trim();
    if (saved) return saved;
  } catch {
    /* first start */
  }
  if (fs.existsSync(path.join(pgDir, 'PG_VERSION')) && !process.env.EMBEDDED_PG_PASSWORD) {
    throw new StartError(
      `${pgDir} holds a database but ${file} is missing: put the postgres password in it or set EMBEDDED_PG_PASSWORD`,
    );
  }
  const password = process.env.EMBEDDED_PG_PASSWORD || randomPassword();
  await fsp.writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

async function ensureDatabases(adminUrl, names) {
  const client = new pg.Client({ connectionString: adminUrl, application_name: 'gatehouse-launcher' });
  await client.connect();
  try {
    for (const name of names) {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount === 0) {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
        say(`created database ${name}`);
      }
    }
  } finally {
    await client.end();
  }
}

async function startDatabase(dataDir, state) {
  if (process.env.DATABASE_URL) {
    process.env.TREE_DATABASE_URL ||= process.env.DATABASE_URL;
    say('using DATABASE_URL / TREE_DATABASE_URL (no embedded database)');
    return;
  }
  const port = portFromEnv('EMBEDDED_PG_PORT', 54329);
  const pgDir = path.join(dataDir, 'pg');
  await letPostgresEnter(dataDir);
  const password = await embeddedPassword(dataDir, pgDir);
  const logFile = path.join(dataDir, 'postgres.log');
  const log = fs.createWriteStream(logFile, { flags: 'a' });
  state.pgLog = log;
  const started = Date.now();
  try {
    state.pg = await startEmbeddedPostgres({
      dataDir: pgDir,
      port,
      password,
      detached: true,
      // Large tree moves write megabytes of WAL in one transaction; a WAL writer waking every 10 ms (default 200 ms)
      // has most of it on disk before COMMIT (docs/benchmarks.md, tree storage).
      flags: ['-c', 'wal_writer_delay=10ms'],
      onLog: (text) => log.write(text),
    });
  } catch (err) {
    throw new StartError(`embedded PostgreSQL did not start: ${err instanceof Error ? err.message : err}`);
  }
  say(
    `embedded PostgreSQL ${state.pg.initialised ? 'created and ' : ''}started on 127.0.0.1:${port} ` +
      `in ${((Date.now() - started) / 1000).toFixed(1)} s (data ${pgDir}, log ${logFile})`,
  );
  void state.pg.exited.then(({ code, signal }) => {
    if (!state.stopping) {
      complain(`embedded PostgreSQL exited unexpectedly (code ${code}, signal ${signal}); see ${logFile}`);
      void shutdown(state, 1);
    }
  });
  await ensureDatabases(state.pg.url('postgres'), DATABASES);
  process.env.DATABASE_URL = state.pg.url('gatehouse');
  process.env.TREE_DATABASE_URL = state.pg.url('gatehouse_tree');
}

function spawnService(svc, state, env) {
  const main = path.join(env.LAUNCHER_DIST_DIR, svc.name, 'apps', svc.name, 'src', 'main.js');
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, main], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal Ctrl-C reaches only the launcher, which stops things in order.
    detached: true,
  });
  svc.child = child;
  svc.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  pipeLines(child.stdout, process.stdout, `[${svc.name}] `);
  pipeLines(child.stderr, process.stderr, `[${svc.name}] `);
  child.once('error', (err) => complain(`${svc.name}: ${err.message}`));
  void svc.exited.then(({ code, signal }) => {
    svc.child = undefined;
    if (state.stopping) return;
    complain(`${svc.name} exited (code ${code}, signal ${signal}); stopping everything`);
    void shutdown(state, 1);
  });
}

async function waitReady(svc, timeoutMs) {
  const url = `http://127.0.0.1:${svc.port}/readyz`;
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  void svc.exited.then(() => (dead = true));
  while (Date.now() < deadline) {
    if (dead) throw new StartError(`${svc.name} exited before it was ready`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new StartError(`${svc.name} did not answer ${url} with 200 within ${timeoutMs / 1000} s`);
}

async function stopChild(svc, force) {
  const child = svc.child;
  if (!child) return;
  try {
    child.kill(force ? 'SIGKILL' : 'SIGTERM');
  } catch {
    return;
  }
  let timer;
  const done = await Promise.race([
    svc.exited.then(() => true),
    new Promise((r) => {
      timer = setTimeout(r, STOP_GRACE_MS, false);
    }),
  ]);
  clearTimeout(timer);
  if (!done) {
    complain(`${svc.name} did not stop within ${STOP_GRACE_MS / 1000} s; killing it`);
    try {
      child.kill('SIGKILL');
    } catch {
      /* gone */
    }
    await svc.exited;
  }
}

async function shutdown(state, code) {
  if (state.stopping) {
    // Asked again while stopping: do not wait for the services any longer.
    for (const svc of SERVICES) svc.child?.kill('SIGKILL');
    return state.stopping;
  }
  state.stopping = (async () => {
    if (state.build) {
      try {
        process.kill(-state.build.child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      await Promise.race([state.build.exited, new Promise((r) => setTimeout(r, 5000).unref())]);
    }
    const live = SERVICES.filter((s) => s.child);
    if (live.length) say(`stopping ${live.map((s) => s.name).join(', ')} ...`);
    await Promise.all(live.map((s) => stopChild(s, false)));
    if (state.pg) {
      say('stopping the embedded PostgreSQL ...');
      await state.pg.stop();
    }
    state.pgLog?.end();
    say(code === 0 ? 'stopped' : `stopped (exit code ${code})`);
    process.exit(code);
  })();
  return state.stopping;
}

async function main() {
  const state = { pg: undefined, pgLog: undefined, build: undefined, stopping: undefined };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      say(`${signal} received`);
      void shutdown(state, 0);
    });
  }
  // Last resort if we die some other way: do not leave services behind.
  process.on('exit', () => {
    for (const svc of SERVICES) svc.child?.kill('SIGKILL');
  });

  try {
    const startedAt = Date.now();
    for (const svc of SERVICES) svc.port = portFromEnv(svc.portVar, svc.defaultPort);
    const dataDir = path.resolve(process.env.DATA_DIR || '.data');
    await fsp.mkdir(dataDir, { recursive: true });
    process.env.DATA_DIR = dataDir;
    process.env.LAUNCHER_DIST_DIR = path.resolve(ROOT, process.env.LAUNCHER_DIST_DIR || 'dist/apps');
    const timeoutMs = portFromEnv('LAUNCHER_READY_TIMEOUT_SEC', 60) * 1000;

    for (const svc of SERVICES) {
      if (!(await isPortFree(svc.port))) {
        throw new StartError(`port ${svc.port} (${svc.portVar}) is already in use`);
      }
    }
    await buildApps(state);
    for (const svc of SERVICES) {
      const main = path.join(process.env.LAUNCHER_DIST_DIR, svc.name, 'apps', svc.name, 'src', 'main.js');
      if (!fs.existsSync(main))
        throw new StartError(`${main} is missing: build the apps (npx nx run-many -t build)`);
    }
    if (state.stopping) return;
    await startDatabase(dataDir, state);
    if (state.stopping) return;

    const env = { ...process.env };
    // generated credentials into a 0600 file in DATA_DIR, only its path on the console (unless the caller chose)
    if (env.BOOTSTRAP_SECRETS_FILE === undefined) env.BOOTSTRAP_SECRETS_FILE = 'bootstrap-secrets.txt';
    for (const svc of SERVICES) env[svc.portVar] = String(svc.port);
    env.AUTH_URL ||= `http://127.0.0.1:${SERVICES[0].port}`;
    for (const svc of SERVICES) spawnService(svc, state, env);
    await Promise.all(SERVICES.map((svc) => waitReady(svc, timeoutMs)));
    if (state.stopping) return;

    const width = Math.max(...SERVICES.map((s) => s.name.length));
    say(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    for (const svc of SERVICES) {
      process.stdout.write(
        `  ${svc.name.padEnd(width)}  http://localhost:${svc.port}` +
          (svc.docs === false ? '\n' : `   (docs http://localhost:${svc.port}/docs)\n`),
      );
    }
    process.stdout.write(
      state.pg
        ? `  database  embedded PostgreSQL on 127.0.0.1:${state.pg.port}, user postgres, password in ${path.join(dataDir, 'pg-password')}\n`
        : '  database  DATABASE_URL / TREE_DATABASE_URL\n',
    );
    say('press Ctrl-C to stop');
  } catch (err) {
    if (state.stopping) return;
    complain(err instanceof StartError ? err.message : `failed: ${err instanceof Error ? err.stack : err}`);
    await shutdown(state, 1); // stops whatever did start, the database last
  }
}

await main();
