#!/usr/bin/env node
// The token server's audit events, batched (AuthEvents with AUTH_EVENTS_FLUSH_MS=200, the default) against one
// INSERT per event (AUTH_EVENTS_FLUSH_MS=0): what each costs this process in CPU per event, and how many events a
// second each can store, on a throw-away database. CPU time (process.cpuUsage) rather than throughput alone, so a
// busy machine moves the figures less. docs/events.md ("Storage") quotes a run.
//
//   npx nx run auth:build && node tools/bench/auth/events-writer.mjs
//
// Variables: BENCH_PG_URL (as the other benchmarks), BENCH_EVENTS (events per case, default 50000), BENCH_POOL
// (pool size, default 10 as the benchmarks' DB_POOL_MAX).
import { randomBytes, randomUUID } from 'node:crypto';
import { setImmediate as tick } from 'node:timers/promises';
import pg from 'pg';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { adminPgUrl, benchRoot } from '../lib/setup.mjs';

/** A module of the token server's build (dist/apps/auth). */
const built = (file) => import(pathToFileURL(path.join(benchRoot, 'dist/apps/auth', file)).href);
const { AuthEvents } = await built('libs/auth/server/src/events/auth-events.js');
const { Db } = await built('libs/shared/db/src/index.js');
const { Events1795800000000 } = await built('libs/identity/data/src/migrations/1795800000000-events.js');

const N = Number(process.env.BENCH_EVENTS || 50_000);
const POOL = Number(process.env.BENCH_POOL || 10);
const adminUrl = adminPgUrl();
const dbName = `gh_bench_events_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const url = new URL(adminUrl);
url.pathname = `/${dbName}`;

/** One client_credentials token's event, as the fast path queues it. */
const instanceId = randomUUID();
const clientId = randomUUID();
const event = (i) => ({
  type: 'token.issued',
  instanceId,
  tenantId: null,
  actor: { type: 'client', id: clientId },
  clientId,
  ip: '127.0.0.1',
  userAgent: `bench/${i}`,
  details: { grant_type: 'client_credentials', audience: 'https://api.bench/' },
});

const cpuMs = (u) => (u.user + u.system) / 1000;

try {
  const schema = new pg.Client({ connectionString: url.toString() });
  await schema.connect();
  await new Events1795800000000().up({ query: (sql) => schema.query(sql) });
  await schema.end();
  const db = new Db({ url: url.toString(), applicationName: 'bench-events', poolMax: POOL });
  await db.exec('SELECT 1');
  const results = [];

  // Batched: record() queues, the timer writes what queued every 200 ms (a batch of up to 1,000 per INSERT).
  {
    const events = new AuthEvents(db, { flushMs: 200 });
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      events.record(event(i));
      // as requests arrive: the event loop turns between them, and the timer's INSERTs run meanwhile
      if (i % 100 === 99) await tick();
    }
    const queuedMs = performance.now() - t0;
    const queuedCpu = cpuMs(process.cpuUsage(c0));
    await events.close();
    results.push({
      mode: 'batched (200 ms)',
      cpuUsPerEvent: (cpuMs(process.cpuUsage(c0)) * 1000) / N,
      recordUsPerEvent: (queuedCpu * 1000) / N,
      perSecond: N / ((performance.now() - t0) / 1000),
      queuedMs,
    });
  }

  // One INSERT per event, at most the pool's size at once (what a request that writes its own row costs).
  {
    const events = new AuthEvents(db, { flushMs: 0 });
    let written = 0;
    events.counter = () => written++;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      events.record(event(i));
      // keep at most POOL * 2 INSERTs waiting, as POOL request handlers each awaiting their own would
      while (i + 1 - written > POOL * 2) await tick();
    }
    while (written < N) await tick();
    results.push({
      mode: 'one INSERT per event',
      cpuUsPerEvent: (cpuMs(process.cpuUsage(c0)) * 1000) / N,
      recordUsPerEvent: null,
      perSecond: N / ((performance.now() - t0) / 1000),
    });
  }

  const [{ n }] = await db.rows(`SELECT count(*)::int AS n FROM events`);
  await db.close();
  console.log(
    `events-writer ${new Date().toISOString().slice(0, 16)} UTC, ${N} events per case, pool ${POOL}, load ${(await import('node:os')).loadavg()[0].toFixed(1)}; rows written: ${n}`,
  );
  console.log(
    '| mode | CPU µs per event (this process, writes included) | µs per record() call | events/s stored |',
  );
  console.log('|---|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.mode} | ${r.cpuUsPerEvent.toFixed(1)} | ${r.recordUsPerEvent === null ? '-' : r.recordUsPerEvent.toFixed(1)} | ${Math.round(r.perSecond)} |`,
    );
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}
