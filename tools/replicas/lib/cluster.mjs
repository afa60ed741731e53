// Several replicas of each Gatehouse service behind one HAProxy, on one PostgreSQL and one Redis: the deployment of
// docs/deployment.md ("Many replicas behind a load balancer") on one machine. A replica is started by ONE function
// passed as `startCluster({ startReplica })`, with the same arguments (service, name, env, port) and the same handle
// whatever runs it: `startProcessReplica` (the built app from dist/ as a process) or the `startReplica` of
// `containerRuntime(image)` (a container of docker/Dockerfile's image, as the deployment runs it). The operator's
// one-off entry points (rotate-keys) go through `runEntry` the same way.
import { randomBytes, randomUUID } from 'node:crypto';
import { execFile, spawn } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { withDb } from '../../bench/lib/processes.mjs';
import net from 'node:net';
import { SERVICE_NODE_FLAGS } from '../../launcher/node-flags.mjs';
import { PIN_HEADER, SERVED_BY_HEADER, renderHaproxyConfig, startHaproxy } from './haproxy.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const MAINS = {
  auth: path.join(ROOT, 'dist/apps/auth/apps/auth/src/main.js'),
  identity: path.join(ROOT, 'dist/apps/identity/apps/identity/src/main.js'),
  tree: path.join(ROOT, 'dist/apps/tree/apps/tree/src/main.js'),
};
const execFileAsync = promisify(execFile);
const PORT_VARS = { auth: 'AUTH_PORT', identity: 'IDENTITY_PORT', tree: 'TREE_PORT' };
/** Where a service's built files are, relative to the workspace (dist/) and to the image's WORKDIR (/app). */
const distFile = (/** @type {Service} */ service, /** @type {string} */ entry) =>
  `dist/apps/${service}/apps/${service}/src/${entry}.js`;

/** Ports handed out by this process (two calls at once must not pick the same one). */
const taken = new Set();

/**
 * A free port BELOW the kernel's ephemeral range (32768-60999 on Linux), for the replicas and HAProxy: a port that
 * `listen(0)` handed out and this harness released could be taken by another test's `listen(0)` or outgoing
 * connection before a container (slower to start than a process) binds it; a replica would then fail to start and
 * its port answer for another server. Below the range, only a fixed choice can collide, and none here makes one.
 * @returns {Promise<number>}
 */
export async function freePort() {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    if (taken.has(port)) continue;
    const free = await new Promise((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '0.0.0.0', () => s.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
}

/**
 * @typedef {'auth' | 'identity' | 'tree'} Service
 * @typedef {object} Replica
 * @property {Service} service
 * @property {string} name            e.g. auth-2 (HAProxy's server name, answered in X-Served-By)
 * @property {number} port
 * @property {string} url             the replica itself, bypassing the proxy
 * @property {(signal?: NodeJS.Signals) => void} kill
 * @property {() => Promise<void>} stop     SIGTERM, SIGKILL after 5 s
 * @property {Promise<unknown>} exited
 * @property {() => string} log       what it printed so far
 * @typedef {(o: { service: Service; name: string; env: Record<string, string>; port: number; dir: string })
 *   => Promise<Replica>} StartReplica
 * @typedef {(o: { service: Service; entry: string; env: Record<string, string> }) => Promise<string>} RunEntry
 *   runs one of a service's other entry points (e.g. `rotate-keys`) to its end; resolves with its output
 */

/** @type {StartReplica} */
export async function startProcessReplica({ service, name, env, port, dir }) {
  const file = path.join(dir, `${name}.log`);
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, MAINS[service]], {
    cwd: ROOT,
    env: { ...process.env, ...env, [PORT_VARS[service]]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d) => appendFileSync(file, d));
  child.stderr.on('data', (d) => appendFileSync(file, d));
  return replicaHandle({ service, name, port, child, file });
}

/** @type {RunEntry} */
export async function runProcessEntry({ service, entry, env }) {
  const { stdout } = await execFileAsync(process.execPath, [path.join(ROOT, distFile(service, entry))], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  return stdout;
}

/**
 * Replicas as containers of `image` (docker/Dockerfile), as deploy/kubernetes runs them: the image's own command
 * (SERVICE picks the service), a non-root user, a read-only root with only /tmp and DATA_DIR writable (tmpfs: a
 * DATA_DIR of its own per container, nothing shared through it), the host's network (the private engine of
 * tools/containers/engine.sh has no bridge; PostgreSQL, Redis and HAProxy are the host's). Every container is named
 * `<prefix>-<replica>` (a prefix per run) and removed when it stops; `close` removes any left over.
 * Only the variables the cluster passes reach a container (not this process's environment), as in a deployment.
 * @param {{ image: string }} o
 * @returns {{ startReplica: StartReplica; runEntry: RunEntry; close: () => Promise<void>; prefix: string }}
 */
export function containerRuntime({ image }) {
  const prefix = `gh-replicas-${randomBytes(4).toString('hex')}`;
  /** @type {Promise<string> | undefined} */
  let user;
  // The image's user as uid:gid (the tmpfs for DATA_DIR must be that user's): asked once, from the image itself.
  const imageUser = () =>
    (user ??= execFileAsync('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      '--entrypoint',
      'sh',
      image,
      '-c',
      'echo "$(id -u):$(id -g)"',
    ]).then(({ stdout }) => stdout.trim()));
  const DATA_DIR = '/var/lib/gatehouse';
  const envArgs = (/** @type {Record<string, string>} */ env) =>
    Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const runArgs = async (/** @type {string} */ name) => {
    const [uid, gid] = (await imageUser()).split(':');
    return [
      'run',
      '--rm',
      '--name',
      name,
      '--label',
      `gatehouse.replicas=${prefix}`,
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      `${DATA_DIR}:uid=${uid},gid=${gid},mode=0700`,
    ];
  };

  /** @type {StartReplica} */
  const startReplica = async ({ service, name, env, port, dir }) => {
    const file = path.join(dir, `${name}.log`);
    const container = `${prefix}-${name}`;
    const args = [
      ...(await runArgs(container)),
      ...envArgs({ ...env, SERVICE: service, DATA_DIR, [PORT_VARS[service]]: String(port) }),
      image,
    ];
    // Attached (no -d): this `docker run` lives as long as the container, prints its output and exits with its
    // code, so `exited` and `log` are the container's.
    const child = spawn('docker', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => appendFileSync(file, d));
    child.stderr.on('data', (d) => appendFileSync(file, d));
    const handle = replicaHandle({ service, name, port, child, file });
    const done = () => child.exitCode !== null || child.signalCode !== null;
    return {
      ...handle,
      // The signal goes to the container's process (node is its PID 1), not to the attached client.
      kill: (signal = 'SIGKILL') => {
        if (!done()) execFile('docker', ['kill', '--signal', signal, container], () => undefined);
      },
      stop: async () => {
        if (done()) return;
        // SIGTERM, SIGKILL after 5 s: docker's own stop.
        await execFileAsync('docker', ['stop', '-t', '5', container]).catch(() => undefined);
        await handle.exited;
      },
    };
  };

  /** @type {RunEntry} */
  const runEntry = async ({ service, entry, env }) => {
    const args = [
      ...(await runArgs(`${prefix}-${entry}-${randomBytes(2).toString('hex')}`)),
      ...envArgs({ ...env, SERVICE: service, DATA_DIR }),
      image,
      'node',
      distFile(service, entry),
    ];
    const { stdout } = await execFileAsync('docker', args, { cwd: ROOT });
    return stdout;
  };

  const close = async () => {
    const { stdout } = await execFileAsync('docker', [
      'ps',
      '-aq',
      '--filter',
      `label=gatehouse.replicas=${prefix}`,
    ]).catch(() => ({ stdout: '' }));
    const left = stdout.split('\n').filter(Boolean);
    if (left.length) await execFileAsync('docker', ['rm', '-f', ...left]).catch(() => undefined);
  };
  return { startReplica, runEntry, close, prefix };
}

/**
 * The handle of a replica running as `child` (its output in `file`): stop (SIGTERM, SIGKILL after 5 s), kill, its
 * exit and its log. For every starter that spawns a process (this one, the scale-out benchmark's pinned one).
 * @param {{ service: Service; name: string; port: number; child: import('node:child_process').ChildProcess;
 *   file: string }} o
 * @returns {Replica}
 */
export function replicaHandle({ service, name, port, child, file }) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    service,
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    kill: (/** @type {NodeJS.Signals} */ signal = 'SIGKILL') => void child.kill(signal),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const force = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(force);
    },
    exited,
    log: () => (existsSync(file) ? readFileSync(file, 'utf8') : ''),
  };
}

async function ready(url, exited, timeoutMs) {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !gone) {
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return true;
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

/**
 * @typedef {object} Cluster
 * @property {Record<Service, string>} urls          each service through HAProxy
 * @property {Record<Service, Replica[]>} replicas
 * @property {string} dbUrl
 * @property {{ id: string; secret: string }} client  the bootstrap client (every management and tree scope)
 * @property {{ email: string; password: string }} admin
 * @property {(service: Service, path: string, init?: RequestInit & { replica?: string }) => Promise<Response>} fetch
 *   a request through HAProxy; `replica` pins it to that replica
 * @property {(audience: string, o?: { replica?: string; id?: string; secret?: string }) => Promise<string>} token
 * @property {() => Promise<void>} rotateKeys   the operator's key rotation (auth's rotate-keys entry point)
 * @property {() => string} haproxyLog
 * @property {() => Promise<void>} close
 */

/**
 * Creates a fresh database, starts every replica at the same moment (so their migrations race, as in a rolling
 * deploy of a new version) and HAProxy in front of them.
 * `replicaEnv` adds variables for one replica by name (e.g. `auth-1`).
 * @param {{ counts?: Partial<Record<Service, number>>; env?: Record<string, string>; haproxyBin: string;
 *   replicaEnv?: Record<string, Record<string, string>>;
 *   redisUrl?: string; adminUrl?: string; startReplica?: StartReplica; runEntry?: RunEntry;
 *   log?: (s: string) => void }} o
 * @returns {Promise<Cluster>}
 */
export async function startCluster(o) {
  const counts = { auth: 3, identity: 2, tree: 2, ...o.counts };
  const startReplica = o.startReplica ?? startProcessReplica;
  const runEntry = o.runEntry ?? runProcessEntry;
  const log = o.log ?? (() => undefined);
  const work = mkdtempSync(path.join(os.tmpdir(), 'gh-replicas-'));
  chmodSync(work, 0o711);
  const adminUrl = o.adminUrl ?? (process.env.TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  const dbName = `gh_replicas_${randomBytes(5).toString('hex')}`;
  {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(`CREATE DATABASE ${dbName}`);
    await c.end();
  }
  const dbUrl = withDb(adminUrl, dbName);
  /** @type {Replica[]} */
  const all = [];
  let proxy;
  const close = async () => {
    await Promise.all(all.map((r) => r.stop()));
    await proxy?.stop();
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
    await c.end();
    if (!process.env.REPLICAS_KEEP_LOGS) rmSync(work, { recursive: true, force: true });
  };

  try {
    const services = /** @type {Service[]} */ (['auth', 'identity', 'tree']);
    const front = Object.fromEntries(await Promise.all(services.map(async (s) => [s, await freePort()])));
    const urls = /** @type {Record<Service, string>} */ (
      Object.fromEntries(services.map((s) => [s, `http://127.0.0.1:${front[s]}`]))
    );
    const client = { id: randomUUID(), secret: randomBytes(24).toString('base64url') };
    const admin = { email: 'admin@replicas.test', password: `Rep-${randomBytes(9).toString('hex')}!` };
    // What every replica of every service shares; what a container would get from the deployment's secrets.
    const shared = {
      DATABASE_URL: dbUrl,
      TREE_DATABASE_URL: dbUrl,
      // One key for client secrets and signing keys at rest: a replica with its own generated key could not read
      // what another sealed.
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      // One issuer, the proxy's address, whichever replica signs; identity and tree reach the token server
      // through the proxy too.
      ISSUER: urls.auth,
      AUTH_URL: urls.auth,
      TRUST_PROXY: 'loopback',
      REDIS_URL: o.redisUrl ?? '',
      BOOTSTRAP_CLIENT_ID: client.id,
      BOOTSTRAP_CLIENT_SECRET: client.secret,
      BOOTSTRAP_ADMIN_EMAIL: admin.email,
      BOOTSTRAP_ADMIN_PASSWORD: admin.password,
      LOG_LEVEL: 'warn',
      DB_POOL_MAX: '5',
      ...o.env,
    };
    /** @type {Record<Service, Replica[]>} */
    const replicas = { auth: [], identity: [], tree: [] };
    const starts = [];
    for (const service of services) {
      for (let i = 1; i <= counts[service]; i++) {
        const name = `${service}-${i}`;
        // Each replica has a DATA_DIR of its own, as a container has: nothing may be shared through it.
        const dataDir = path.join(work, name);
        mkdirSync(dataDir);
        starts.push(
          freePort().then(async (port) => {
            const r = await startReplica({
              service,
              name,
              port,
              dir: work,
              env: { ...shared, DATA_DIR: dataDir, ...o.replicaEnv?.[name] },
            });
            all.push(r);
            replicas[service].push(r);
            return r;
          }),
        );
      }
    }
    const started = await Promise.all(starts);
    log(`started ${started.map((r) => r.name).join(', ')}`);
    const answers = await Promise.all(started.map((r) => ready(r.url, r.exited, 120_000)));
    const notReady = started.filter((_, i) => !answers[i]);
    if (notReady.length)
      throw new Error(
        `not ready: ${notReady.map((r) => `${r.name}\n${r.log().slice(-3000)}`).join('\n---\n')}`,
      );
    for (const s of services) replicas[s].sort((a, b) => a.name.localeCompare(b.name));

    const config = renderHaproxyConfig({
      pins: true,
      frontends: services.map((s) => ({
        service: s,
        bind: `127.0.0.1:${front[s]}`,
        servers: replicas[s].map((r) => ({ name: r.name, host: '127.0.0.1', port: r.port })),
      })),
    });
    proxy = await startHaproxy({ bin: o.haproxyBin, dir: work, config });
    // Every server passed its first health check (rise 1) before the test sends anything.
    for (const s of services) {
      for (const r of replicas[s]) {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const res = await fetch(`${urls[s]}/readyz`, { headers: { [PIN_HEADER]: r.name } }).catch(
            () => null,
          );
          await res?.arrayBuffer();
          if (res?.headers.get(SERVED_BY_HEADER) === r.name) break;
          if (Date.now() > deadline) throw new Error(`HAProxy does not route to ${r.name}:\n${proxy.log()}`);
          await new Promise((x) => setTimeout(x, 100));
        }
      }
    }

    /** @type {Cluster['fetch']} */
    const clusterFetch = (service, p, init = {}) => {
      const { replica, ...rest } = init;
      // Plain header objects only (every caller here): the pin is added beside them.
      const headers = { .../** @type {Record<string, string>} */ (rest.headers ?? {}) };
      if (replica) headers[PIN_HEADER] = replica;
      return fetch(`${urls[service]}${p}`, { ...rest, headers });
    };
    const token = async (audience, t = {}) => {
      const id = t.id ?? client.id;
      const secret = t.secret ?? client.secret;
      const res = await clusterFetch('auth', '/token', {
        method: 'POST',
        replica: t.replica,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', audience }),
      });
      const json = /** @type {any} */ (await res.json());
      if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(json)}`);
      return json.access_token;
    };
    return {
      urls,
      replicas,
      dbUrl,
      client,
      admin,
      fetch: clusterFetch,
      token,
      // It only touches the database (the signing keys, sealed with SECRET_ENCRYPTION_KEY), yet it runs where the
      // replicas run (a container of the same image when they are containers), as an operator would run it.
      rotateKeys: async () => {
        await runEntry({
          service: 'auth',
          entry: 'rotate-keys',
          env: { ...shared, DATA_DIR: path.join(work, 'rotate-keys') },
        });
      },
      haproxyLog: () => proxy?.log() ?? '',
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
