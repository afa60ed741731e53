import { env } from '@gatehouse/config';

/** Environment variables of the bearer-token lib; apps validating tokens spread this into their env schema. */
export const bearerEnv = {
  BEARER_CACHE_TTL_SEC: env.int({
    default: 60,
    min: 0,
    max: 86400,
    description:
      'longest time an active token is trusted from the cache before /tokeninfo is asked again (never beyond its exp); 0: no cache',
  }),
  BEARER_NEGATIVE_TTL_SEC: env.int({
    default: 5,
    min: 0,
    max: 3600,
    description: 'how long an inactive (unknown, expired, revoked) token is remembered as inactive',
  }),
  BEARER_TIMEOUT_MS: env.int({
    default: 3000,
    min: 100,
    max: 60000,
    description: 'timeout of one /tokeninfo call; past it the request is answered 503',
  }),
  BEARER_CACHE_MAX: env.int({
    default: 10000,
    min: 1,
    description: 'most tokens kept in the validation cache (oldest evicted first)',
  }),
};
