import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import { commonEnv, loadEnv } from '@gatehouse/config';
import { migrateDatabase } from '@gatehouse/db';
import { listen } from '@gatehouse/http';
import { buildService, type BuiltService } from '@gatehouse/service';
import { createTestDatabase, getFreePort, type TestDatabase } from '@gatehouse/testing';
// Instances are seeded into the token server's database as POST /instances seeds them. Tests only.
import { SECRET_BOX, seedInstance, type SecretBox } from '@gatehouse/identity-data';
// The real token server (apps/auth), booted in-process exactly as its main.ts does. Tests only.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { authEnv } from '../../../auth/src/config.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { authEntities } from '../../../auth/src/entities.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { authMigrations } from '../../../auth/src/migrations/index.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { authService } from '../../../auth/src/auth.service-definition.js';

export interface TokenServer {
  url: string;
  /** The token server's (identity) database, where the identity change feed is announced. */
  databaseUrl: string;
  clientId: string;
  clientSecret: string;
  /** A client_credentials access token of the bootstrap client (which holds every scope) for `audience`. */
  token(audience: string, scope?: string): Promise<string>;
  /**
   * A new instance (multi-instance mode), seeded as POST /instances seeds it: its own system resources and a default
   * client holding every scope of them; `token` mints that client's client_credentials tokens.
   */
  newInstance(): Promise<InstanceClient>;
  stop(): Promise<void>;
}

export interface InstanceClient {
  instanceId: string;
  clientId: string;
  token(audience: string, scope?: string): Promise<string>;
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

/** apps/auth on its own test database, listening on a free port; the bootstrap client comes from BOOTSTRAP_*. */
export async function startTokenServer(): Promise<TokenServer> {
  const db: TestDatabase = await createTestDatabase({
    template: 'tree_auth',
    migrate: async (url) => {
      await migrateDatabase({ url, entities: authEntities, migrations: authMigrations });
    },
  });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gh-tree-auth-'));
  const port = await getFreePort();
  const url = `http://127.0.0.1:${port}`;
  const clientId = randomUUID();
  const clientSecret = `tree-test-${randomBytes(12).toString('hex')}`;
  const env = loadEnv(
    { ...commonEnv, ...authEnv },
    {
      LOG_LEVEL: 'silent',
      RATE_LIMIT_POINTS: '100000',
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      AUTH_PORT: String(port),
      ISSUER: url,
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      BOOTSTRAP_CLIENT_ID: clientId,
      BOOTSTRAP_CLIENT_SECRET: clientSecret,
      BOOTSTRAP_ADMIN_PASSWORD: `pw-${randomBytes(8).toString('hex')}`,
    },
  );
  const built = (await buildService(authService, env)) as BuiltService<typeof env>;
  await listen(built.app, port, '127.0.0.1');
  let stopped = false;
  return {
    url,
    databaseUrl: db.url,
    clientId,
    clientSecret,
    token: tokenMinter(url, clientId, clientSecret),
    async newInstance() {
      const box = built.app.get<SecretBox>(SECRET_BOX);
      const seeded = await built.db.transaction((tx) =>
        seedInstance(tx, { name: `tree-test-${randomUUID()}` }, box),
      );
      return {
        instanceId: seeded.instanceId,
        clientId: seeded.clientId,
        token: tokenMinter(url, seeded.clientId, seeded.clientSecret),
      };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await built.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A plain HTTP proxy to the token server that can be switched off (the token server then looks unreachable). */
export class SwitchableProxy {
  private server?: Server;
  up = true;

  constructor(private readonly target: string) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      if (!this.up) {
        res.destroy();
        return;
      }
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
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

/** A TCP proxy (e.g. in front of PostgreSQL) that can be cut: open connections dropped, new ones refused. */
export class TcpProxy {
  private server?: import('node:net').Server;
  private readonly sockets = new Set<import('node:net').Socket>();

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  get listenPort(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  async start(): Promise<this> {
    const net = await import('node:net');
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.port, this.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** Drop every connection and stop listening: the server now looks unreachable. */
  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
