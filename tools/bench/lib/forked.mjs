// Benchmarks of one lib's cost per request (libs/*/bench): a small server forked per variant and round, pinned to
// one core, and autocannon in the benchmark's own process. Both sides of that protocol are here: the parent forks
// (forkServer) and stops (stopServer) the server, which announces its port and waits for 'stop' (serveForParent).
import { execFileSync, fork } from 'node:child_process';
import autocannon from 'autocannon';
import { medianBy } from './stats.mjs';

/**
 * The settings every such benchmark reads: BENCH_DURATION (s, default 5), BENCH_CONNECTIONS (default 20),
 * BENCH_ROUNDS (default 3) and BENCH_SERVER_CPUS (taskset list, default 0; '' unpinned); and its variants, the
 * command line's arguments (none: `usage` printed, exit 1).
 * @param {string} usage
 */
export function forkedBenchSettings(usage, env = process.env) {
  const variants = process.argv.slice(2);
  if (variants.length === 0) {
    console.error(`usage: ${usage}`);
    process.exit(1);
  }
  return {
    duration: Number(env.BENCH_DURATION || 5),
    connections: Number(env.BENCH_CONNECTIONS || 20),
    rounds: Number(env.BENCH_ROUNDS || 3),
    cpus: env.BENCH_SERVER_CPUS ?? '0',
    variants,
  };
}

/**
 * The median of one figure over the rounds: the middle round's (the upper middle one of an even count).
 * @param {number[]} xs
 */
export const medianOfRounds = (xs) => medianBy(xs, (x) => x);

/**
 * The server `script` forked with `childEnv` over this process's environment; resolves once it has sent its port
 * (serveForParent). Pinned to the CPU list `cpus` with taskset (none: '', or taskset missing: unpinned).
 * @param {string | URL} script
 * @param {Record<string, string>} childEnv
 * @param {string} cpus
 * @returns {Promise<{ child: import('node:child_process').ChildProcess; port: number }>}
 */
export function forkServer(script, childEnv, cpus) {
  return new Promise((resolve, reject) => {
    const child = fork(script, [], {
      env: { ...process.env, ...childEnv },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    if (cpus !== '') {
      try {
        execFileSync('taskset', ['-pc', cpus, String(child.pid)], { stdio: 'ignore' });
      } catch {
        /* no taskset: unpinned */
      }
    }
    child.once('message', (/** @type {any} */ m) => resolve({ child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

/**
 * Stops a server of forkServer and waits for its exit.
 * @param {import('node:child_process').ChildProcess} child
 */
export async function stopServer(child) {
  child.removeAllListeners('exit');
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
}

/**
 * In a server of forkServer, once `server` listens: sends the parent its port; on 'stop' runs `close` (if any)
 * and exits; exits at SIGTERM.
 * @param {import('node:net').Server} server
 * @param {() => Promise<unknown>} [close]
 */
export function serveForParent(server, close) {
  process.send?.({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port });
  process.on('message', async (m) => {
    if (m === 'stop') {
      await close?.();
      process.exit(0);
    }
  });
  process.on('SIGTERM', () => process.exit(0));
}

/**
 * One autocannon run of `opts` for `duration` seconds after a one-second warm-up (which also fills the server's
 * caches): requests per second, p50 and p99 latency (ms), and the answers that were not 2xx or failed.
 * @param {import('autocannon').Options} opts
 * @param {number} duration
 */
export async function measureWarm(opts, duration) {
  await autocannon({ ...opts, duration: 1 });
  const r = await autocannon({ ...opts, duration });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}
