// The services as `npm start` starts them (tools/launcher/start.mjs, built dist/, fresh databases on TEST_PG_URL's
// server), for the console's Chromium tests; the same steps as console.browser.e2e.spec.ts's set-up, as a helper.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { getFreePort, holdTestLock } from '@gatehouse/testing';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const PG = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const dbUrl = (name: string) => {
  const u = new URL(PG);
  u.pathname = `/${name}`;
  return u.toString();
};

async function adminSql(sql: string) {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export interface Services {
  ports: { auth: number; identity: number; tree: number; console: number };
  admin: { email: string; password: string };
  /** The tree service's database (for seeding). */
  treeDbUrl: string;
  console(p?: string): string;
  stop(): Promise<void>;
}

/** Builds (an Nx cache hit when nothing changed), creates two databases and starts the launcher on free ports. */
export async function startServices(): Promise<Services> {
  const db = `gh_console_tree_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = { email: `admin-${randomUUID().slice(0, 8)}@example.test`, password: 'Console-admin-pass-1' };
  const ports = { auth: 0, identity: 0, tree: 0, console: 0 };
  const distLock = await holdTestLock('dist');
  let launcher: ChildProcess | undefined;
  let dataDir: string | undefined;
  const stop = async () => {
    await distLock.release().catch(() => undefined);
    if (launcher && launcher.exitCode === null) {
      launcher.kill('SIGTERM');
      await new Promise((r) => launcher?.once('exit', r));
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await adminSql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined);
    await adminSql(`DROP DATABASE IF EXISTS ${db}_tree WITH (FORCE)`).catch(() => undefined);
  };
  try {
    const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '-p', 'auth,identity,tree,console'], {
      cwd: ROOT,
      env: { ...process.env, NX_DAEMON: 'false', NODE_OPTIONS: '' },
      encoding: 'utf8',
    });
    if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}\n${build.stderr}`);
    await adminSql(`CREATE DATABASE ${db}`);
    await adminSql(`CREATE DATABASE ${db}_tree`);
    for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await getFreePort();
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const v of ['ISSUER', 'AUTH_URL', 'CONSOLE_URL', 'CORS_ORIGINS', 'REDIS_URL', 'NODE_OPTIONS'])
      delete env[v];
    let output = '';
    launcher = spawn(process.execPath, ['tools/launcher/start.mjs'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...env,
        LAUNCHER_SKIP_BUILD: '1',
        DATA_DIR: (dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-console-tree-e2e-'))),
        DATABASE_URL: dbUrl(db),
        TREE_DATABASE_URL: dbUrl(`${db}_tree`),
        AUTH_PORT: String(ports.auth),
        IDENTITY_PORT: String(ports.identity),
        TREE_PORT: String(ports.tree),
        CONSOLE_PORT: String(ports.console),
        BOOTSTRAP_ADMIN_EMAIL: admin.email,
        BOOTSTRAP_ADMIN_PASSWORD: admin.password,
        LOG_LEVEL: 'warn',
      },
    });
    launcher.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    launcher.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 90_000;
    while (!output.includes('press Ctrl-C to stop')) {
      if (launcher.exitCode !== null) throw new Error(`launcher exited:\n${output}`);
      if (Date.now() > deadline) throw new Error(`services not ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    await distLock.release();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ports,
    admin,
    treeDbUrl: dbUrl(`${db}_tree`),
    console: (p = '/') => `http://localhost:${ports.console}${p}`,
    stop,
  };
}
