// One process serving `GET /api/v1/trees` behind the bearer guard of BearerModule (a cached, active token): the
// guard's cost per request. Run by ./guard.mjs, not by hand.
//   GUARD_DIST: the swc output of libs (dist root); PORT.
import { createServer } from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Controller, Get, Module } from '@nestjs/common';
import { serveForParent } from '../../../../tools/bench/lib/forked.mjs';

const dist = process.env.GUARD_DIST;
const lib = (p) => import(pathToFileURL(path.join(dist, p)).href);
const { createHttpApp, listen } = await lib('libs/shared/http/src/index.js');
const { BearerModule, Scopes } = await lib('libs/shared/bearer/src/index.js');

// The token server's /tokeninfo, answering every token active for the tree API (asked once: the guard caches it).
const tokeninfo = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        active: true,
        client_id: 'c1',
        sub: 'c1',
        scope: 'trees:read',
        aud: 'urn:gatehouse:tree',
        exp: new Date(Date.now() + 3600_000).toISOString(),
      }),
    );
  });
});
await new Promise((r) => tokeninfo.listen(0, '127.0.0.1', () => r(undefined)));

class Trees {
  list() {
    return { ok: true };
  }
}
const d = (name) => Object.getOwnPropertyDescriptor(Trees.prototype, name);
Get('trees')(Trees.prototype, 'list', d('list'));
Scopes('trees:read')(Trees.prototype, 'list', d('list'));
Controller('api/v1')(Trees);

class RootModule {}
Module({
  imports: [
    BearerModule.forRoot({
      authUrl: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (tokeninfo.address()).port}`,
      audience: 'urn:gatehouse:tree',
      cacheTtlSec: 3600,
      negativeTtlSec: 5,
    }),
  ],
  controllers: [Trees],
})(RootModule);

const app = await createHttpApp(RootModule, {
  serviceName: 'guard-bench',
  version: '0',
  logLevel: 'warn',
  rateLimit: { points: 1_000_000_000, durationSec: 60 },
  openapi: { title: 'bench', version: '0', description: 'bench' },
  readiness: async () => undefined,
  shutdownHooks: false,
});
const server = await listen(app, Number(process.env.PORT), '127.0.0.1');
serveForParent(server, () => app.close());
