import type { Db } from '@gatehouse/db';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import request from 'supertest';
import { MANAGEMENT_AUDIENCE } from '@gatehouse/identity-data';
import { buildService, type BuiltService } from '@gatehouse/service';
import type { TestDatabase } from '@gatehouse/testing';
import { identityService } from '../src/identity.service-definition.js';
import { identityTestDatabase, loadIdentityEnv, type IdentityEnv } from './support.js';
import {
  spawnTokenServer,
  startTokenServer,
  type TokenServer as RealTokenServer,
} from '@gatehouse/token-server-testing';

export type Version = 'v1' | 'v2';
export const VERSIONS: Version[] = ['v1', 'v2'];

/** Names of the envelope fields per presentation. */
export const ENVELOPE = {
  v1: { total: 'total_count', hasMore: 'has_more', aggregations: 'aggregations' },
  v2: { total: 'totalCount', hasMore: 'hasMore', aggregations: 'aggregates' },
} as const;

let seq = 0;
/** A unique name for a test record. */
export const uniq = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++seq}`;

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/**
 * The real identity app (migrations, bootstrap, bearer guard, every module) and the real token server on one test
 * database: tokens come from the token server, the management API validates them at its /tokeninfo.
 */
export class Management {
  adminToken = '';

  private readonly replicas: BuiltService<IdentityEnv>[] = [];

  private constructor(
    readonly db: TestDatabase,
    readonly dataDir: string,
    readonly auth: RealTokenServer,
    readonly identity: BuiltService<IdentityEnv>,
    readonly env: IdentityEnv,
  ) {}

  /**
   * `vars` of the identity service; `authVars` of the token server only (e.g. REDIS_URL); `process`: the token
   * server in its own OS process (spawnTokenServer) instead of this one.
   */
  static async start(
    vars: Record<string, string> = {},
    authVars: Record<string, string> = {},
    opts: { process?: boolean } = {},
  ): Promise<Management> {
    const db = await identityTestDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gh-mgmt-'));
    const auth = opts.process
      ? await spawnTokenServer({ databaseUrl: db.url, dataDir, env: authVars })
      : await startTokenServer({ databaseUrl: db.url, dataDir, env: authVars });
    const env = loadIdentityEnv({
      ...auth.shared,
      AUTH_URL: auth.url,
      // ticket and invitation links point at the token server's public URL
      ISSUER: auth.url,
      RATE_LIMIT_POINTS: '100000',
      // Tests check that a revoked or deleted client's token stops working: no validation cache.
      BEARER_CACHE_TTL_SEC: '0',
      BEARER_NEGATIVE_TTL_SEC: '0',
      // identity providers of the tests run on this machine over http (the token server's harness admits them too)
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      ...vars,
    });
    const identity = (await buildService(identityService, env)) as BuiltService<IdentityEnv>;
    const m = new Management(db, dataDir, auth, identity, env);
    m.adminToken = await m.token(auth.clientId, auth.clientSecret);
    return m;
  }

  get ds(): Db {
    return this.identity.db;
  }

  get server() {
    return this.identity.app.getHttpServer();
  }

  /** A request to the management API, with the default client's token unless another (or none: '') is given. */
  call(method: Method, url: string, token: string = this.adminToken) {
    const r = request(this.server)[method](url);
    return token ? r.set('Authorization', `Bearer ${token}`) : r;
  }

  /** An openid-client configuration for a client of the token server. */
  async oidcConfig(clientId: string, secret: string, extra: oidc.ClientAuth | undefined = undefined) {
    return oidc.discovery(
      new URL(this.auth.url),
      clientId,
      undefined,
      extra ?? oidc.ClientSecretBasic(secret),
      { execute: [oidc.allowInsecureRequests] },
    );
  }

  /** A client_credentials access token for `audience` (default: the management API). */
  async token(
    clientId: string,
    secret: string,
    audience = MANAGEMENT_AUDIENCE,
    scope?: string,
  ): Promise<string> {
    const config = await this.oidcConfig(clientId, secret);
    const t = await oidc.clientCredentialsGrant(config, { resource: audience, ...(scope ? { scope } : {}) });
    return t.access_token;
  }

  /**
   * POST /tokeninfo of the token server, as a resource server asks: the token as its own Bearer credential (a caller
   * sees another client's token only as a resource server of its audience), or with the Basic credentials `as`.
   */
  async tokenInfo(token: string, as?: { id: string; secret: string }): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.auth.url}/tokeninfo`, {
      method: 'POST',
      headers: {
        authorization: as
          ? `Basic ${Buffer.from(`${as.id}:${as.secret}`).toString('base64')}`
          : `Bearer ${token}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token }).toString(),
    });
    return (await res.json()) as Record<string, unknown>;
  }

  /** Id of the management API resource and of its scopes by name. */
  async managementResource(): Promise<{ id: string; scopes: Record<string, string> }> {
    const [r] = await this.ds.rows<{ id: string }>(`SELECT id FROM resources WHERE identifier_url = $1`, [
      MANAGEMENT_AUDIENCE,
    ]);
    const scopes = await this.ds.rows<{ id: string; scope_name: string }>(
      `SELECT id, scope_name FROM scopes WHERE resource_id = $1`,
      [r.id],
    );
    return { id: r.id, scopes: Object.fromEntries(scopes.map((s) => [s.scope_name, s.id])) };
  }

  /** A tenant of the default instance (the Tenants API is not part of this suite). */
  async tenant(name = uniq('tenant')): Promise<string> {
    const [t] = await this.ds.rows<{ id: string }>(
      `INSERT INTO tenants (instance_id, name) SELECT id, $1 FROM instances WHERE is_default RETURNING id`,
      [name],
    );
    return t.id;
  }

  /**
   * A new management caller made through the API itself: a client (optionally of a tenant and not global),
   * authorized on the management API with exactly `scopes`, and its access token.
   */
  async caller(
    scopes: string[],
    opts: { tenantId?: string; isGlobal?: boolean } = {},
  ): Promise<{ id: string; secret: string; token: string }> {
    const created = await this.call('post', '/api/v1/clients')
      .send({
        client_name: uniq('caller'),
        ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
        ...(opts.isGlobal !== undefined ? { is_global: opts.isGlobal } : {}),
      })
      .expect(201);
    const { id, client_secret: secret } = created.body as { id: string; client_secret: string };
    const mgmt = await this.managementResource();
    await this.call('post', `/api/v1/clients/${id}/resources`)
      .send({ resources: [mgmt.id] })
      .expect(204);
    if (scopes.length) {
      await this.call('post', `/api/v1/clients/${id}/permissions`)
        .send({ permissions: [{ resource_id: mgmt.id, scopes: scopes.map((s) => mgmt.scopes[s]) }] })
        .expect(204);
    }
    return { id, secret, token: await this.token(id, secret) };
  }

  /** Another replica of the identity service on the same database and token server (closed with this one). */
  async replica(): Promise<BuiltService<IdentityEnv>> {
    const r = (await buildService(identityService, this.env)) as BuiltService<IdentityEnv>;
    this.replicas.push(r);
    return r;
  }

  async close(): Promise<void> {
    for (const r of this.replicas) await r.close();
    await this.identity?.close();
    await this.auth?.stop();
    await this.db?.drop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

export const missingId = () => randomUUID();
