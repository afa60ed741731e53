import Provider, { type Configuration } from 'oidc-provider';
import { SUPPORTED_GRANT_TYPES } from '@gatehouse/oidc-clients';
import type { KeySet } from '../keys/signing-keys.js';
import { claimsConfig } from './config/claims.js';
import { clientMetadataConfig, clientStore, type StoreDeps } from './config/clients.js';
import { featuresConfig } from './config/features.js';
import { registerGrants, type GrantDeps } from './config/grants.js';
import { interactionsConfig } from './config/interactions.js';
import { keysConfig } from './config/keys.js';
import { onServerError, useErrorShape, usePageHeaders, type ProviderLog } from './config/middleware.js';
import { renderError } from './config/pages.js';
import { resourceServerInfo } from './config/resources.js';
import { routesConfig } from './config/routes.js';
import { accountConfig, refreshConfig } from './config/tokens.js';
import { ttlConfig, type TokenLifetimes } from './config/ttl.js';

export { CLAIMS, OIDC_SCOPES, userClaims } from './config/claims.js';
export { userRbacScopes } from './config/resources.js';
export { ROUTES } from './config/routes.js';
export type { TokenLifetimes } from './config/ttl.js';

/** Grant types the token endpoint serves (@gatehouse/oidc-clients: the management API validates clients by them). */
export { SUPPORTED_GRANT_TYPES };

/** What the token server's provider is built from: what each part of its configuration (config/) needs. */
export interface ProviderDeps extends StoreDeps, GrantDeps {
  issuer: string;
  keys: KeySet;
  lifetimes: TokenLifetimes;
  /** Trust X-Forwarded-* (behind a TLS-terminating proxy). */
  proxy?: boolean;
  /** Keys of the signed cookies of browser sessions and interactions (current first), the same on every replica. */
  cookieKeys: Buffer[];
  log: ProviderLog;
}

/**
 * Build the oidc-provider instance of the token server. Everything it knows comes from PostgreSQL (clients,
 * resources, users, signing keys) and its artifacts go through our adapters; the instance itself is stateless,
 * so a new one can replace it (e.g. after a key rotation) at any time. Its configuration is composed of one part
 * per concern (config/); each part is given only what it needs.
 */
export function createProvider(deps: ProviderDeps): Provider {
  const { data, keys, lifetimes, log } = deps;
  const getResourceServerInfo = resourceServerInfo({ data, keys, lifetimes });
  const store = clientStore(deps);
  const render = renderError((obj, msg) => log.warn(obj, msg));

  const configuration: Configuration = {
    ...store.config,
    ...routesConfig(),
    ...claimsConfig(),
    ...clientMetadataConfig(),
    ...keysConfig(keys, deps.cookieKeys),
    ...interactionsConfig(data, deps.mfa),
    ...featuresConfig(data, getResourceServerInfo),
    ...accountConfig(data),
    ...refreshConfig(),
    ...ttlConfig(lifetimes),
    clientBasedCORS: (_ctx, origin, client) => browserClientOrigin(client, origin),
    renderError: render,
  };

  const provider = new Provider(deps.issuer, configuration);
  provider.proxy = deps.proxy ?? false;
  store.install(provider);
  registerGrants(provider, deps, getResourceServerInfo);
  usePageHeaders(provider);
  useErrorShape(provider, render, log);
  onServerError(provider, log);
  return provider;
}

/**
 * CORS at the token server's client endpoints (token, userinfo, revocation, introspection): only a public client
 * (a browser application such as the admin console: no secret, PKCE) from the origin of one of its own callback or
 * sign-out URLs. Every other origin, and every confidential client, gets no CORS header (as before).
 */
export function browserClientOrigin(
  client: {
    readonly clientAuthMethod?: string;
    readonly redirectUris?: readonly string[];
    readonly postLogoutRedirectUris?: readonly string[];
  },
  origin: string,
): boolean {
  if (client.clientAuthMethod !== 'none') return false;
  return [...(client.redirectUris ?? []), ...(client.postLogoutRedirectUris ?? [])].some((u) => {
    try {
      return new URL(u).origin === origin;
    } catch {
      return false;
    }
  });
}
