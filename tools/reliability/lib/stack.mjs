// The system under test of the reliability suite: a real PostgreSQL (an embedded server of its own, so a scenario
// may stop and start it, or a database on an existing server) and the three services built into dist/, started as
// separate processes exactly as they are deployed. Nothing is mocked.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, processGroup, withDb } from '../../bench/lib/processes.mjs';
import {
  randomPassword,
  startEmbeddedPostgres,
  stopEmbeddedPostgres,
} from '../../../libs/shared/testing/src/embedded-pg.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MAINS = {
  auth: path.join(ROOT, 'dist/apps/auth/apps/auth/src/main.js'),
  identity: path.join(ROOT, 'dist/apps/identity/apps/identity/src/main.js'),
  tree: path.join(ROOT, 'dist/apps/tree/apps/tree/src/main.js'),
};

/** Builds the three services with swc (a few seconds) unless RELIABILITY_SKIP_BUILD is set and dist/ is there. */
export function buildServices() {
  const skip = ['1', 'true', 'yes'].includes(String(process.env.RELIABILITY_SKIP_BUILD ?? '').toLowerCase());
  if (skip && Object.values(MAINS).every((f) => existsSync(f))) return;
  execFileSync('npx', ['nx', 'run-many', '-t', 'build', '-p', 'auth', 'identity', 'tree'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NX_DAEMON: 'false', NX_TUI: 'false', NX_NO_CLOUD: 'true' },
  });
}

/** Resident set size of a process in bytes (Linux /proc), or undefined. */
export function rssBytes(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * @typedef {object} Stack
 * @property {string} authUrl
 * @property {string} identityUrl
 * @property {string} treeUrl
 * @property {string} dbUrl           the services' database (identity tables, oidc artifacts, tree)
 * @property {{ id: string; secret: string }} client  the default client (every management and tree scope)
 * @property {{ email: string; password: string }} admin
 * @property {Record<'auth'|'identity'|'tree', import('node:child_process').ChildProcess>} procs
 * @property {(name: 'auth'|'identity'|'tree') => Promise<void>} stop     stops one service
 * @property {(name: 'auth'|'identity'|'tree') => Promise<void>} start    starts one service again (same port)
 * @property {() => Promise<void>} stopDatabase   stops the embedded PostgreSQL (embedded mode only)
 * @property {() => Promise<void>} startDatabase  starts it again on the same port and data
 * @property {(audience: string, scope?: string) => Promise<string>} token  a client_credentials access token
 * @property {(name: 'auth'|'identity'|'tree') => string} logOf
 * @property {() => Promise<void>} close
 */

/**
 * Starts PostgreSQL (embedded unless `adminUrl` is given) and the three services.
 * @param {{ embedded?: boolean; adminUrl?: string; env?: Record<string, string>; log?: (s: string) => void }} [o]
 * @returns {Promise<Stack>}
 */
export async function startStack(o = {}) {
  const log = o.log ?? (() => undefined);
  const work = mkdtempSync(path.join(os.tmpdir(), 'gh-reliability-'));
  // As root the embedded server runs as the `postgres` user, which must be able to enter this directory.
  chmodSync(work, 0o711);
  let pgHandle;
  let pgOptions;
  let dbUrl;
  let adminUrl = o.adminUrl;
  if (o.embedded !== false && !adminUrl) {
    const pgDir = path.join(work, 'pg');
    const password = randomPassword();
    const port = await freePort();
    pgOptions = { dataDir: pgDir, port, password, flags: ['-c', 'fsync=off', '-c', 'max_connections=300'] };
    pgHandle = await startEmbeddedPostgres(pgOptions);
    dbUrl = pgHandle.url('postgres');
    adminUrl = dbUrl;
  }
  adminUrl ??= process.env.TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `gh_reliability_${randomBytes(5).toString('hex')}`;
  {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
  }
  dbUrl = withDb(adminUrl, dbName);

  const client = { id: randomUUID(), secret: randomBytes(24).toString('base64url') };
  const admin = { email: 'admin@reliability.test', password: `Rel-${randomBytes(9).toString('hex')}!` };
  const [authPort, identityPort, treePort] = [await freePort(), await freePort(), await freePort()];
  const authUrl = `http://127.0.0.1:${authPort}`;
  const identityUrl = `http://127.0.0.1:${identityPort}`;
  const treeUrl = `http://127.0.0.1:${treePort}`;
  const shared = {
    DATABASE_URL: dbUrl,
    DATA_DIR: path.join(work, 'data'),
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    BOOTSTRAP_CLIENT_ID: client.id,
    BOOTSTRAP_CLIENT_SECRET: client.secret,
    BOOTSTRAP_ADMIN_EMAIL: admin.email,
    BOOTSTRAP_ADMIN_PASSWORD: admin.password,
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    AUTH_URL: authUrl,
    ISSUER: authUrl,
    ...o.env,
  };
  const group = processGroup({ cwd: ROOT, env: { ...process.env, ...shared } });
  const childEnv = {
    auth: { AUTH_PORT: String(authPort) },
    identity: { IDENTITY_PORT: String(identityPort) },
    tree: { TREE_PORT: String(treePort), TREE_DATABASE_URL: dbUrl },
  };
  const urls = { auth: authUrl, identity: identityUrl, tree: treeUrl };
  /** @type {Record<string, import('node:child_process').ChildProcess>} */
  const procs = {};

  const live = async (name) => {
    try {
      const res = await fetch(`${urls[name]}/livez`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  };
  const start = async (name) => {
    log(`starting ${name}`);
    procs[name] = await group.start(name, [MAINS[name]], {
      childEnv: childEnv[name],
      ready: () => live(name),
      timeoutMs: 90_000,
    });
    // What the service logs from now on, kept for the report of a failure (RELIABILITY_KEEP_LOGS keeps the files).
    const file = path.join(work, `${name}.log`);
    procs[name].stdout?.on('data', (d) => appendFileSync(file, d));
    procs[name].stderr?.on('data', (d) => appendFileSync(file, d));
  };
  const stop = async (name) => {
    const c = procs[name];
    if (!c || c.exitCode !== null) return;
    await new Promise((resolve) => {
      c.once('exit', resolve);
      c.kill('SIGTERM');
      setTimeout(() => c.kill('SIGKILL'), 5000).unref();
    });
  };

  try {
    // The token server migrates and seeds first; identity and tree then find the schema in place.
    await start('auth');
    await start('identity');
    await start('tree');
  } catch (err) {
    await group.stopAll();
    if (pgHandle) await stopEmbeddedPostgres(pgHandle, { removeData: true });
    rmSync(work, { recursive: true, force: true });
    throw err;
  }

  const token = async (audience, scope) => {
    const body = new URLSearchParams({ grant_type: 'client_credentials', audience });
    if (scope) body.set('scope', scope);
    const res = await fetch(`${authUrl}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      },
      body,
    });
    const json = /** @type {{ access_token: string }} */ (await res.json());
    if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(json)}`);
    return json.access_token;
  };

  return {
    authUrl,
    identityUrl,
    treeUrl,
    dbUrl,
    client,
    admin,
    procs,
    /** The log of a service since it last started (empty when it logged nothing). */
    logOf(name) {
      try {
        return readFileSync(path.join(work, `${name}.log`), 'utf8');
      } catch {
        return '';
      }
    },
    stop,
    start,
    token,
    async stopDatabase() {
      if (!pgHandle) throw new Error('stopDatabase needs the embedded PostgreSQL');
      log('stopping PostgreSQL');
      await pgHandle.stop();
    },
    async startDatabase() {
      if (!pgOptions) throw new Error('startDatabase needs the embedded PostgreSQL');
      log('starting PostgreSQL');
      pgHandle = await startEmbeddedPostgres(pgOptions);
    },
    async close() {
      await group.stopAll();
      if (pgHandle) {
        await stopEmbeddedPostgres(pgHandle, { removeData: true }).catch(() => undefined);
      } else {
        const c = new pg.Client({ connectionString: adminUrl });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
        await c.end();
      }
      rmSync(work, { recursive: true, force: true });
    },
  };
}
