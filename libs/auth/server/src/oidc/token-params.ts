import { GRANT_TYPE_ALIASES } from '@gatehouse/oidc-clients';
import { BodyError, one, type Params } from './request-body.js';

/** Token-endpoint parameter names of document 1 → OAuth names. */
const PARAM_ALIASES: Readonly<Record<string, string>> = {
  authorization_code: 'code',
  authorization_code_verifier: 'code_verifier',
};

/**
 * Normalize a token request before oidc-provider sees it: `audience` is RFC 8707 `resource`; document 1's grant type
 * and parameter aliases become their OAuth names; empty values are dropped; client_credentials needs an audience.
 */
export function normalizeTokenParams(input: Params): Params {
  const p: Params = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === '' || (Array.isArray(v) && v.length === 0)) continue;
    const name = PARAM_ALIASES[k] && input[PARAM_ALIASES[k]] === undefined ? PARAM_ALIASES[k] : k;
    p[name] = v;
  }

  const grant = one(p, 'grant_type');
  if (grant && GRANT_TYPE_ALIASES[grant]) p.grant_type = GRANT_TYPE_ALIASES[grant];

  if (p.audience !== undefined) {
    const audience = Array.isArray(p.audience) ? p.audience : [p.audience];
    if (p.resource !== undefined) {
      const resource = Array.isArray(p.resource) ? p.resource : [p.resource];
      if (audience.join(' ') !== resource.join(' ')) {
        throw new BodyError(
          400,
          'invalid_request',
          'audience and resource must name the same API when both are given',
        );
      }
    }
    p.resource = audience.length === 1 ? audience[0] : audience;
    delete p.audience;
  }

  if (one(p, 'grant_type') === 'client_credentials' && p.resource === undefined) {
    throw new BodyError(
      400,
      'invalid_request',
      'the client_credentials grant needs an audience (the API identifier)',
    );
  }
  return p;
}
