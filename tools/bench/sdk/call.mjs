#!/usr/bin/env node
// The cost of a call through the SDK (openapi-fetch with the bearer middleware and unwrap) against the same request
// made with plain fetch, on the real services (started as libs/sdk/scripts/services.mjs starts them), alternating
// the two in rounds so that both see the same machine. Prints a table; `node tools/bench/sdk/call.mjs [rounds]`.
//
// Two requests: GET /livez (no database, no token check: the client's own overhead is the largest part of it) and
// GET /api/v1/clients?limit=10 with a bearer token (a real read).
import path from 'node:path';
import { prepareTestEnvironment } from '../../jest/test-env.mjs';
import { startServices } from '../../../libs/sdk/scripts/services.mjs';
import { median, percentile } from '../lib/stats.mjs';

const ROUNDS = Number(process.argv[2] ?? 10);
const PER_ROUND = 200;

const env = await prepareTestEnvironment({ log: () => undefined });
const services = await startServices();
try {
  const sdk = await import(path.join(services.buildDir, 'libs/sdk/src/index.js'));
  const token = sdk.clientCredentials({
    authUrl: services.authUrl,
    clientId: services.clientId,
    clientSecret: services.clientSecret,
  });
  const gh = sdk.createGatehouse({
    authUrl: services.authUrl,
    identityUrl: services.identityUrl,
    treeUrl: services.treeUrl,
    token,
  });
  const bearer = await token({ service: 'identity', audience: sdk.MANAGEMENT_AUDIENCE });
  const cases = {
    'GET /livez': {
      plain: async () => {
        const r = await fetch(`${services.identityUrl}/livez`);
        if (!r.ok) throw new Error(String(r.status));
        return r.json();
      },
      sdk: async () => sdk.unwrap(await gh.identity.GET('/livez')),
    },
    'GET /api/v1/clients?limit=10': {
      plain: async () => {
        const r = await fetch(`${services.identityUrl}/api/v1/clients?limit=10`, {
          headers: { authorization: `Bearer ${bearer}` },
        });
        if (!r.ok) throw new Error(String(r.status));
        return r.json();
      },
      sdk: async () =>
        sdk.unwrap(await gh.identity.GET('/api/v1/clients', { params: { query: { limit: 10 } } })),
    },
  };
  const samples = {};
  for (const [name, c] of Object.entries(cases)) {
    samples[name] = { plain: [], sdk: [] };
    for (let i = 0; i < 50; i++) (await c.plain(), await c.sdk()); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of round % 2 ? ['sdk', 'plain'] : ['plain', 'sdk']) {
        for (let i = 0; i < PER_ROUND; i++) {
          const t0 = performance.now();
          await c[kind]();
          samples[name][kind].push(performance.now() - t0);
        }
      }
    }
  }
  const us = (ms) => `${(ms * 1000).toFixed(0)} µs`;
  process.stdout.write(`\n${ROUNDS} rounds x ${PER_ROUND} calls each, sequential, one connection pool\n\n`);
  process.stdout.write('| request | plain fetch median (p90) | SDK median (p90) | SDK - plain (median) |\n');
  process.stdout.write('|---|---|---|---|\n');
  for (const [name, s] of Object.entries(samples)) {
    const p = median(s.plain);
    const q = median(s.sdk);
    process.stdout.write(
      `| ${name} | ${us(p)} (${us(percentile(s.plain, 90))}) | ${us(q)} (${us(percentile(s.sdk, 90))}) | ${us(q - p)} |\n`,
    );
  }
} finally {
  await services.stop();
  await env.cleanup();
}
