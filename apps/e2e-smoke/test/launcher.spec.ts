// `npm start` as a user runs it: build, embedded PostgreSQL, three services and the console, clean stop, restart
// keeps the data.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { jest } from '@jest/globals';
import { getFreePort, holdTestLock, isPortFree, type TestLock } from '@gatehouse/testing';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const READY_WITHIN_MS = 30_000;
// Also set here, not only in jest.config.mjs: `npm test` runs every project in one Jest run, which takes the timeout
// from its root config.
jest.setTimeout(120_000);

const skipBuild = ['1', 'true', 'yes'].includes(String(process.env.LAUNCHER_SKIP_BUILD ?? '').toLowerCase());

interface Launcher {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startLauncher(env: NodeJS.ProcessEnv): Launcher {
  const child = spawn(process.execPath, ['tools/launcher/start.mjs'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: string[] = [];
  child.stdout!.on('data', (d: Buffer) => chunks.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => chunks.push(d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => chunks.join(''), exited };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readyz(port: number): Promise<number> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Waits until the launcher has finished its build step, then gives the services READY_WITHIN_MS to be ready. */
async function waitAllReady(l: Launcher, ports: number[], builds: boolean): Promise<void> {
  const buildDeadline = Date.now() + 90_000;
  while (builds && !/\[launcher\] built in/.test(l.output())) {
    if (l.child.exitCode !== null) throw new Error(`launcher exited during the build:\n${l.output()}`);
    if (Date.now() > buildDeadline) throw new Error(`build did not finish:\n${l.output()}`);
    await sleep(200);
  }
  const deadline = Date.now() + READY_WITHIN_MS;
  const pending = new Set(ports);
  while (pending.size) {
    if (l.child.exitCode !== null) throw new Error(`launcher exited (${l.child.exitCode}):\n${l.output()}`);
    if (Date.now() > deadline) {
      throw new Error(`no 200 from /readyz on ${[...pending].join(', ')} within 30 s:\n${l.output()}`);
    }
    for (const port of [...pending]) if ((await readyz(port)) === 200) pending.delete(port);
    if (pending.size) await sleep(250);
  }
}

async function stopLauncher(l: Launcher) {
  l.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), 45_000);
  });
  const result = await Promise.race([l.exited, timeout]);
  clearTimeout(timer);
  if (result === 'timeout') {
    l.child.kill('SIGKILL');
    throw new Error(`launcher did not stop within 45 s:\n${l.output()}`);
  }
  return result;
}

async function withGatehouseDb<T>(
  dataDir: string,
  pgPort: number,
  fn: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const password = fs.readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim();
  const client = new pg.Client({
    host: '127.0.0.1',
    port: pgPort,
    user: 'postgres',
    password,
    database: 'gatehouse',
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe('npm start (tools/launcher/start.mjs)', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let ports: { auth: number; identity: number; tree: number; console: number; pg: number };
  let current: Launcher | undefined;
  // Builds (this file's and the launcher's own, an Nx cache restore that deletes and rewrites dist/apps/*) must not
  // run while another test file runs services from dist/ (the reliability smoke holds the lock shared meanwhile).
  let distLock: TestLock | undefined;

  beforeAll(async () => {
    if (!skipBuild) distLock = await holdTestLock('dist');
    if (!skipBuild) {
      // Build outside the timed part; the launcher's own build is then an Nx cache hit.
      const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '-p', 'auth,identity,tree,console'], {
        cwd: ROOT,
        env: { ...process.env, NX_DAEMON: 'false', NODE_OPTIONS: '' },
        encoding: 'utf8',
      });
      if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}\n${build.stderr}`);
    }
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-smoke-'));
    ports = {
      auth: await getFreePort(),
      identity: await getFreePort(),
      tree: await getFreePort(),
      console: await getFreePort(),
      pg: await getFreePort(),
    };
    env = { ...process.env };
    for (const v of [
      'DATABASE_URL',
      'TREE_DATABASE_URL',
      'REDIS_URL',
      'NODE_OPTIONS',
      'ISSUER',
      'AUTH_URL',
      'CONSOLE_URL',
    ])
      delete env[v];
    Object.assign(env, {
      DATA_DIR: dataDir,
      AUTH_PORT: String(ports.auth),
      IDENTITY_PORT: String(ports.identity),
      TREE_PORT: String(ports.tree),
      CONSOLE_PORT: String(ports.console),
      EMBEDDED_PG_PORT: String(ports.pg),
      NX_DAEMON: 'false',
    });
  }, 180_000);

  afterAll(async () => {
    await distLock?.release();
    if (current && current.child.exitCode === null && current.child.signalCode === null) {
      await stopLauncher(current).catch(() => current?.child.kill('SIGKILL'));
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('starts everything, stops cleanly, and keeps the data for the next start', async () => {
    const marker = randomUUID();
    const servicePorts = [ports.auth, ports.identity, ports.tree, ports.console];

    // First start: creates the embedded cluster and the databases.
    current = startLauncher(env);
    await waitAllReady(current, servicePorts, !skipBuild);
    // Built and started: the second start below does not build.
    await distLock?.release();
    expect(current.output()).toMatch(/embedded PostgreSQL created and started/);
    for (const name of ['[auth] ', '[identity] ', '[tree] ', '[console] '])
      expect(current.output()).toContain(name);
    // the console's line, as the services' (API.md, "Operating surface"): printed once the launcher's own readiness
    // polls have all answered, which may be a moment after ours
    const line = `  console   http://localhost:${ports.console}\n`;
    for (let waited = 0; !current.output().includes(line) && waited < 15_000; waited += 100) await sleep(100);
    expect(current.output()).toContain(line);
    await withGatehouseDb(dataDir, ports.pg, async (c) => {
      await c.query(
        'CREATE TABLE IF NOT EXISTS smoke_marker (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())',
      );
      await c.query('INSERT INTO smoke_marker (id) VALUES ($1)', [marker]);
    });

    // SIGTERM: services then database stop, exit code 0, every port free, no server left on the data dir.
    const first = await stopLauncher(current);
    expect({ ...first, output: first.code === 0 ? '' : current.output() }).toEqual({
      code: 0,
      signal: null,
      output: '',
    });
    for (const port of [...servicePorts, ports.pg]) expect(await isPortFree(port)).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

    // Second start on the same DATA_DIR (nothing to rebuild): no new cluster, the marker is still there.
    current = startLauncher({ ...env, LAUNCHER_SKIP_BUILD: '1' });
    await waitAllReady(current, servicePorts, false);
    expect(current.output()).not.toMatch(/created and started/);
    expect(current.output()).toMatch(/embedded PostgreSQL started/);
    const rows = await withGatehouseDb(dataDir, ports.pg, (c) =>
      c.query('SELECT id FROM smoke_marker WHERE id = $1', [marker]).then((r) => r.rows),
    );
    expect(rows).toEqual([{ id: marker }]);
    for (const port of servicePorts) expect(await readyz(port)).toBe(200);

    const second = await stopLauncher(current);
    expect(second).toEqual({ code: 0, signal: null });
    for (const port of [...servicePorts, ports.pg]) expect(await isPortFree(port)).toBe(true);
  });
});
