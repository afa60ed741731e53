import type { AdapterPayload } from 'oidc-provider';
import type { OidcClientRecord } from './oidc-data.js';

/** Grant type names of client_metadata.grant_types (document 1's names) → the token endpoint's grant_type values. */
export const GRANT_TYPE_ALIASES: Readonly<Record<string, string>> = {
  authorization_code_verifier: 'authorization_code',
  device_code: 'urn:ietf:params:oauth:grant-type:device_code',
  token_exchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
};

const positiveInt = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined;

/**
 * The oidc-provider client metadata of an identity client: grant types from client_metadata.grant_types (only
 * those the server serves), the decrypted secret (confidential clients authenticate with Basic or body
 * credentials), `none` for public clients. Extra properties carry what the token server needs later (instance,
 * tenant, token lifetimes). A confidential client without a secret cannot authenticate: undefined.
 */
export function toProviderClient(
  c: OidcClientRecord,
  supportedGrantTypes: ReadonlySet<string>,
): AdapterPayload | undefined {
  const md = (c.clientMetadata ?? {}) as Record<string, unknown>;
  const grantTypes = [
    ...new Set(c.grantTypes.map((g) => GRANT_TYPE_ALIASES[g] ?? g).filter((g) => supportedGrantTypes.has(g))),
  ];

  // Browser flows need redirect URIs (client_metadata.urls.callbacks, matched exactly); a client naming
  // authorization_code or implicit without any gets neither.
  const urls = (md.urls ?? {}) as Record<string, unknown>;
  const callbacks = stringList(urls.callbacks);
  const code = grantTypes.includes('authorization_code') && callbacks.length > 0;
  const implicit = grantTypes.includes('implicit') && callbacks.length > 0;
  for (const g of ['authorization_code', 'implicit']) {
    if (!callbacks.length && grantTypes.includes(g)) grantTypes.splice(grantTypes.indexOf(g), 1);
  }
  // implicit: id_token, id_token token (OpenID Connect's implicit flow; `token` alone is not served)
  const responseTypes = [
    ...(code ? ['code'] : []),
    ...(implicit ? ['id_token', 'id_token token'] : []),
  ] as AdapterPayload['response_types'] & string[];

  const base: AdapterPayload = {
    client_id: c.id,
    client_name: c.clientName,
    grant_types: grantTypes,
    response_types: responseTypes,
    redirect_uris: responseTypes.length ? callbacks : [],
    post_logout_redirect_uris: stringList(urls.logout_urls),
    is_first_party: c.isFirstParty,
    instance_id: c.instanceId,
    tenant_id: c.tenantId ?? undefined,
    is_global: c.isGlobal,
    refresh_token_ttl: refreshTokenTtl(md),
    id_token_ttl: positiveInt((md.id_token as Record<string, unknown> | undefined)?.expiration_lifetime),
  };

  // A public client has no secret: it may never act as itself (client_credentials would hand a token to anyone
  // who knows its id).
  if (c.isPublic) {
    return {
      ...base,
      grant_types: grantTypes.filter((g) => g !== 'client_credentials'),
      token_endpoint_auth_method: 'none',
    };
  }
  if (!c.clientSecret) return undefined;
  return {
    ...base,
    token_endpoint_auth_method: 'client_secret_basic',
    client_secret: c.clientSecret,
    client_secret_expires_at: c.clientSecretExpiresAt
      ? Math.floor(new Date(c.clientSecretExpiresAt).getTime() / 1000)
      : 0,
  };
}

/** The strings of a metadata list (anything else in it is ignored). */
function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.length > 0) : [];
}

function refreshTokenTtl(md: Record<string, unknown>): number | undefined {
  const rt = md.refresh_token as Record<string, unknown> | undefined;
  if (!rt || rt.expiration_enabled !== true) return undefined;
  return positiveInt(rt.expiration_lifetime);
}

/** Names of the extra client metadata properties set above (oidc-provider must be told about them). */
export const EXTRA_CLIENT_PROPERTIES = [
  'instance_id',
  'tenant_id',
  'is_global',
  'refresh_token_ttl',
  'id_token_ttl',
  'is_first_party',
];
