import type { Configuration } from 'oidc-provider';
import type { KeySet } from '../../keys/signing-keys.js';

/**
 * The signing keys (ID tokens, JWT access tokens of RS256/ES256 resources) and the keys of the signed cookies of
 * browser sessions and interactions (current first, the same on every replica).
 */
export const keysConfig = (
  keys: KeySet,
  cookieKeys: Buffer[],
): Pick<Configuration, 'jwks' | 'cookies' | 'enabledJWA'> => ({
  jwks: { keys: keys.keys.map((k) => k.privateJwk) as never },
  cookies: {
    keys: cookieKeys,
    long: { httpOnly: true, sameSite: 'lax' },
    short: { httpOnly: true, sameSite: 'lax' },
  },
  // ID tokens are signed RS256 (clientDefaults; clients cannot choose another): discovery offers only that.
  enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
});
