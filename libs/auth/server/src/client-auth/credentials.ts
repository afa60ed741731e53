import { one, type Params } from '../oidc/request-body.js';
import { OIDC_PROVIDER_BASIC, parseBasic, type BasicCredentials, type BasicRules } from './basic.js';

/**
 * client_secret_basic or client_secret_post, selected as oidc-provider selects them (lib/shared/client_auth.js):
 * one mechanism only (a Basic header and a `client_secret` together are refused), a `client_id` beside a Basic
 * header must name the same client. Undefined when oidc-provider would refuse the request or authenticate it by
 * another method (no secret: a public client, or none at all); its own answer is then the one to give.
 */
export function secretCredentials(
  authorization: string | undefined,
  clientId: string | undefined,
  clientSecret: string | undefined,
): BasicCredentials | undefined {
  if (authorization !== undefined) {
    if (clientSecret !== undefined) return undefined;
    const basic = parseBasic(authorization, OIDC_PROVIDER_BASIC);
    if (basic === undefined || (clientId !== undefined && clientId !== basic.id)) return undefined;
    return basic.id && basic.secret ? basic : undefined;
  }
  return clientId && clientSecret ? { id: clientId, secret: clientSecret } : undefined;
}

/**
 * Basic credentials, or `client_id` and `client_secret` in the body, never both: a Basic header is read alone (the
 * body's credentials are not), any other Authorization header gives none (/tokeninfo and introspection).
 */
export function basicOrPostCredentials(
  authorization: string,
  body: Params,
  rules: BasicRules,
): BasicCredentials | undefined {
  if (/^basic /i.test(authorization)) return parseBasic(authorization, rules);
  if (authorization) return undefined;
  const id = one(body, 'client_id');
  const secret = one(body, 'client_secret');
  return id && secret ? { id, secret } : undefined;
}

/**
 * The client's id and secret from a Basic header when it reads as one, else from the body (a header that is not
 * Basic credentials is passed over, not refused); either may be missing (POST /passwordless/start).
 */
export function basicElseBodyCredentials(
  authorization: string | undefined,
  body: Params,
  rules: BasicRules,
): { id?: string; secret?: string } {
  const basic = authorization === undefined ? undefined : parseBasic(authorization, rules);
  return basic ?? { id: one(body, 'client_id'), secret: one(body, 'client_secret') };
}
