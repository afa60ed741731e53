import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { commonEnv, loadEnv } from '@gatehouse/config';
import { migrateDatabase } from '@gatehouse/db';
import { listen } from '@gatehouse/http';
import { buildService, type BuiltService } from '@gatehouse/service';
import { createTestDatabase, getFreePort, type TestDatabase } from '@gatehouse/testing';
import { authEnv } from '../../src/config.js';
import { authEntities } from '../../src/entities.js';
import { authMigrations } from '../../src/migrations/index.js';
import { authService } from '../../src/auth.service-definition.js';
import { TokenServer } from '../../src/token-server.js';

export type AuthEnv = ReturnType<typeof loadAuthEnv>;

export function authTestDatabase(): Promise<TestDatabase> {
  return createTestDatabase({
    template: 'auth_app',
    migrate: async (url) => {
      await migrateDatabase({ url, entities: authEntities, migrations: authMigrations });
    },
  });
}

export function loadAuthEnv(vars: Record<string, string>) {
  return loadEnv({ ...commonEnv, ...authEnv }, { LOG_LEVEL: 'silent', RATE_LIMIT_POINTS: '100000', ...vars });
}

export interface Bootstrap {
  clientId: string;
  clientSecret: string;
  adminEmail: string;
  adminPassword: string;
}

export interface AuthHarness {
  db: TestDatabase;
  dataDir: string;
  /** Base URL (== issuer) of the listening server. */
  url: string;
  port: number;
  boot: Bootstrap;
  vars: Record<string, string>;
  built: BuiltService<AuthEnv>;
  server: Server;
  tokenServer: TokenServer;
  /** Stop the app only (database and DATA_DIR stay), e.g. to restart it. */
  stop(): Promise<void>;
  /** Start the app again on the same database, DATA_DIR, port and variables. */
  restart(extra?: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

/**
 * apps/auth built exactly as main.ts builds it (migrations, bootstrap, keys, Nest app with oidc-provider mounted),
 * listening on a free port whose URL is the issuer, on this test file's own database.
 */
export async function startAuth(
  extra: Record<string, string> = {},
  /** The issuer's host name (`localhost` for WebAuthn, which takes no IP address as RP ID); it listens on 127.0.0.1. */
  opts: { issuerHost?: string } = {},
): Promise<AuthHarness> {
  const db = await authTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gh-auth-'));
  const port = await getFreePort();
  const url = `http://${opts.issuerHost ?? '127.0.0.1'}:${port}`;
  const boot: Bootstrap = {
    clientId: randomUUID(),
    clientSecret: `test-secret-${randomBytes(12).toString('hex')}`,
    adminEmail: `admin-${randomBytes(3).toString('hex')}@auth.test`,
    adminPassword: `pw-${randomBytes(8).toString('hex')}`,
  };
  const vars: Record<string, string> = {
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    AUTH_PORT: String(port),
    ISSUER: url,
    BOOTSTRAP_CLIENT_ID: boot.clientId,
    BOOTSTRAP_CLIENT_SECRET: boot.clientSecret,
    BOOTSTRAP_ADMIN_EMAIL: boot.adminEmail,
    BOOTSTRAP_ADMIN_PASSWORD: boot.adminPassword,
    // These tests change identity rows with raw SQL (fixtures.ts), which announces nothing on the change feed: the
    // token server reads them afresh at every request. The cache itself is tested where changes go through the
    // identity API (apps/identity/test/token-cache.e2e.spec.ts).
    AUTH_STATE_CACHE_TTL_MS: '0',
    // The local identity providers of the tests listen on this machine over http: the operator allow-list of
    // outbound fetches admits it (a test of the outbound policy sets its own).
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    ...extra,
  };

  const h = { db, dataDir, url, port, boot, vars } as AuthHarness;
  const up = async (more: Record<string, string>) => {
    const env = loadAuthEnv({ ...vars, ...more });
    h.built = (await buildService(authService, env)) as BuiltService<AuthEnv>;
    h.server = await listen(h.built.app, port, '127.0.0.1');
    h.tokenServer = h.built.app.get(TokenServer);
  };
  let running = false;
  h.stop = async () => {
    if (!running) return;
    running = false;
    await h.built.close();
  };
  h.restart = async (more = {}) => {
    await h.stop();
    await up(more);
    running = true;
  };
  h.close = async () => {
    await h.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await up({});
    running = true;
  } catch (err) {
    await db.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return h;
}

export interface AuthReplica {
  /** Base URL of this replica (the issuer stays the first server's). */
  url: string;
  tokenServer: TokenServer;
  close(): Promise<void>;
}

/**
 * Another token server beside `h`, as a replica behind a load balancer: the same database, DATA_DIR and variables
 * (so the same issuer), listening on a port of its own; `close()` stops it only.
 */
export async function startReplica(h: AuthHarness, extra: Record<string, string> = {}): Promise<AuthReplica> {
  const port = await getFreePort();
  const env = loadAuthEnv({ ...h.vars, AUTH_PORT: String(port), ...extra });
  const built = (await buildService(authService, env)) as BuiltService<AuthEnv>;
  await listen(built.app, port, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    tokenServer: built.app.get(TokenServer),
    close: () => built.close(),
  };
}
