// What every benchmark script starts with: the checkout it measures, the built services it starts, the PostgreSQL
// it makes its throw-away databases on, and where its load side runs.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout whose dist/ is measured: BENCH_ROOT, else this one (bench:compare points it at another build). */
export const benchRoot = process.env.BENCH_ROOT
  ? path.resolve(process.env.BENCH_ROOT)
  : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * A built module of the token server under `dist` (dist/apps/auth of benchRoot): its sources moved from apps/auth/src
 * to libs/auth/server/src, and bench:compare measures builds of either layout.
 * @param {string} dist
 * @param {string} file path below the token server's src/
 */
export function tokenServerModule(dist, file) {
  const now = path.join(dist, 'libs/auth/server/src', file);
  return existsSync(now) ? now : path.join(dist, 'apps/auth/src', file);
}

/**
 * The built entry point of each named app (`auth`, `identity`, `tree`) under benchRoot, plus `extra` files of the
 * build (name -> path below dist/apps/...); exits with the build command when one is missing.
 * @param {string[]} apps
 * @param {Record<string, string>} [extra]
 * @returns {Record<string, string>}
 */
export function builtFiles(apps, extra = {}) {
  const files = {
    ...Object.fromEntries(
      apps.map((app) => [app, path.join(benchRoot, `dist/apps/${app}/apps/${app}/src/main.js`)]),
    ),
    ...Object.fromEntries(Object.entries(extra).map(([k, p]) => [k, path.join(benchRoot, 'dist/apps', p)])),
  };
  for (const f of Object.values(files)) {
    if (!existsSync(f)) {
      console.error(`${f} is missing: build first (npx nx run-many -t build -p ${apps.join(',')})`);
      process.exit(1);
    }
  }
  return files;
}

/** The admin URL of a PostgreSQL where throw-away databases may be created. */
export function adminPgUrl(env = process.env) {
  return (
    env.BENCH_PG_URL || env.TEST_PG_URL || env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

/**
 * Where the load side runs (autocannon in the script, PostgreSQL's backends, the other services): BENCH_LOAD_CPUS,
 * else, when the service is pinned to CPU 0, every other CPU, so the service has its core to itself.
 * @param {string} serverCpus the taskset CPU list of the measured service
 */
export function loadCpusFor(serverCpus, env = process.env) {
  return (
    env.BENCH_LOAD_CPUS ??
    (serverCpus === '0' && os.cpus().length > 1
      ? Array.from({ length: os.cpus().length - 1 }, (_, i) => i + 1).join(',')
      : '')
  );
}

/**
 * The environment every benchmark gives the services it starts: a fresh bootstrap client and admin, a secret
 * encryption key, warnings only, rate limits out of the way, no Redis. `extra` is added (and wins).
 * @param {Record<string, string>} [extra]
 */
export function benchServiceEnv(extra = {}) {
  return {
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    BOOTSTRAP_CLIENT_ID: randomUUID(),
    BOOTSTRAP_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    BOOTSTRAP_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_POINTS: '1000000000',
    REDIS_URL: '',
    ...extra,
  };
}

/**
 * An access token of the client_credentials grant from the token server at `authUrl` (client_secret_basic);
 * `params` names the API (`audience` or `resource`) and anything else the request carries. Throws on any other
 * answer than 200.
 * @param {string} authUrl
 * @param {string} clientId
 * @param {string} clientSecret
 * @param {Record<string, string>} params
 * @returns {Promise<string>}
 */
export async function clientCredentialsToken(authUrl, clientId, clientSecret, params) {
  const res = await fetch(`${authUrl}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...params }).toString(),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`token: ${res.status} ${text}`);
  return JSON.parse(text).access_token;
}
