import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commonEnv, loadEnv } from '@gatehouse/config';
import { listen } from '@gatehouse/http';
import { buildService, type BuiltService } from '@gatehouse/service';
import { getFreePort } from '@gatehouse/testing';
// The real token server, booted in-process exactly as its main.ts does: the bearer lib is tested against it.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { authEnv } from '../../auth/src/config.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { authService } from '../../auth/src/auth.service-definition.js';

export interface RealTokenServer {
  url: string;
  clientId: string;
  clientSecret: string;
  /** The variables identity must share with it (database, encryption key, bootstrap values). */
  shared: Record<string, string>;
  /** The running token server application (its database pool, its TokenServer). */
  built: BuiltService<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** What the token server and identity share: the database, DATA_DIR, the secret box key, the bootstrap client. */
function sharedVars(databaseUrl: string, dataDir: string) {
  return {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    BOOTSTRAP_CLIENT_ID: randomUUID(),
    BOOTSTRAP_CLIENT_SECRET: `bearer-test-${randomBytes(12).toString('hex')}`,
    BOOTSTRAP_ADMIN_PASSWORD: `pw-${randomBytes(8).toString('hex')}`,
  };
}

/** apps/auth on `databaseUrl`, listening on a free port (issuer = its URL). */
export async function startTokenServer(
  databaseUrl: string,
  dataDir: string,
  /** More variables of the token server only (e.g. REDIS_URL). */
  extra: Record<string, string> = {},
): Promise<RealTokenServer> {
  const port = await getFreePort();
  const url = `http://127.0.0.1:${port}`;
  const shared = sharedVars(databaseUrl, dataDir);
  const env = loadEnv(
    { ...commonEnv, ...authEnv },
    {
      LOG_LEVEL: 'silent',
      RATE_LIMIT_POINTS: '100000',
      AUTH_PORT: String(port),
      ISSUER: url,
      // local identity providers of the tests (http on this machine): the allow-list of outbound fetches admits them
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      ...shared,
      ...extra,
    },
  );
  const built = (await buildService(authService, env)) as BuiltService<typeof env>;
  await listen(built.app, port, '127.0.0.1');
  let stopped = false;
  return {
    url,
    clientId: shared.BOOTSTRAP_CLIENT_ID,
    clientSecret: shared.BOOTSTRAP_CLIENT_SECRET,
    shared,
    built: built as unknown as BuiltService<Record<string, unknown>>,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await built.close();
    },
  };
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * apps/auth in its own OS process, as deployed: compiled from the current sources with swc (as the `build` target
 * does, into a directory of its own under tmp/, about a second) and started with node. `built` is not available
 * (another process); `pid` and `log()` are.
 */
export async function spawnTokenServer(
  databaseUrl: string,
  dataDir: string,
  extra: Record<string, string> = {},
): Promise<RealTokenServer & { pid: number; log(): string }> {
  const out = path.join(ROOT, 'tmp', `auth-e2e-${process.pid}-${randomBytes(4).toString('hex')}`);
  execFileSync(
    path.join(ROOT, 'node_modules/.bin/swc'),
    [
      'apps/auth/src',
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
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const port = await getFreePort();
  const url = `http://127.0.0.1:${port}`;
  const shared = sharedVars(databaseUrl, dataDir);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_POINTS: '100000',
    REDIS_URL: '',
    AUTH_PORT: String(port),
    ISSUER: url,
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    ...shared,
    ...extra,
  };
  const child = spawn(process.execPath, [path.join(out, 'apps/auth/src/main.js')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(out, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the token server process exited (${child.exitCode}):\n${log}`);
    }
    const up = await fetch(`${url}/livez`, { signal: AbortSignal.timeout(1000) })
      .then(async (r) => (await r.arrayBuffer(), r.status === 200))
      .catch(() => false);
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the token server process did not start within 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    clientId: shared.BOOTSTRAP_CLIENT_ID,
    clientSecret: shared.BOOTSTRAP_CLIENT_SECRET,
    shared,
    get built(): BuiltService<Record<string, unknown>> {
      throw new Error('the token server runs in another process');
    },
    pid: child.pid!,
    log: () => log,
    stop,
  };
}

/** A real HTTP proxy in front of the token server that counts the /tokeninfo calls passing through it. */
export class CountingProxy {
  tokeninfoCalls = 0;
  private server?: Server;

  constructor(private readonly target: string) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      if (req.url?.startsWith('/tokeninfo')) this.tokeninfoCalls++;
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      // Token server down: drop the client connection, as an unreachable server would look.
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
