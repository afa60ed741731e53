import { isIP } from 'node:net';
import { ConfigError, env, type EnvVar } from './env.js';

/**
 * Which proxies in front of a service are trusted to tell the client's address (X-Forwarded-For): `false` (none,
 * the socket's peer is the client), a hop count (that many proxies, the nearest first), or a list of addresses and
 * CIDR ranges (or Express's names `loopback`, `linklocal`, `uniquelocal`). Handed to Express as `trust proxy`.
 */
export type TrustProxySetting = false | number | string[];

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** Parses a TRUST_PROXY value; throws on a boolean `true` (every hop trusted: the address is the client's word). */
export function parseTrustProxy(raw: string, name = 'TRUST_PROXY'): TrustProxySetting {
  const v = raw.trim();
  const bad = (what: string): never => {
    throw new ConfigError(`Invalid environment variable ${name}: ${what}, got '${raw}'`);
  };
  if (v === '' || /^(false|no|off|0)$/i.test(v)) return false;
  if (/^(true|yes|on)$/i.test(v))
    bad(
      'must be false, a hop count or a list of proxy addresses/CIDR ranges (true would trust any client-supplied X-Forwarded-For)',
    );
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops > 32) bad('a hop count must be at most 32');
    return hops;
  }
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of list) {
    if (PROXY_NAMES.has(entry)) continue;
    const [addr, bits, more] = entry.split('/');
    const family = isIP(addr);
    const max = family === 4 ? 32 : 128;
    if (!family || more !== undefined) bad(`'${entry}' is not an IP address or CIDR range`);
    if (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > max))
      bad(`'${entry}' has a bad prefix length`);
  }
  return list;
}

const trustProxyVar: EnvVar<TrustProxySetting> & { default: TrustProxySetting } = {
  kind: 'false|hops|CIDR list',
  default: false,
  description:
    "proxies trusted to tell the client's address in X-Forwarded-For (rate limits, failure budgets, lockouts): `false` (none), a hop count, or a comma-separated list of proxy addresses/CIDR ranges (`loopback`, `10.0.0.0/8`...); never `true`",
  parse: parseTrustProxy,
};

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
      'failed authentications (401 to a request with credentials) allowed per source address and credential (bearer token, or client id and secret) and window; past it that credential gets 429 from that address, unchecked, until the window ends',
  }),
  RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: env.int({
    optional: true,
    min: 1,
    description:
      'failed authentications allowed per source address and window over all credentials (unset: 10 x RATE_LIMIT_AUTH_FAILURES); past it only credentials that proved good in the window are checked from that address, the rest get 429',
  }),
  TRUST_PROXY: trustProxyVar,
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

export const consolePort = env.int({
  default: 3003,
  min: 1,
  max: 65535,
  description: 'port of apps/console (the admin console); also the default of CONSOLE_URL and CORS_ORIGINS',
});
export const consoleUrl = env.url({
  optional: true,
  description:
    "the admin console's public URL (default http://localhost:<CONSOLE_PORT>): the token server seeds the console client's callback and sign-out URLs from it",
});

/** Parses CORS_ORIGINS: a comma-separated list of origins (`scheme://host[:port]`, no path), or `none`. */
export function parseCorsOrigins(raw: string, name = 'CORS_ORIGINS'): string[] {
  const v = raw.trim();
  if (v === '' || v === 'none') return [];
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw new ConfigError(`Invalid environment variable ${name}: '${entry}' is not an origin`);
      }
      if (entry === '*' || !/^https?:$/.test(url.protocol) || url.origin !== entry.replace(/\/$/, '')) {
        throw new ConfigError(
          `Invalid environment variable ${name}: '${entry}' must be an origin (http(s)://host[:port], no path, no *)`,
        );
      }
      return url.origin;
    });
}

export const corsOrigins: EnvVar<string[]> & { optional: true } = {
  kind: 'origin list',
  optional: true,
  description:
    'browser origins allowed to call this API with CORS (comma-separated, e.g. `https://console.example.com`; `none`: no CORS at all); default: the console, CONSOLE_URL or http://localhost:<CONSOLE_PORT>',
  parse: parseCorsOrigins,
};

/** The console's public URL: CONSOLE_URL, else http://localhost:<CONSOLE_PORT>. */
export const consoleUrlOf = (e: { CONSOLE_URL?: string; CONSOLE_PORT?: number }): string =>
  (e.CONSOLE_URL ?? `http://localhost:${e.CONSOLE_PORT ?? 3003}`).replace(/\/+$/, '');

/** The origins an API allows (CORS_ORIGINS, else the console's origin). */
export const allowedCorsOrigins = (e: {
  CORS_ORIGINS?: string[];
  CONSOLE_URL?: string;
  CONSOLE_PORT?: number;
}): string[] => e.CORS_ORIGINS ?? [new URL(consoleUrlOf(e)).origin];
