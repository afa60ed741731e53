import { createSecretKey } from 'node:crypto';
import { errors, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';
import type { KeySet } from '../../keys/signing-keys.js';
import { oauthError } from '../oauth-errors.js';
import type { OidcData } from '../oidc-data.js';
import type { GatehouseClient } from './client.js';
import type { TokenLifetimes } from './ttl.js';

/**
 * The scopes a user holds in effect on the RBAC resource `indicator` (its permissions, roles and groups; on a
 * system resource, RBAC whatever its flag, those of the place the token acts in: OidcData.userScopes);
 * undefined when the token is not a user's or the resource is not RBAC (the client's grants alone count). The
 * token endpoint and the consent page both use it: the page shows only what the tokens will carry.
 */
export async function userRbacScopes(
  data: OidcData,
  clientId: string,
  indicator: string,
  accountId: string | undefined,
): Promise<Set<string> | undefined> {
  if (!accountId) return undefined;
  const access = await data.resourceAccess(clientId, indicator);
  if (!access || (!access.resource.rbacEnabled && !access.resource.isSystem)) return undefined;
  const client = await data.findClient(clientId);
  if (!client) return new Set();
  return (await data.userScopes(client, accountId, access.resource))?.scopes;
}

export interface ResourceDeps {
  data: OidcData;
  keys: KeySet;
  lifetimes: Pick<TokenLifetimes, 'accessToken'>;
}

export type ResourceServerInfo = (
  ctx: KoaContextWithOIDC,
  indicator: string,
  client: unknown,
) => Promise<ResourceServer>;

/**
 * oidc-provider's getResourceServerInfo: the resource a client asks for, if it is authorized on it, with the scopes
 * it was granted (a user's token of an RBAC resource: of those, what the user holds in effect), the resource's
 * token lifetime and its token format (a JWT signed HS256 with its secret or with a server key, else opaque).
 */
export function resourceServerInfo({ data, keys, lifetimes }: ResourceDeps): ResourceServerInfo {
  return async (ctx, indicator, client) => {
    const c = client as GatehouseClient;
    const access = await data.resourceAccess(c.clientId, indicator);
    if (!access) throw oauthError(errors.InvalidTarget, `unknown audience (resource indicator) ${indicator}`);
    if (!access.authorized) {
      throw oauthError(errors.AccessDenied, `the client is not authorized for the audience ${indicator}`);
    }
    // A user token (refresh, and every grant that knows its account here) of an RBAC resource: only what the
    // user holds in effect, of what the client was granted.
    const accountId = (ctx.oidc as { account?: { accountId?: string } } | undefined)?.account?.accountId;
    const effective = await userRbacScopes(data, c.clientId, indicator, accountId);
    const scope = (effective ? access.scopes.filter((s) => effective.has(s)) : access.scopes).join(' ');
    const params = ctx.oidc?.params as Record<string, unknown> | undefined;
    // client_credentials without `scope`: every scope the client was granted on the resource.
    if (params && params.grant_type === 'client_credentials' && !params.scope && scope) params.scope = scope;

    const { resource } = access;
    const info: ResourceServer = {
      scope,
      audience: indicator,
      accessTokenTTL: resource.tokenLifetime > 0 ? resource.tokenLifetime : lifetimes.accessToken,
      accessTokenFormat: 'jwt',
    };
    const alg = (resource.signingAlgorithm ?? '').toUpperCase();
    if (alg === 'HS256') {
      if (!resource.signingSecret)
        throw new Error(`resource ${resource.id} uses HS256 but has no signing secret`);
      info.jwt = { sign: { alg: 'HS256', key: createSecretKey(Buffer.from(resource.signingSecret)) } };
    } else if (alg === 'ES256') {
      info.jwt = { sign: { alg: 'ES256', kid: keys.active.ES256 } };
    } else if (alg === 'RS256') {
      info.jwt = { sign: { alg: 'RS256', kid: keys.active.RS256 } };
    } else {
      // Anything else ('opaque', 'none', ...): a reference token, checked at /tokeninfo.
      info.accessTokenFormat = 'opaque';
    }
    return info;
  };
}
