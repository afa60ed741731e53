#!/usr/bin/env node
// Memory of the three services: RSS of each, as shipped (tools/launcher/node-flags.mjs, the default log
// level), 5 s after all three answer (idle), then right after and 10 s after a mixed load at 10 connections: tree
// node creates and moves, client and user creates, client_credentials tokens, /tokeninfo and GET /jwks.
// Targets: idle under 150 MB, after the load under 250 MB.
//
//   npx nx run-many -t build -p auth,identity,tree && node tools/bench/memory/run.mjs
//
// Variables: BENCH_PG_URL (admin URL of a PostgreSQL where a throw-away database may be created; default
// TEST_PG_URL, else postgres://postgres@127.0.0.1:5432/postgres), BENCH_DURATION (s of load, default 60),
// BENCH_CONNECTIONS (default 10), BENCH_JSON (also write the results there).
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { prepareLoad } from '../../reliability/lib/load.mjs';
import { startStack } from '../../reliability/lib/stack.mjs';
import { rssMiB } from '../lib/processes.mjs';
import { SERVICE_NODE_FLAGS } from '../../launcher/node-flags.mjs';

const env = process.env;
const adminUrl = env.BENCH_PG_URL || env.TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(env.BENCH_DURATION || 60);
const connections = Number(env.BENCH_CONNECTIONS || 10);
const services = /** @type {const} */ (['auth', 'identity', 'tree']);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// As shipped: the default log level (the stack's own default is warn), the rate limiter counting every request (a
// limit too high to answer 429 here).
const stack = await startStack({
  adminUrl,
  env: { LOG_LEVEL: 'info', RATE_LIMIT_POINTS: '1000000000', RATE_LIMIT_AUTH_FAILURES: '1000000000' },
  log: (s) => process.stderr.write(`${s}\n`),
});
/** @type {Record<string, Record<string, number | undefined>>} */
const rss = { idle: {}, after: {}, after10s: {} };
const measure = (/** @type {string} */ when) => {
  for (const s of services) rss[when][s] = rssMiB(stack.procs[s].pid);
};
let sample429 = '';
let total = 0;
let failed = 0;
/** Answers that were not 2xx, by kind and status. */
const notOk = new Map();
const count = (/** @type {string} */ kind, /** @type {number} */ status) => {
  total++;
  if (status >= 200 && status < 300) return;
  failed++;
  const key = `${kind} ${status}`;
  notOk.set(key, (notOk.get(key) ?? 0) + 1);
};
try {
  await sleep(5000);
  measure('idle');
  process.stderr.write(`idle: ${JSON.stringify(rss.idle)}\n`);

  const load = await prepareLoad(stack, { timeoutMs: 15_000 });
  // /tokeninfo and /jwks beside the mix's writes: what resource servers do most.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 2000 });
  const basic = `Basic ${Buffer.from(`${stack.client.id}:${stack.client.secret}`).toString('base64')}`;
  const treeToken = await stack.token('urn:gatehouse:tree');
  const get = (/** @type {string} */ url, /** @type {http.RequestOptions} */ opts, body = '') =>
    new Promise((resolve) => {
      const req = http.request(url, { agent, ...opts }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          if (res.statusCode === 429 && !sample429)
            sample429 = `${url}: ${text} ${JSON.stringify(res.headers)}`;
          resolve(res.statusCode ?? 0);
        });
      });
      req.on('error', () => resolve(0));
      req.end(body);
    });
  const endAt = Date.now() + seconds * 1000;
  const reads = async () => {
    while (Date.now() < endAt) {
      const a = await get(
        `${stack.authUrl}/tokeninfo`,
        {
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        },
        new URLSearchParams({ token: treeToken }).toString(),
      );
      const b = await get(`${stack.authUrl}/jwks`, { method: 'GET' });
      count('tokeninfo', a);
      count('jwks', b);
    }
  };
  const [outcomes] = await Promise.all([
    load.drive({ connections: Math.max(1, connections - 2), until: () => Date.now() >= endAt }),
    reads(),
    reads(),
  ]);
  for (const o of outcomes) count(o.kind, o.status);
  load.close();
  agent.destroy();
  measure('after');
  await sleep(10_000);
  measure('after10s');
} finally {
  await stack.close();
}

const lines = [
  '| service | idle RSS MiB (target < 150) | right after the load | 10 s later (target < 250) |',
  '|---|---:|---:|---:|',
  ...services.map((s) => `| ${s} | ${rss.idle[s]} | ${rss.after[s]} | ${rss.after10s[s]} |`),
];
const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} vCPU, Node ${process.versions.node}, node flags ${SERVICE_NODE_FLAGS.join(' ')}; ${seconds} s of mixed load at ${connections} connections: ${total} requests, ${failed} not 2xx; load average at the end ${os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}`;
console.log(`\n${machine}\n\n${lines.join('\n')}`);
if (sample429) console.log(sample429);
if (notOk.size) console.log(`\nnot 2xx: ${JSON.stringify(Object.fromEntries(notOk))}`);
if (env.BENCH_JSON)
  writeFileSync(env.BENCH_JSON, JSON.stringify({ machine, date: new Date().toISOString(), rss }, null, 2));
