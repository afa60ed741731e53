import { env } from './env.js';

/** Variables every service reads. Apps spread these into their own schema. */
export const commonEnv = {
  LOG_LEVEL: env.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
    default: 'info',
    description: 'pino log level',
  }),
  DATA_DIR: env.str({
    default: '.data',
    description: 'directory for embedded PostgreSQL, generated keys and the outbox',
  }),
  REDIS_URL: env.url({
    optional: true,
    secret: true,
    protocols: ['redis', 'rediss'],
    description: 'Redis for shared rate-limit counters (and short-lived OAuth artifacts); unset: in-memory',
  }),
  RATE_LIMIT_POINTS: env.int({
    default: 1000,
    min: 1,
    description: 'requests allowed per endpoint and caller per window',
  }),
  RATE_LIMIT_WINDOW_SEC: env.int({ default: 60, min: 1, description: 'rate-limit window in seconds' }),
  RATE_LIMIT_AUTH_FAILURES: env.int({
    default: 100,
    min: 1,
    description:
      'failed authentications (401 to a request with credentials) allowed per source address and window; past it that address gets 429 for every credentialed request until the window ends',
  }),
  RATE_LIMIT_OVERRIDES: env.str({
    default: '',
    description: "per-endpoint limits, e.g. 'POST /token=300,GET /api/v1/clients=600'",
  }),
  BODY_LIMIT: env.str({
    default: '1mb',
    pattern: /^\d+(b|kb|mb)$/i,
    description: 'largest accepted request body',
  }),
  DB_POOL_MAX: env.int({
    default: 10,
    min: 1,
    max: 200,
    description: 'PostgreSQL connection pool size per service',
  }),
  DB_STATEMENT_TIMEOUT_MS: env.int({
    default: 30_000,
    min: 0,
    description:
      'statement_timeout of every pooled PostgreSQL connection, ms (0: none); a longer statement is cancelled and answered 503 (migrations and the tree bulk operations have their own)',
  }),
};

export const authPort = env.int({ default: 3000, min: 1, max: 65535, description: 'port of apps/auth' });
export const identityPort = env.int({
  default: 3001,
  min: 1,
  max: 65535,
  description: 'port of apps/identity',
});
export const treePort = env.int({ default: 3002, min: 1, max: 65535, description: 'port of apps/tree' });

/** Parse RATE_LIMIT_OVERRIDES ('METHOD /path=N,...') into a map; bad entries are reported by name. */
export function parseRateLimitOverrides(raw: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Z]+ \/\S*)=(\d+)$/.exec(part);
    if (!m) throw new Error(`Invalid environment variable RATE_LIMIT_OVERRIDES: bad entry '${part}'`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

const pgUrl = (description: string) =>
  env.url({ optional: true, secret: true, protocols: ['postgres', 'postgresql'], description });

export const databaseUrl = pgUrl(
  'PostgreSQL of apps/auth and apps/identity; unset under `npm start`: the embedded server under DATA_DIR',
);
export const treeDatabaseUrl = pgUrl('PostgreSQL of apps/tree (default: DATABASE_URL)');
export const authUrl = env.url({
  default: 'http://127.0.0.1:3000',
  description: 'where identity and tree reach the token server (its /tokeninfo)',
});
