// One process serving `GET /ping` (a raw Express handler, like the token server's) through createHttpApp:
// the cost of the foundation middlewares per request. Run by ./foundation.mjs, not by hand.
//   FOUNDATION_DIST: the swc output of libs (dist root), or `express` / `node` (the floors); LOG_LEVEL; PORT;
//   FOUNDATION_LANE=1: `/ping` served by a raw node handler on the foundation's fast lane instead.
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { Module } from '@nestjs/common';
import { serveForParent } from '../../../../tools/bench/lib/forked.mjs';

/** The raw node handler of the lane and of the node floor: the same body and headers as Express's res.json. */
const PING = Buffer.from('{"ok":true}');
function rawPing(_req, res) {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(PING.length));
  res.end(PING);
}

if (process.env.FOUNDATION_DIST === 'node') {
  // The floor of the lane: node's http server alone with the raw handler.
  const server = http.createServer(rawPing);
  server.listen(Number(process.env.PORT), '127.0.0.1', () => serveForParent(server));
} else if (process.env.FOUNDATION_DIST === 'express') {
  // The floor: Express alone with the same handler.
  const express = (await import('express')).default;
  const a = express();
  a.disable('x-powered-by');
  a.get('/ping', (_req, res) => res.json({ ok: true }));
  const server = a.listen(Number(process.env.PORT), '127.0.0.1', () => serveForParent(server));
} else {
  await foundation();
}

async function foundation() {
  const dist = process.env.FOUNDATION_DIST;
  const { createHttpApp, listen } = await import(
    pathToFileURL(path.join(dist, 'libs/shared/http/src/index.js')).href
  );

  class RootModule {}
  Module({})(RootModule);

  const app = await createHttpApp(RootModule, {
    serviceName: 'foundation-bench',
    version: '0',
    logLevel: process.env.LOG_LEVEL ?? 'warn',
    rateLimit: { points: 1_000_000_000, durationSec: 60 },
    openapi: { title: 'bench', version: '0', description: 'bench' },
    readiness: async () => undefined,
    routes: ['GET /ping'],
    shutdownHooks: false,
    fastLane:
      process.env.FOUNDATION_LANE === '1'
        ? () => ({ matches: (_method, path) => path === '/ping', handle: rawPing })
        : undefined,
    mount: (a) => {
      a.getHttpAdapter()
        .getInstance()
        .get('/ping', (_req, res) => res.json({ ok: true }));
    },
  });
  const server = await listen(app, Number(process.env.PORT), '127.0.0.1');
  serveForParent(server, () => app.close());
}
