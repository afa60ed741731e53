#!/usr/bin/env node
// The rate limiter's admission step of one credentialed request (what the token server's fast lane does before
// /token and /tokeninfo: credential key, admission, settle on finish), of two builds side by side in one process,
// interleaved: ns per request for a Basic client and a Bearer token, both already proven good.
//
//   node tools/bench/auth/limiter-ab.mjs <dist of build A> <dist of build B>
//   e.g. node tools/bench/auth/limiter-ab.mjs /tmp/base/dist/apps/auth dist/apps/auth
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from '../lib/stats.mjs';

const [distA, distB] = process.argv.slice(2);
if (!distA || !distB) {
  console.error('usage: limiter-ab.mjs <dist A> <dist B> (each a dist/apps/auth of a build)');
  process.exit(2);
}
const load = (dist) => import(pathToFileURL(path.resolve(dist, 'libs/shared/http/src/rate-limit.js')).href);
const silent = { warn() {}, info() {}, error() {}, debug() {} };
const basic = `Basic ${Buffer.from('3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10:a-secret-of-forty-characters-or-so-12345').toString('base64')}`;
const bearer = `Bearer eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.${'x'.repeat(600)}.sig`;

/** One build's step: key of the credential (whichever function the build has), admit, finish. */
function stepOf(mod) {
  const limiter = new mod.HttpRateLimiter(
    { points: 1e9, durationSec: 60, authFailures: 100 },
    'bench',
    silent,
  );
  const keyOf = mod.presentedCredential ?? mod.claimedCallerKey;
  return (authorization) => {
    const req = { headers: { authorization } };
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    let ok = false;
    limiter.admit(
      'POST /tokeninfo',
      keyOf(req),
      'ip:127.0.0.1',
      res,
      (d) => (ok = d.allowed),
      (e) => {
        throw e;
      },
    );
    res.emit('finish');
    if (!ok) throw new Error('refused');
  };
}

const steps = { A: stepOf(await load(distA)), B: stepOf(await load(distB)) };
const N = 200_000;
const results = { A: { basic: [], bearer: [] }, B: { basic: [], bearer: [] } };
for (let round = 0; round < 7; round++) {
  for (const name of round % 2 ? ['B', 'A'] : ['A', 'B']) {
    for (const [kind, header] of [
      ['basic', basic],
      ['bearer', bearer],
    ]) {
      const step = steps[name];
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < N; i++) step(header);
      const ns = Number(process.hrtime.bigint() - t0) / N;
      if (round > 0) results[name][kind].push(ns); // round 0 warms up
    }
  }
}
for (const kind of ['basic', 'bearer']) {
  const a = median(results.A[kind]);
  const b = median(results.B[kind]);
  console.log(
    `${kind}: A ${a.toFixed(0)} ns, B ${b.toFixed(0)} ns per request (B - A = ${(b - a).toFixed(0)} ns)`,
  );
}
process.exit(0);
