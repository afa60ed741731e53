import { Controller, Get, Module } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createHttpApp } from '@gatehouse/http';
import { BearerModule, Caller, Public, Scopes, type CallerInfo } from '../src/index.js';
import { isoIn, TokenInfoServer } from './tokeninfo-server.js';

@Controller('api/v1')
class TestController {
  @Get('open')
  @Public()
  open() {
    return { open: true };
  }

  @Get('trees')
  @Scopes('trees:read')
  trees(@Caller() caller: CallerInfo) {
    return { caller };
  }

  @Get('settings')
  @Scopes('trees:read', 'settings:write')
  settings() {
    return { ok: true };
  }

  @Get('unmarked')
  unmarked(@Caller() caller: CallerInfo) {
    return { client: caller.clientId };
  }
}

describe('BearerGuard in a Nest app', () => {
  let server: TokenInfoServer;
  let app: NestExpressApplication;
  let http: ReturnType<NestExpressApplication['getHttpServer']>;

  beforeAll(async () => {
    server = await new TokenInfoServer().start();
    @Module({
      imports: [
        BearerModule.forRoot({
          authUrl: server.url,
          audience: 'urn:gatehouse:tree',
          cacheTtlSec: 60,
          negativeTtlSec: 1,
          // No test here waits for the timeout (the unreachable case answers 502 at once); a short one only made
          // the answers of a loaded machine, where a test file shares the cores with others, 503 instead of 401.
          timeoutMs: 5000,
        }),
      ],
      controllers: [TestController],
    })
    class TestModule {}
    app = await createHttpApp(TestModule, {
      serviceName: 'bearer-test',
      version: '0',
      logLevel: 'silent',
      rateLimit: { points: 10_000, durationSec: 60 },
      openapi: { title: 't', description: 't', version: '0' },
      readiness: async () => undefined,
      shutdownHooks: false,
    });
    http = app.getHttpServer();
    const base = { active: true, client_id: 'c1', sub: 'c1', exp: isoIn(600) };
    server.tokens.set('reader', { ...base, scope: 'trees:read', aud: 'urn:gatehouse:tree', tenant_id: 't9' });
    server.tokens.set('admin', { ...base, scope: 'trees:read settings:write', aud: ['urn:gatehouse:tree'] });
    server.tokens.set('other-api', { ...base, scope: 'trees:read', aud: 'urn:gatehouse:management' });
    server.tokens.set('two-audiences', {
      ...base,
      scope: 'trees:read settings:write',
      aud: ['https://evil.example', 'urn:gatehouse:tree'],
    });
  });
  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  it('lets public routes through without a token', async () => {
    await request(http).get('/api/v1/open').expect(200, { open: true });
    await request(http).get('/livez').expect(200);
  });

  it('401 with a Bearer challenge when the token is missing, malformed or inactive', async () => {
    const missing = await request(http).get('/api/v1/trees').expect(401);
    expect(missing.body).toEqual({
      code: 'unauthorized',
      message: expect.stringContaining('Missing access token'),
    });
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="gatehouse"');

    const basic = await request(http).get('/api/v1/trees').set('Authorization', 'Basic YTpi').expect(401);
    expect(basic.headers['www-authenticate']).toBe('Bearer realm="gatehouse", error="invalid_request"');
    await request(http).get('/api/v1/trees').set('Authorization', 'Bearer').expect(401);
    await request(http).get('/api/v1/trees').set('Authorization', 'Bearer a b').expect(401);

    const inactive = await request(http).get('/api/v1/trees').set('Authorization', 'Bearer nope').expect(401);
    expect(inactive.body.code).toBe('unauthorized');
    expect(inactive.headers['www-authenticate']).toBe('Bearer realm="gatehouse", error="invalid_token"');
    // Unmarked routes are guarded too.
    await request(http).get('/api/v1/unmarked').expect(401);
  });

  it('200 with the caller on the request when audience and scopes fit', async () => {
    const res = await request(http).get('/api/v1/trees').set('Authorization', 'Bearer reader').expect(200);
    expect(res.body.caller).toMatchObject({
      clientId: 'c1',
      sub: 'c1',
      scopes: ['trees:read'],
      audience: ['urn:gatehouse:tree'],
      tenantId: 't9',
    });
    await request(http).get('/api/v1/settings').set('Authorization', 'bearer admin').expect(200);
    await request(http)
      .get('/api/v1/unmarked')
      .set('Authorization', 'Bearer reader')
      .expect(200, { client: 'c1' });
  });

  it('403 forbidden for a missing scope or another audience', async () => {
    const scope = await request(http)
      .get('/api/v1/settings')
      .set('Authorization', 'Bearer reader')
      .expect(403);
    expect(scope.body).toEqual({
      code: 'forbidden',
      message: 'The access token lacks the scope settings:write',
    });
    expect(scope.headers['www-authenticate']).toContain('error="insufficient_scope"');
    const aud = await request(http).get('/api/v1/trees').set('Authorization', 'Bearer other-api').expect(403);
    expect(aud.body.code).toBe('forbidden');
    expect(aud.body.message).toContain('urn:gatehouse:tree');
  });

  it('401 invalid_token for a token naming more than one audience', async () => {
    const res = await request(http)
      .get('/api/v1/trees')
      .set('Authorization', 'Bearer two-audiences')
      .expect(401);
    expect(res.body.code).toBe('unauthorized');
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('503 when the token server is unreachable and the token is not cached; cached tokens still pass', async () => {
    await request(http).get('/api/v1/trees').set('Authorization', 'Bearer reader').expect(200); // cached now
    server.tokens.set('fresh', {
      active: true,
      client_id: 'c2',
      scope: 'trees:read',
      aud: 'urn:gatehouse:tree',
    });
    server.status = 502;
    const res = await request(http).get('/api/v1/trees').set('Authorization', 'Bearer fresh').expect(503);
    expect(res.body).toEqual({
      code: 'service_unavailable',
      message: expect.stringContaining('token server'),
    });
    await request(http).get('/api/v1/trees').set('Authorization', 'Bearer reader').expect(200);
    server.status = 200;
  });

  it('answers a cached token as the strategy does: the same header forms, the same refusals', async () => {
    await request(http).get('/api/v1/trees').set('Authorization', 'Bearer reader').expect(200); // cached now
    await request(http).get('/api/v1/trees').set('Authorization', 'bearer reader').expect(200);
    // passport-http-bearer reads `<scheme> <token>` with exactly one space: two stay refused when the token is cached
    // (a trailing space never arrives: node's HTTP parser trims header values)
    const spaced = await request(http)
      .get('/api/v1/trees')
      .set('Authorization', 'Bearer  reader')
      .expect(401);
    expect(spaced.headers['www-authenticate']).toBe('Bearer realm="gatehouse", error="invalid_token"');
    // a cached inactive answer is the strategy's 401 too
    await request(http).get('/api/v1/trees').set('Authorization', 'Bearer gone').expect(401);
    const again = await request(http).get('/api/v1/trees').set('Authorization', 'Bearer gone').expect(401);
    expect(again.headers['www-authenticate']).toBe('Bearer realm="gatehouse", error="invalid_token"');
    expect(again.body.message).toBe('The access token is invalid, expired or revoked');
  });

  it('reads a token from the Authorization header only, never from access_token in the query or body', async () => {
    // passport-http-bearer would take these: the guard refuses them before it runs.
    const query = await request(http).get('/api/v1/trees?access_token=reader').expect(401);
    expect(query.body.message).toContain('Missing access token');
    await request(http)
      .get('/api/v1/trees?access_token=reader')
      .set('Authorization', 'Bearer reader')
      .expect(401);
    await request(http)
      .get('/api/v1/trees')
      .set('Authorization', 'Bearer reader')
      .set('Content-Type', 'application/json')
      .send({ access_token: 'reader' })
      .expect(401);
  });

  it('documents scopes and bearer security in OpenAPI', async () => {
    const doc = (await request(http).get('/docs/openapi.json').expect(200)).body;
    const op = doc.paths['/api/v1/settings'].get;
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(op['x-required-scopes']).toEqual(['trees:read', 'settings:write']);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403', '503']));
  });
});

describe('BearerGuard with requireInstance (an API confining its records to an instance)', () => {
  let server: TokenInfoServer;
  let app: NestExpressApplication;
  let http: ReturnType<NestExpressApplication['getHttpServer']>;
  const instance = '5a4f0c1e-3b2d-4e6f-8a9b-0c1d2e3f4a5b';

  beforeAll(async () => {
    server = await new TokenInfoServer().start();
    @Module({
      imports: [
        BearerModule.forRoot({
          authUrl: server.url,
          audience: 'urn:gatehouse:tree',
          cacheTtlSec: 60,
          negativeTtlSec: 1,
          timeoutMs: 5000,
          requireInstance: true,
        }),
      ],
      controllers: [TestController],
    })
    class InstanceModule {}
    app = await createHttpApp(InstanceModule, {
      serviceName: 'bearer-instance-test',
      version: '0',
      logLevel: 'silent',
      rateLimit: { points: 10_000, durationSec: 60 },
      openapi: { title: 't', description: 't', version: '0' },
      readiness: async () => undefined,
      shutdownHooks: false,
    });
    http = app.getHttpServer();
    const base = { active: true, client_id: 'c1', sub: 'c1', exp: isoIn(600), scope: 'trees:read' };
    const aud = 'urn:gatehouse:tree';
    server.tokens.set('other', { ...base, aud, instance_id: instance, default_instance: false });
    server.tokens.set('default', { ...base, aud, instance_id: instance, default_instance: true });
    server.tokens.set('old-server', { ...base, aud });
    server.tokens.set('half', { ...base, aud, instance_id: instance });
  });
  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  it('puts the instance of the /tokeninfo answer on the caller', async () => {
    const other = await request(http).get('/api/v1/trees').set('Authorization', 'Bearer other').expect(200);
    expect(other.body.caller).toMatchObject({ instanceId: instance, defaultInstance: false });
    const def = await request(http).get('/api/v1/trees').set('Authorization', 'Bearer default').expect(200);
    expect(def.body.caller).toMatchObject({ instanceId: instance, defaultInstance: true });
  });

  it('401 invalid_token when the token server does not name the instance (an older token server)', async () => {
    for (const token of ['old-server', 'half']) {
      const res = await request(http)
        .get('/api/v1/trees')
        .set('Authorization', `Bearer ${token}`)
        .expect(401);
      expect(res.body).toEqual({ code: 'unauthorized', message: expect.stringContaining('instance') });
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
    }
  });
});
