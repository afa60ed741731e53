#!/usr/bin/env node
// limiter-ab.mjs with the counts in Redis (what replicas sharing REDIS_URL do): the admission of one credentialed
// request, of two builds side by side in one process, interleaved: admit, wait for the decision, answer 200. A
// Basic client already proven good, requests C at a time; µs per request (wall time / requests, the Redis writes
// a request leaves behind included: a PING after the last one waits for them).
//
//   BENCH_REDIS_URL=redis://127.0.0.1:6379 node tools/bench/auth/limiter-redis-ab.mjs <dist A> <dist B> [C]
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { median } from '../lib/stats.mjs';

const [distA, distB, concurrency = '32'] = process.argv.slice(2);
const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!distA || !distB) {
  console.error(
    'usage: limiter-redis-ab.mjs <dist A> <dist B> [concurrency] (each a dist/apps/auth of a build)',
  );
  process.exit(2);
}
const C = Number(concurrency);
const load = (dist) => import(pathToFileURL(path.resolve(dist, 'libs/shared/http/src/rate-limit.js')).href);
const silent = { warn() {}, info() {}, error() {}, debug() {} };
const basic = `Basic ${Buffer.from('3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10:a-secret-of-forty-characters-or-so-12345').toString('base64')}`;
const ping = new Redis(redisUrl);
const prefixes = [];

/** One build's limiter on Redis: a function admitting one request and answering it 200. */
async function stepOf(mod) {
  const keyPrefix = `gatehouse:rl:bench:${randomUUID()}`;
  prefixes.push(keyPrefix);
  const limiter = new mod.HttpRateLimiter(
    { points: 1e9, durationSec: 60, authFailures: 100, redisUrl, keyPrefix },
    'bench',
    silent,
  );
  await limiter.start();
  const req = { headers: { authorization: basic } };
  const presented = mod.presentedCredential(req);
  return () =>
    new Promise((resolve, reject) => {
      const res = Object.assign(new EventEmitter(), { statusCode: 200 });
      limiter.admit(
        'POST /token',
        presented,
        'ip:127.0.0.1',
        res,
        (d) => {
          if (!d.allowed) return reject(new Error('refused'));
          res.emit('finish');
          resolve();
        },
        reject,
      );
    });
}

const steps = { A: await stepOf(await load(distA)), B: await stepOf(await load(distB)) };
await steps.A();
await steps.B();
const N = 20_000;
const results = { A: [], B: [] };
for (let round = 0; round < 7; round++) {
  for (const name of round % 2 ? ['B', 'A'] : ['A', 'B']) {
    const step = steps[name];
    let left = N;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: C }, async () => {
        while (left-- > 0) await step();
      }),
    );
    await ping.ping();
    const us = Number(process.hrtime.bigint() - t0) / 1000 / N;
    if (round > 0) results[name].push(us); // round 0 warms up
  }
}
const a = median(results.A);
const b = median(results.B);
const spread = (xs) => `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}`;
console.log(
  `Redis, ${C} in flight: A ${a.toFixed(1)} µs (${spread(results.A)}), B ${b.toFixed(1)} µs (${spread(results.B)}) per request`,
);
for (const p of prefixes) {
  const keys = await ping.keys(`${p}:*`);
  if (keys.length) await ping.del(...keys);
}
process.exit(0);
