import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import { commonEnv, loadEnv } from '@gatehouse/config';
import { migrateDatabase } from '@gatehouse/db';
import { listen } from '@gatehouse/http';
// Instances are seeded into the token server's database as POST /instances seeds them. Tests only.
import { SECRET_BOX, seedInstance, type SecretBox } from '@gatehouse/identity-data';
import { buildService, type BuiltService } from '@gatehouse/service';
import { createTestDatabase, getFreePort, REPO_ROOT, scratchDir, swcBuild } from '@gatehouse/testing';
// The real token server, booted in-process exactly as apps/auth's main.ts does.
import { authEntities, authEnv, authMigrations, authService } from '@gatehouse/token-server';

export interface TokenServer {
  url: string;
  /** The token server's database (where the identity change feed is announced). */
  databaseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The variables another service must share with it (database, DATA_DIR, encryption key, bootstrap values). */
  shared: Record<string, string>;
  /** The running token server application (its database pool, its TokenServer); in-process servers only. */
  built: BuiltService<Record<string, unknown>>;
  /** A client_credentials access token of the bootstrap client (which holds every scope) for `audience`. */
  token(audience: string, scope?: string): Promise<string>;
  /**
   * A new instance (multi-instance mode), seeded as POST /instances seeds it: its own system resources and a default
   * client holding every scope of them; `token` mints that client's client_credentials tokens. In-process only.
   */
  newInstance(): Promise<InstanceClient>;
  stop(): Promise<void>;
}

export interface InstanceClient {
  instanceId: string;
  clientId: string;
  token(audience: string, scope?: string): Promise<string>;
}

export interface TokenServerOptions {
  /**
   * The token server's database (e.g. one it shares with identity). Without it the token server gets a migrated test
   * database of its own, dropped by `stop()`.
   */
  databaseUrl?: string;
  /** Its DATA_DIR. Without it, a temporary directory of its own, removed by `stop()`. */
  dataDir?: string;
  /** More variables of the token server only (e.g. REDIS_URL). */
  env?: Record<string, string>;
}

/** client_credentials tokens of one client at the token server `url`. */
function tokenMinter(url: string, clientId: string, clientSecret: string) {
  let config: oidc.Configuration | undefined;
  return async (audience: string, scope?: string): Promise<string> => {
    config ??= await oidc.discovery(new URL(url), clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
      execute: [oidc.allowInsecureRequests],
    });
    const params: Record<string, string> = { resource: audience };
    if (scope !== undefined) params.scope = scope;
    return (await oidc.clientCredentialsGrant(config, params)).access_token;
  };
}

/** What the token server and identity share: the database, DATA_DIR, the secret box key, the bootstrap client. */
function sharedVars(databaseUrl: string, dataDir: string) {
  return {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    BOOTSTRAP_CLIENT_ID: randomUUID(),
    BOOTSTRAP_CLIENT_SECRET: `token-server-test-${randomBytes(12).toString('hex')}`,
    BOOTSTRAP_ADMIN_PASSWORD: `pw-${randomBytes(8).toString('hex')}`,
  };
}

/** The database and DATA_DIR of the options, or ones of its own with what removes them. */
async function storage(opts: TokenServerOptions) {
  const db = opts.databaseUrl
    ? undefined
    : await createTestDatabase({
        template: 'tree_auth',
        migrate: async (url) => {
          await migrateDatabase({ url, entities: authEntities, migrations: authMigrations });
        },
      });
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), 'gh-token-server-'));
  return {
    databaseUrl: opts.databaseUrl ?? db!.url,
    dataDir,
    async remove() {
      await db?.drop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function handle(
  url: string,
  shared: Record<string, string>,
  builtOf: () => BuiltService<Record<string, unknown>>,
  stop: () => Promise<void>,
): TokenServer {
  return {
    url,
    databaseUrl: shared.DATABASE_URL,
    clientId: shared.BOOTSTRAP_CLIENT_ID,
    clientSecret: shared.BOOTSTRAP_CLIENT_SECRET,
    shared,
    get built() {
      return builtOf();
    },
    token: tokenMinter(url, shared.BOOTSTRAP_CLIENT_ID, shared.BOOTSTRAP_CLIENT_SECRET),
    async newInstance() {
      const built = builtOf();
      const box = built.app.get<SecretBox>(SECRET_BOX);
      const seeded = await built.db.transaction((tx) =>
        seedInstance(tx, { name: `token-server-test-${randomUUID()}` }, box),
      );
      return {
        instanceId: seeded.instanceId,
        clientId: seeded.clientId,
        token: tokenMinter(url, seeded.clientId, seeded.clientSecret),
      };
    },
    stop,
  };
}

/** apps/auth in this process, listening on a free port (issuer = its URL); the bootstrap client comes from BOOTSTRAP_*. */
export async function startTokenServer(opts: TokenServerOptions = {}): Promise<TokenServer> {
  const store = await storage(opts);
  const port = await getFreePort();
  const url = `http://127.0.0.1:${port}`;
  const shared = sharedVars(store.databaseUrl, store.dataDir);
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
      ...opts.env,
    },
  );
  const built = (await buildService(authService, env)) as unknown as BuiltService<Record<string, unknown>>;
  await listen(built.app, port, '127.0.0.1');
  let stopped = false;
  return handle(
    url,
    shared,
    () => built,
    async () => {
      if (stopped) return;
      stopped = true;
      await built.close();
      await store.remove();
    },
  );
}

/**
 * apps/auth in its own OS process, as deployed: compiled from the current sources with swc (as the `build` target
 * does, into a directory of its own under tmp/, about a second) and started with node. `built` and `newInstance` are
 * not available (another process); `pid` and `log()` are.
 */
export async function spawnTokenServer(
  opts: TokenServerOptions = {},
): Promise<TokenServer & { pid: number; log(): string }> {
  const out = scratchDir('auth-e2e');
  swcBuild(['apps/auth/src', 'libs'], out);
  const store = await storage(opts);
  const port = await getFreePort();
  const url = `http://127.0.0.1:${port}`;
  const shared = sharedVars(store.databaseUrl, store.dataDir);
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
    ...opts.env,
  };
  const child = spawn(process.execPath, [path.join(out, 'apps/auth/src/main.js')], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(out, { recursive: true, force: true });
    await store.remove();
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
  const server = handle(
    url,
    shared,
    () => {
      throw new Error('the token server runs in another process');
    },
    stop,
  );
  return Object.assign(server, { pid: child.pid!, log: () => log });
}
