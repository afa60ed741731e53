import { createHmac, randomBytes } from 'node:crypto';
import type { AdapterPayload, Configuration } from 'oidc-provider';

/**
 * A client as the token server reads it from the identity tables (structurally @gatehouse/identity-data's
 * OidcClientRecord; the management API builds one from a record it is about to store).
 */
export interface ClientForProvider {
  id: string;
  instanceId: string;
  tenantId: string | null;
  clientName: string;
  clientType: string | null;
  /** Plaintext secret; null for a public client. */
  clientSecret: string | null;
  clientSecretExpiresAt: Date | string | null;
  grantTypes: string[];
  clientMetadata: Record<string, unknown> | null;
  isPublic: boolean;
  isFirstParty: boolean;
  isGlobal: boolean;
}

/** Grant type names of client_metadata.grant_types (document 1's names) → the token endpoint's grant_type values. */
export const GRANT_TYPE_ALIASES: Readonly<Record<string, string>> = {
  authorization_code_verifier: 'authorization_code',
  device_code: 'urn:ietf:params:oauth:grant-type:device_code',
  token_exchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
  mfa_otp: 'http://auth0.com/oauth/grant-type/mfa-otp',
  mfa_recovery_code: 'http://auth0.com/oauth/grant-type/mfa-recovery-code',
};

/** Grant types the token endpoint serves. Others are unsupported_grant_type. */
export const SUPPORTED_GRANT_TYPES: ReadonlySet<string> = new Set([
  'authorization_code',
  'implicit',
  'urn:ietf:params:oauth:grant-type:device_code',
  'otp',
  'client_credentials',
  'password',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  // the second factor of a password or otp grant answered 403 mfa_required (Auth0's names)
  'http://auth0.com/oauth/grant-type/mfa-otp',
  'http://auth0.com/oauth/grant-type/mfa-recovery-code',
]);

/** The grant types the token server registers with oidc-provider itself (beside oidc-provider's own). */
export const REGISTERED_GRANT_TYPES = [
  'password',
  'otp',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'http://auth0.com/oauth/grant-type/mfa-otp',
  'http://auth0.com/oauth/grant-type/mfa-recovery-code',
] as const;

/**
 * The part of the token server's oidc-provider configuration that decides which client metadata is valid (a fresh
 * copy each call: oidc-provider keeps what it is given). The token server's provider and the management API's
 * validation (client-rules.ts) both use it.
 */
export function clientRules(): Pick<Configuration, 'clientAuthMethods' | 'clientDefaults' | 'responseTypes'> {
  return {
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    clientDefaults: {
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
    // code (with PKCE); implicit's id_token and id_token token for clients whose grant_types name implicit. Discovery
    // lists exactly these: no client is ever given `none` (toProviderClient below), so it is not offered.
    responseTypes: ['code', 'id_token', 'id_token token'],
  };
}

/** Names of the extra client metadata properties set below (oidc-provider must be told about them). */
export const EXTRA_CLIENT_PROPERTIES = [
  'instance_id',
  'tenant_id',
  'is_global',
  'refresh_token_ttl',
  'id_token_ttl',
  'is_first_party',
];

const positiveInt = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined;

/**
 * The oidc-provider client metadata of an identity client: grant types from client_metadata.grant_types (only
 * those the server serves), the decrypted secret (confidential clients authenticate with Basic or body
 * credentials), `none` for public clients. Extra properties carry what the token server needs later (instance,
 * tenant, token lifetimes). A confidential client without a secret cannot authenticate: undefined.
 * `now` (epoch ms) decides whether the secret has expired.
 */
export function toProviderClient(
  c: ClientForProvider,
  supportedGrantTypes: ReadonlySet<string> = SUPPORTED_GRANT_TYPES,
  now = Date.now(),
): AdapterPayload | undefined {
  const md = c.clientMetadata ?? {};
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
    // A native app's callbacks are custom schemes or loopback addresses (RFC 8252), which a web client may not use.
    application_type: c.clientType === 'native' ? 'native' : 'web',
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
  if (secretExpired(c, now)) {
    // oidc-provider refuses an expired secret itself, but only 15 s late (its clock tolerance), with 400 rather than
    // 401, and before it compares the secret (telling anyone who knows the client id that its secret expired). A
    // secret nobody knows in its place gets the answer of a wrong secret: 401 invalid_client, from the instant the
    // secret expires.
    return {
      ...base,
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret: expiredStandIn(c.id),
      client_secret_expires_at: 0,
    };
  }
  return {
    ...base,
    token_endpoint_auth_method: 'client_secret_basic',
    client_secret: c.clientSecret,
    client_secret_expires_at: c.clientSecretExpiresAt
      ? Math.ceil(new Date(c.clientSecretExpiresAt).getTime() / 1000)
      : 0,
  };
}

/** Key of the stand-ins of expired secrets: random, never leaves this process. */
const STAND_IN_KEY = randomBytes(32);
/** The same unguessable value for a client for the life of the process (oidc-provider keeps one Client per value). */
const expiredStandIn = (clientId: string) =>
  `expired.${createHmac('sha256', STAND_IN_KEY).update(clientId).digest('base64url')}`;

/** Whether the client's secret has expired at `now` (epoch ms): the one rule of every check of a secret. */
export function secretExpired(
  c: Pick<ClientForProvider, 'clientSecretExpiresAt'>,
  now = Date.now(),
): boolean {
  return c.clientSecretExpiresAt != null && new Date(c.clientSecretExpiresAt).getTime() <= now;
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
