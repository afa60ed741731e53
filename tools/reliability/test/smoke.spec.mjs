// A fast smoke of every reliability scenario, part of `npm test`; the full runs are `npm run reliability`
// (docs/reliability.md). One stack (embedded PostgreSQL, the three services from dist/, built by the test target's
// dependencies): the OpenAPI tour and a short seeded fuzz, a 2-second PostgreSQL outage under 10 connections, the
// token server down with a 5-second bearer cache, and 15 seconds of mixed load.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { authDown } from '../auth-down.mjs';
import { fuzzStack, summarizeFailures } from '../fuzz.mjs';
import { pgRestart } from '../pg-restart.mjs';
import { soak } from '../soak.mjs';
import { startStack } from '../lib/stack.mjs';

// Also set here, not only in jest.config.mjs: `npm test` runs every project in one Jest run, which takes the timeout
// from its root config.
jest.setTimeout(240_000);

/** @type {import('../lib/stack.mjs').Stack} */
let stack;
/** @type {pg.Client | undefined} */
let distLock;

beforeAll(async () => {
  // The services start (and restart) from dist/, which the launcher smoke rebuilds (an Nx cache restore deletes and
  // rewrites it) under the same lock held exclusively; see holdTestLock in @gatehouse/testing. Held shared until the
  // stack is closed.
  distLock = new pg.Client({
    connectionString: process.env.TEST_PG_URL,
    application_name: 'gatehouse-test-lock-dist',
  });
  distLock.on('error', () => undefined);
  await distLock.connect();
  await distLock.query('SELECT pg_advisory_lock_shared(hashtextextended($1, 0))', ['gatehouse:test:dist']);
  stack = await startStack({
    embedded: true,
    env: {
      RATE_LIMIT_POINTS: '1000000000',
      RATE_LIMIT_AUTH_FAILURES: '1000000000',
      BEARER_CACHE_TTL_SEC: '5',
      MULTI_INSTANCE: 'true',
    },
  });
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await distLock?.end().catch(() => undefined);
});

describe('reliability smoke', () => {
  it('fuzz: the documented answers of every read, and 150 seeded hostile requests per service', async () => {
    const results = await fuzzStack(stack, { requests: 150, seed: 20261125 });
    const problems = results.flatMap((r) =>
      summarizeFailures(r.failures).map(
        (g) =>
          `${r.service}: x${g.count} ${g.key} (e.g. ${g.example.request} [${g.example.note}] -> ${g.example.status} ${g.example.body})`,
      ),
    );
    expect(problems).toEqual([]);
    for (const r of results) expect(r.requests).toBe(150);
  });

  it('PostgreSQL restart: 2xx or 503 only, nothing lost or doubled, recovery within 5 s', async () => {
    const result = await pgRestart(stack, {
      connections: 10,
      outageMs: 2000,
      warmMs: 1000,
      afterMs: 3000,
      timeoutMs: 15_000,
    });
    expect(result.problems).toEqual([]);
    expect(result.acknowledgedWrites).toBeGreaterThan(0);
  });

  it('token server down: cached tokens served, others 503, recovery when it returns', async () => {
    const result = await authDown(stack, { cacheTtlSec: 5 });
    expect(result.problems).toEqual([]);
  });

  it('soak (short): mixed load at 10 connections without an error', async () => {
    const result = await soak(stack, {
      seconds: 15,
      warmupSec: 5,
      windowSec: 5,
      connections: 10,
      steadiness: false,
    });
    expect(result.problems).toEqual([]);
    expect(result.requests).toBeGreaterThan(100);
  });
});
