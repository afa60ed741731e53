import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Controller, Get, Module, type DynamicModule } from '@nestjs/common';
import * as oidc from 'openid-client';
import request from 'supertest';
import { Caller, Scopes, TokenValidator, type CallerInfo } from '@gatehouse/bearer';
import { MANAGEMENT_AUDIENCE, TREE_AUDIENCE } from '@gatehouse/identity-data';
import { buildService, type BuiltService } from '@gatehouse/service';
import type { TestDatabase } from '@gatehouse/testing';
import { IdentityAppModule } from '../src/app.module.js';
import { identityService } from '../src/identity.service-definition.js';
import { identityTestDatabase, loadIdentityEnv, type IdentityEnv } from './support.js';
import {
  CountingProxy,
  startTokenServer,
  type TokenServer as RealTokenServer,
} from '@gatehouse/token-server-testing';

/** A probe route inside the real identity app, guarded like every /api route will be. */
@Controller('api/v1/bearer-probe')
class ProbeController {
  @Get()
  @Scopes('clients:read')
  read(@Caller() caller: CallerInfo) {
    return caller;
  }

  @Get('instances')
  @Scopes('instances:write', 'clients:read')
  write() {
    return { ok: true };
  }
}

describe('identity API behind the bearer guard, with the real token server', () => {
  let db: TestDatabase;
  let dataDir: string;
  let auth: RealTokenServer;
  let proxy: CountingProxy;
  let identity: BuiltService<IdentityEnv>;
  let http: ReturnType<BuiltService<IdentityEnv>['app']['getHttpServer']>;

  const token = async (audience: string) => {
    const config = await oidc.discovery(
      new URL(auth.url),
      auth.clientId,
      undefined,
      oidc.ClientSecretBasic(auth.clientSecret),
      { execute: [oidc.allowInsecureRequests] },
    );
    return (await oidc.clientCredentialsGrant(config, { resource: audience })).access_token;
  };
  const get = (path: string, accessToken?: string) => {
    const r = request(http).get(path);
    return accessToken ? r.set('Authorization', `Bearer ${accessToken}`) : r;
  };

  beforeAll(async () => {
    db = await identityTestDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-bearer-'));
    auth = await startTokenServer({ databaseUrl: db.url, dataDir });
    proxy = await new CountingProxy(auth.url).start();
    const env = loadIdentityEnv({ ...auth.shared, AUTH_URL: proxy.url, BEARER_TIMEOUT_MS: '1000' });
    identity = (await buildService(
      {
        ...identityService,
        rootModule: (ctx): DynamicModule => {
          @Module({ imports: [IdentityAppModule.register(ctx)], controllers: [ProbeController] })
          class ProbeAppModule {}
          return { module: ProbeAppModule };
        },
      },
      env,
    )) as BuiltService<IdentityEnv>;
    http = identity.app.getHttpServer();
  });
  afterAll(async () => {
    await identity?.close();
    await proxy?.stop();
    await auth?.stop();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('401 with WWW-Authenticate: Bearer without a token or with a garbage one; public probes stay open', async () => {
    const none = await get('/api/v1/bearer-probe').expect(401);
    expect(none.body.code).toBe('unauthorized');
    expect(none.headers['www-authenticate']).toMatch(/^Bearer realm=/);
    const garbage = await get('/api/v1/bearer-probe', 'not-a-real-token').expect(401);
    expect(garbage.headers['www-authenticate']).toContain('error="invalid_token"');
    await get('/livez').expect(200);
    await get('/readyz').expect(200);
  });

  it('a management token passes with its caller; the second request is served from the cache', async () => {
    const mgmt = await token(MANAGEMENT_AUDIENCE);
    const before = proxy.tokeninfoCalls;
    const first = await get('/api/v1/bearer-probe', mgmt).expect(200);
    expect(first.body).toMatchObject({
      clientId: auth.clientId,
      sub: auth.clientId,
      audience: [MANAGEMENT_AUDIENCE],
    });
    expect(first.body.scopes).toEqual(expect.arrayContaining(['clients:read', 'instances:write']));
    expect(proxy.tokeninfoCalls).toBe(before + 1);

    await get('/api/v1/bearer-probe', mgmt).expect(200);
    await get('/api/v1/bearer-probe/instances', mgmt).expect(200, { ok: true });
    expect(proxy.tokeninfoCalls).toBe(before + 1); // no second call
    expect(identity.app.get(TokenValidator).stats.hits).toBeGreaterThanOrEqual(2);
  });

  it('concurrent first requests with one token make one /tokeninfo call', async () => {
    const mgmt = await token(MANAGEMENT_AUDIENCE);
    const before = proxy.tokeninfoCalls;
    const all = await Promise.all(Array.from({ length: 10 }, () => get('/api/v1/bearer-probe', mgmt)));
    expect(all.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(proxy.tokeninfoCalls).toBe(before + 1);
  });

  it('403 forbidden for a token of another audience', async () => {
    const tree = await token(TREE_AUDIENCE);
    const res = await get('/api/v1/bearer-probe', tree).expect(403);
    expect(res.body).toEqual({ code: 'forbidden', message: expect.stringContaining(MANAGEMENT_AUDIENCE) });
  });

  it('token server stopped: 503 for a token not cached, still 200 for a cached one', async () => {
    const cached = await token(MANAGEMENT_AUDIENCE);
    const unseen = await token(MANAGEMENT_AUDIENCE);
    await get('/api/v1/bearer-probe', cached).expect(200);

    await auth.stop();
    const down = await get('/api/v1/bearer-probe', unseen).expect(503);
    expect(down.body).toEqual({
      code: 'service_unavailable',
      message: expect.stringContaining('token server'),
    });
    await get('/api/v1/bearer-probe', cached).expect(200);
    // Still no answer for a missing token: that is the caller's fault, not the token server's.
    await get('/api/v1/bearer-probe').expect(401);
  });
});
