// Server processes for the benchmarks: start a Node program with the services' shipped Node flags (optionally
// pinned to CPUs with taskset), wait until
// `ready()` answers, and stop every started process at the end; and the small helpers every benchmark needs.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { SERVICE_NODE_FLAGS } from '../../launcher/node-flags.mjs';

export function processGroup({ cwd, env, killAfterMs = 5000 }) {
  const children = [];

  /**
   * argv: node arguments (flags, then the script and its arguments); cpus: a taskset CPU list, or undefined.
   * @param {string} name
   * @param {string[]} argv
   * @param {{ childEnv?: Record<string, string | undefined>; ready: () => Promise<boolean>; cpus?: string; timeoutMs?: number }} opts
   */
  function start(name, argv, { childEnv = {}, ready, cpus, timeoutMs = 60_000 }) {
    // Every Node program runs with the services' shipped flags (the bare baselines too: like for like).
    const node = [...SERVICE_NODE_FLAGS, ...argv];
    const cmd = cpus ? 'taskset' : process.execPath;
    const args = cpus ? ['-c', cpus, process.execPath, ...node] : node;
    const child = spawn(cmd, args, { cwd, env: { ...env, ...childEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let log = '';
    // keep the last 20,000 characters of output for the error message
    child.stdout.on('data', (d) => (log = (log + d).slice(-20000)));
    child.stderr.on('data', (d) => (log = (log + d).slice(-20000)));
    return new Promise((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const poll = async () => {
        if (child.exitCode !== null) return reject(new Error(`${name} exited:\n${log}`));
        if (await ready().catch(() => false)) return resolve(child);
        if (Date.now() > deadline) return reject(new Error(`${name} did not start:\n${log}`));
        setTimeout(poll, 200);
      };
      poll();
    });
  }

  async function stopAll() {
    await Promise.all(
      children.map(
        (c) =>
          new Promise((resolve) => {
            if (c.exitCode !== null) return resolve(undefined);
            c.once('exit', resolve);
            c.kill('SIGTERM');
            setTimeout(() => c.kill('SIGKILL'), killAfterMs).unref();
          }),
      ),
    );
  }

  return { start, stopAll };
}

/** True when `taskset` runs here (util-linux), so servers can be pinned to CPUs. */
export function tasksetAvailable() {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Pins processes (all their threads) to the CPU list `cpus`: the load side of a benchmark (the script with its
 * autocannon, PostgreSQL's backends, helper services), so the measured service has its core to itself. Nothing
 * when `cpus` is empty or taskset is missing; a process that may not be moved stays where the scheduler puts it.
 * @param {number[]} pids
 * @param {string} cpus
 */
export function pinProcesses(pids, cpus) {
  if (!cpus || !tasksetAvailable()) return;
  for (const pid of pids) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    } catch {
      // not allowed (another user's process): left where the scheduler puts it
    }
  }
}

/**
 * The PostgreSQL server processes connected to the databases `dbs` (the services' pooled connections), seen from
 * the `admin` client (whose own backend is left out).
 * @param {{ query: (sql: string, params: unknown[]) => Promise<{ rows: { pid: number }[] }> }} admin
 * @param {string[]} dbs
 */
export async function backendPids(admin, dbs) {
  const { rows } = await admin.query(
    `SELECT pid FROM pg_stat_activity WHERE datname = ANY($1::text[]) AND pid <> pg_backend_pid()`,
    [dbs],
  );
  return rows.map((r) => r.pid);
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/** `url` with its database name replaced by `db`. */
export function withDb(url, db) {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** CPU time (user + system) a process has used so far, in ms; undefined where /proc is missing or it has gone. */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in MiB (VmRSS of /proc/<pid>/status); undefined where /proc is missing. */
export function rssMiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** The figures every benchmark reports of one autocannon run. */
export function autocannonSummary(name, result) {
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
  };
}
