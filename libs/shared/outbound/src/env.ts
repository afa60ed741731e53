import { ConfigError, env, type EnvVar } from '@gatehouse/config';
import { OutboundFetcher, type OutboundLimits } from './fetcher.js';
import { Allowlist, OutboundPolicy } from './policy.js';

/** OUTBOUND_ALLOWLIST: validated at boot (a bad entry stops the service with a message naming it). */
const allowlistVar = {
  kind: 'list',
  default: '',
  description:
    'hosts (`idp.dev.test`, `*.dev.test`), origins or IPs/CIDRs that outbound fetches (identity providers) may reach over http and at internal addresses; for development and tests',
  parse(raw: string, name: string) {
    try {
      new Allowlist(raw);
    } catch (err) {
      throw new ConfigError(`Invalid environment variable ${name}: ${(err as Error).message}`);
    }
    return raw;
  },
} satisfies EnvVar<string>;

/** What a service that only judges URLs (e.g. when they are configured) reads. */
export const outboundAllowlistEnv = { OUTBOUND_ALLOWLIST: allowlistVar };

/** What a service that fetches reads. */
export const outboundEnv = {
  ...outboundAllowlistEnv,
  OUTBOUND_TIMEOUT_MS: env.int({
    default: 5000,
    min: 100,
    max: 60000,
    description:
      'longest outbound fetch (identity provider discovery and keys) in ms, from waiting for a slot to the last byte; connecting gets at most 3000 of it',
  }),
  OUTBOUND_MAX_BYTES: env.int({
    default: 524288,
    min: 1024,
    max: 16777216,
    description:
      'largest document an outbound fetch reads, in bytes (a larger content-length is refused unread, a longer body is cut)',
  }),
  OUTBOUND_MAX_CONCURRENT: env.int({
    default: 16,
    min: 1,
    max: 1000,
    description:
      'outbound fetches at once per process (4 at most to one host; more wait within their timeout, up to 4 times this many)',
  }),
};

export interface OutboundEnv {
  OUTBOUND_ALLOWLIST: string;
  OUTBOUND_TIMEOUT_MS: number;
  OUTBOUND_MAX_BYTES: number;
  OUTBOUND_MAX_CONCURRENT: number;
}

export const outboundPolicyFromEnv = (e: Pick<OutboundEnv, 'OUTBOUND_ALLOWLIST'>) =>
  new OutboundPolicy({ allowlist: e.OUTBOUND_ALLOWLIST });

export function outboundFetcherFromEnv(e: OutboundEnv): OutboundFetcher {
  const limits: Partial<OutboundLimits> = {
    timeoutMs: e.OUTBOUND_TIMEOUT_MS,
    connectTimeoutMs: Math.min(3000, e.OUTBOUND_TIMEOUT_MS),
    maxBytes: e.OUTBOUND_MAX_BYTES,
    maxConcurrent: e.OUTBOUND_MAX_CONCURRENT,
    maxQueued: 4 * e.OUTBOUND_MAX_CONCURRENT,
  };
  return new OutboundFetcher({ policy: outboundPolicyFromEnv(e), limits });
}
