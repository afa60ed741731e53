// HAProxy in front of the replicas: the configuration (one frontend and one backend per service, the shape of
// deploy/haproxy/haproxy.cfg) and the proxy itself as a child process of the test, not a system service.
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** The header a test sends to pin a request to one replica (only in a config rendered with `pins: true`). */
export const PIN_HEADER = 'x-gatehouse-replica';
/** The header HAProxy adds to every answer: the name of the replica that answered. */
export const SERVED_BY_HEADER = 'x-served-by';

/**
 * @typedef {{ name: string; host: string; port: number }} Server
 * @typedef {{ service: string; bind: string; servers: Server[] }} Frontend
 */

/**
 * haproxy.cfg for `frontends`. Every service gets round robin over its replicas, a health check on /readyz (a replica
 * that is starting, draining or has lost its database gets no new request) and one retry on another replica when a
 * connection fails (a replica killed a moment ago). `pins` adds the test's rule: a request carrying PIN_HEADER goes
 * to the replica it names (HAProxy's `use-server`), so one browser flow can be walked across replicas on purpose.
 * @param {{ frontends: Frontend[]; pins?: boolean }} o
 */
export function renderHaproxyConfig({ frontends, pins = false }) {
  const lines = [
    '# Gatehouse behind HAProxy 2.6: every replica of a service is interchangeable (docs/deployment.md,',
    '# "Many replicas behind a load balancer"). tools/replicas renders the same shape for its end-to-end test.',
    'global',
    '  maxconn 4096',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout http-keep-alive 4s',
    // A request whose connection failed (a replica just killed, before its health check noticed) is sent to
    // another replica: the dead one never saw it. A read that the dying replica dropped unanswered is sent again
    // too; a write is not (disable-l7-retry below): it may have committed, and a second one (a user created
    // twice, a one-time code used twice) would be worse than the 502.
    '  retries 2',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    // The services read the client address from X-Forwarded-For (TRUST_PROXY names this proxy): rate limits and
    // failure budgets count the person, not the proxy.
    '  option forwardfor',
    '  default-server inter 1s fall 2 rise 1',
    '',
  ];
  for (const f of frontends) {
    lines.push(
      `frontend ${f.service}`,
      `  bind ${f.bind}`,
      '  http-request disable-l7-retry unless METH_GET || METH_HEAD || METH_OPTIONS',
      `  default_backend ${f.service}`,
      '',
    );
    lines.push(
      `backend ${f.service}`,
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      `  http-response set-header X-Served-By %[srv_name]`,
    );
    if (pins) {
      for (const s of f.servers)
        lines.push(`  use-server ${s.name} if { req.hdr(${PIN_HEADER}) -m str ${s.name} }`);
    }
    for (const s of f.servers) lines.push(`  server ${s.name} ${s.host}:${s.port} check`);
    lines.push('');
  }
  return lines.join('\n');
}

/** The haproxy binary, or undefined. As root where apt-get exists, installs Debian's package first (CI). */
export function findHaproxy({ install = true } = {}) {
  const which = () => {
    for (const p of ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy']) {
      try {
        execFileSync(p, ['-v'], { stdio: 'ignore' });
        return p;
      } catch {
        /* next */
      }
    }
    return undefined;
  };
  const bin = which();
  if (bin || !install || process.getuid?.() !== 0) return bin;
  const apt = (args) => {
    try {
      execFileSync('apt-get', args, { stdio: 'ignore', timeout: 240_000 });
      return true;
    } catch {
      return false;
    }
  };
  const pkg = ['install', '-y', '--no-install-recommends', 'haproxy'];
  // The package lists may be missing or stale on a fresh machine: update once, then try again.
  if (!apt(pkg)) apt(['update']) && apt(pkg);
  return which();
}

/**
 * Starts haproxy in the foreground (-db) with `config` written into `dir`. Resolves once the config is accepted and
 * the process runs; `stop()` ends it.
 * @param {{ bin: string; dir: string; config: string }} o
 */
export async function startHaproxy({ bin, dir, config }) {
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  execFileSync(bin, ['-c', '-q', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  const child = spawn(bin, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log = (log + d).slice(-20000)));
  child.stderr.on('data', (d) => (log = (log + d).slice(-20000)));
  await new Promise((resolve, reject) => {
    const t = setTimeout(resolve, 300);
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`haproxy exited (${code}):\n${log}`));
    });
  });
  return {
    child,
    log: () => log,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
        child.once('exit', resolve);
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}
