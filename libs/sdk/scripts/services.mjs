// The three Gatehouse services as `npm start` runs them: compiled with swc (as each app's `build` target does), each
// in its own Node process, on free ports, sharing one database (auth + identity) and one for tree. Used by the SDK's
// generator (`npm run sdk:generate`) and by the SDK's tests, which talk to them over HTTP like any client.
//
// The PostgreSQL server is TEST_PG_URL's (what the Jest global setup or `npm test` provides), else DATABASE_URL's;
// the caller prepares it (tools/jest/test-env.mjs starts an embedded one when neither is set). Plain ESM so a script
// runs it without compilation; types in services.d.mts.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { getFreePort } from '../../shared/testing/src/embedded-pg.mjs';
import { SERVICE_NODE_FLAGS } from '../../../tools/launcher/node-flags.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const NAMES = ['auth', 'identity', 'tree'];
const READY_TIMEOUT_MS = 90_000;

/** `url` with its database replaced by `database`. */
function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

async function admin(url, fn) {
  const c = new pg.Client({ connectionString: url, application_name: 'gatehouse-sdk-services' });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Compiles the three apps and the libs into `out` as their `build` targets do (one swc run, about 2 s). */
function build(out) {
  execFileSync(
    path.join(REPO_ROOT, 'node_modules/.bin/swc'),
    [
      'apps/auth/src',
      'apps/identity/src',
      'apps/tree/src',
      'libs',
      '-d',
      out,
      '--config-file',
      '.swcrc',
      '--ignore',
      '**/*.spec.ts',
      '--only',
      '**/*.ts',
      '-q',
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

async function waitReady(svc) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (svc.child.exitCode !== null || svc.child.signalCode !== null) {
      throw new Error(`${svc.name} exited (${svc.child.exitCode ?? svc.child.signalCode}):\n${svc.log}`);
    }
    const ok = await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(2000) })
      .then(async (r) => (await r.arrayBuffer(), r.status === 200))
      .catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${svc.name} was not ready within 90 s:\n${svc.log}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function stopChild(svc) {
  const { child } = svc;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killer);
}

/**
 * Starts auth, identity and tree. `env` adds variables to all three (e.g. MULTI_INSTANCE). Resolves when each answers
 * /readyz with 200; `stop()` stops them and drops their databases.
 *
 * @param {{ adminUrl?: string, env?: Record<string, string> }} [opts]
 */
export async function startServices(opts = {}) {
  const adminUrl = opts.adminUrl ?? process.env.TEST_PG_URL ?? process.env.DATABASE_URL;
  if (!adminUrl)
    throw new Error('startServices: set TEST_PG_URL or DATABASE_URL (a server where it may CREATE DATABASE)');
  // Named like the test databases of this run (gh_test_<run>_...), so the run's cleanup drops what a crash leaves.
  const run = /^[a-z0-9]{1,16}$/.test(process.env.GATEHOUSE_TEST_RUN_ID ?? '')
    ? process.env.GATEHOUSE_TEST_RUN_ID
    : 'sdk';
  const dbNames = ['main', 'tree'].map((k) => `gh_test_${run}_sdk_${k}_${randomBytes(4).toString('hex')}`);
  await admin(adminUrl, async (c) => {
    for (const name of dbNames) await c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`);
  });
  const out = path.join(REPO_ROOT, 'tmp', `sdk-services-${process.pid}-${randomBytes(4).toString('hex')}`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gh-sdk-services-'));
  const services = [];
  const cleanup = async () => {
    await Promise.all(services.map(stopChild));
    rmSync(out, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
    await admin(adminUrl, async (c) => {
      for (const name of dbNames)
        await c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`);
    });
  };
  try {
    build(out);
    const ports = {};
    for (const name of NAMES) ports[name] = await getFreePort();
    const url = (name) => `http://127.0.0.1:${ports[name]}`;
    const bootstrap = {
      clientId: randomUUID(),
      clientSecret: `sdk-test-${randomBytes(16).toString('hex')}`,
      adminEmail: `admin-${randomBytes(4).toString('hex')}@sdk.test`,
      adminPassword: `Pw-${randomBytes(12).toString('hex')}`,
    };
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_POINTS: '1000000',
      REDIS_URL: '',
      DATA_DIR: dataDir,
      DATABASE_URL: withDatabase(adminUrl, dbNames[0]),
      TREE_DATABASE_URL: withDatabase(adminUrl, dbNames[1]),
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      BOOTSTRAP_CLIENT_ID: bootstrap.clientId,
      BOOTSTRAP_CLIENT_SECRET: bootstrap.clientSecret,
      BOOTSTRAP_ADMIN_EMAIL: bootstrap.adminEmail,
      BOOTSTRAP_ADMIN_PASSWORD: bootstrap.adminPassword,
      BOOTSTRAP_SECRETS_FILE: '',
      AUTH_PORT: String(ports.auth),
      IDENTITY_PORT: String(ports.identity),
      TREE_PORT: String(ports.tree),
      ISSUER: url('auth'),
      AUTH_URL: url('auth'),
      ...opts.env,
    };
    for (const name of NAMES) {
      const main = path.join(out, 'apps', name, 'src', 'main.js');
      const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, main], {
        cwd: REPO_ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const svc = { name, url: url(name), child, log: '' };
      child.stdout.on('data', (d) => (svc.log += d.toString()));
      child.stderr.on('data', (d) => (svc.log += d.toString()));
      services.push(svc);
    }
    await Promise.all(services.map(waitReady));
    return {
      authUrl: url('auth'),
      identityUrl: url('identity'),
      treeUrl: url('tree'),
      ...bootstrap,
      buildDir: out,
      logs: () => Object.fromEntries(services.map((s) => [s.name, s.log])),
      stop: cleanup,
    };
  } catch (err) {
    await cleanup().catch(() => undefined);
    throw err;
  }
}
