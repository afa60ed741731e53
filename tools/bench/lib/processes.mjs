// Server processes for the benchmarks: start a Node program (optionally pinned to CPUs with taskset), wait until
// `ready()` answers, and stop every started process at the end.
import { spawn } from 'node:child_process';

export function processGroup({ cwd, env, killAfterMs = 5000 }) {
  const children = [];

  /** argv: node arguments (flags, then the script and its arguments); cpus: a taskset CPU list, or undefined. */
  function start(name, argv, { childEnv = {}, ready, cpus, timeoutMs = 60_000 }) {
    const cmd = cpus ? 'taskset' : process.execPath;
    const args = cpus ? ['-c', cpus, process.execPath, ...argv] : argv;
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
            if (c.exitCode !== null) return resolve();
            c.once('exit', resolve);
            c.kill('SIGTERM');
            setTimeout(() => c.kill('SIGKILL'), killAfterMs).unref();
          }),
      ),
    );
  }

  return { start, stopAll };
}
