import { decodeJwt, errors as jose, jwtVerify, type JWTPayload } from 'jose';
import { errors, type TokenEndpointGrantContext } from 'oidc-provider';
import { findPgError, type Sql } from '@gatehouse/db';
import {
  findIdentityByAccount,
  findUserById,
  takeOverUnverifiedAccount,
  trustedIdentityProviders,
  type IdentityData,
  type InstanceSettings,
  type TrustedIdentityProvider,
} from '@gatehouse/identity-data';
import { oauthError } from './oauth-errors.js';
import { sourceOf, type AuthEvents } from '../events/auth-events.js';
import type { User } from './oidc-data.js';
import { userGrantHandler, type PasswordGrantDeps } from './password.grant.js';
import { signInClientOf, userMaySignInThrough } from './sign-in-policy.js';
import { UpstreamKeysError, type UpstreamKeys } from './upstream-keys.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const TOKEN_EXCHANGE_PARAMS = [
  'subject_token',
  'subject_token_type',
  'requested_token_type',
  'actor_token',
  'actor_token_type',
  'scope',
  'resource',
];

/** RFC 8693 section 3 token type identifiers. */
export const TOKEN_TYPES = {
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
} as const;
const SUBJECT_TOKEN_TYPES: ReadonlySet<string> = new Set(Object.values(TOKEN_TYPES));

/** Document 1 describes `subject_token_type` as the provider that issued the token (`google`, ...): such a name. */
const PROVIDER_KIND = /^[a-z][a-z0-9_.-]{0,63}$/;

/** Signature algorithms accepted on subject tokens: asymmetric only (a shared secret proves nothing to us). */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

export interface TokenExchangeDeps extends Omit<PasswordGrantDeps, 'login'> {
  sql: Sql;
  keys: UpstreamKeys;
  /** The audit trail (the sign-ins of exchanges). */
  events?: AuthEvents;
  /** Seconds of clock skew tolerated on `exp`, `nbf`, `iat`. */
  clockToleranceSec?: number;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const invalidGrant = (description: string) => oauthError(errors.InvalidGrant, description);
/**
 * Every refusal to sign in, link or create an account answers the same (as Auth0 and Keycloak do): whether the
 * account is linked elsewhere, of another tenant, or holds the address unverified is not told to the caller.
 */
const REFUSED = 'the identity provider cannot sign this account in here';
const refused = () => invalidGrant(REFUSED);

/** The tenant a token exchange signed its user in for (its identity provider's), for the token's tenant_id. */
const exchangedTenants = new WeakMap<object, string>();
export const exchangedTenantOf = (ctx: { oidc?: object } | undefined): string | undefined =>
  ctx?.oidc ? exchangedTenants.get(ctx.oidc) : undefined;
const clip = (v: unknown, max = 2000) => (typeof v === 'string' && v.length ? v.slice(0, max) : null);
const bool = (v: unknown) =>
  v === true || v === 'true' ? true : v === false || v === 'false' ? false : null;

interface GatehouseClient {
  clientId: string;
  instance_id: string;
  tenant_id?: string;
}

/**
 * RFC 8693 token exchange (`grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, alias `token_exchange`):
 * the `subject_token` is an ID token (or a JWT access token) of an identity provider of the client's tenant (any
 * tenant of its instance for a client without one), picked by its `iss`, verified against the provider's JWKS,
 * and matched to a user through User Identities; the answer is our tokens with the password grant's scope rules,
 * plus `issued_token_type`.
 */
export function tokenExchangeHandler(deps: TokenExchangeDeps) {
  const inner = userGrantHandler(deps, TOKEN_EXCHANGE_GRANT, (ctx) => audited(deps, ctx));
  return async function tokenExchange(ctx: TokenEndpointGrantContext): Promise<void> {
    const { params } = ctx.oidc;
    if (!str(params.subject_token))
      throw new errors.InvalidRequest("missing required parameter 'subject_token'");
    const type = str(params.subject_token_type);
    if (!type) throw new errors.InvalidRequest("missing required parameter 'subject_token_type'");
    if (!SUBJECT_TOKEN_TYPES.has(type) && (type.startsWith('urn:') || !PROVIDER_KIND.test(type))) {
      throw oauthError(
        errors.InvalidRequest,
        `unsupported subject_token_type ${type.slice(0, 100)}: use ${[...SUBJECT_TOKEN_TYPES].join(', ')} (or the kind of identity provider, e.g. google)`,
      );
    }
    const requested = str(params.requested_token_type);
    if (requested && requested !== TOKEN_TYPES.accessToken) {
      throw oauthError(errors.InvalidRequest, `requested_token_type must be ${TOKEN_TYPES.accessToken}`);
    }
    if (params.actor_token !== undefined || params.actor_token_type !== undefined) {
      throw oauthError(errors.InvalidRequest, 'delegation (actor_token) is not supported');
    }
    await inner(ctx);
    ctx.body = { ...(ctx.body as Record<string, unknown>), issued_token_type: TOKEN_TYPES.accessToken };
  };
}

/** The upstream issuer a token exchange was for (a trusted provider's), for its audit events. */
const exchangedIssuers = new WeakMap<object, string>();
export const exchangedIssuerOf = (ctx: { oidc?: object } | undefined): string | undefined =>
  ctx?.oidc ? exchangedIssuers.get(ctx.oidc) : undefined;

/** `exchange`, its sign-in recorded (the user, or why not: never the subject token). */
async function audited(deps: TokenExchangeDeps, ctx: TokenEndpointGrantContext): Promise<User> {
  const client = ctx.oidc.client as unknown as GatehouseClient;
  const base = {
    instanceId: client.instance_id,
    clientId: client.clientId,
    method: 'token_exchange',
    source: sourceOf(ctx.req),
  };
  try {
    const user = await exchange(deps, ctx);
    deps.events?.signin({
      ...base,
      tenantId: user.tenantId,
      userId: user.id,
      details: { upstream_issuer: exchangedIssuerOf(ctx) ?? null },
    });
    return user;
  } catch (err) {
    const description = (err as { error_description?: string }).error_description;
    deps.events?.signin({
      ...base,
      tenantId: client.tenant_id ?? null,
      reason:
        description === 'the user is blocked'
          ? 'blocked'
          : description === REFUSED
            ? 'client_not_allowed'
            : 'upstream_failed',
      details: { upstream_issuer: exchangedIssuerOf(ctx) ?? null },
    });
    throw err;
  }
}

/** The user of the subject token (created or linked on first sign-in), or an invalid_grant. */
async function exchange(deps: TokenExchangeDeps, ctx: TokenEndpointGrantContext): Promise<User> {
  const { params } = ctx.oidc;
  const client = ctx.oidc.client as unknown as GatehouseClient;
  const token = String(params.subject_token);
  const type = String(params.subject_token_type);

  let unverified: JWTPayload;
  try {
    unverified = decodeJwt(token);
  } catch {
    throw invalidGrant('the subject token is not a JWT');
  }
  const iss = str(unverified.iss);
  if (!iss) throw invalidGrant('the subject token has no issuer (iss)');

  let providers = await trustedIdentityProviders(deps.sql, client.instance_id, client.tenant_id ?? null, iss);
  if (!SUBJECT_TOKEN_TYPES.has(type)) providers = providers.filter((p) => p.identity_provider === type);
  if (!providers.length) {
    throw invalidGrant(
      `no enabled identity provider of the client's tenant has the issuer ${iss.slice(0, 200)}`,
    );
  }
  const disabled = await disabledKinds(deps.sql, client.instance_id);
  const allowed = providers.filter((p) => !disabled.has(p.identity_provider));
  if (!allowed.length) {
    throw invalidGrant(`identity provider ${providers[0].identity_provider} is disabled in this instance`);
  }
  const issuer = iss.replace(/\/+$/, '');
  exchangedIssuers.set(ctx.oidc, issuer.slice(0, 500));
  // Providers that name our client in the token's aud first; none: the first one, whose check explains the aud.
  let candidates = allowed.filter((p) => audienceMatches(unverified, p.client_id, type));
  if (!candidates.length) candidates = [allowed[0]];
  if (candidates.length > 1) {
    // Several tenants trust this issuer (a global client): an account already linked is tried first with the
    // providers of its user's tenant, so another tenant's provider copying the issuer cannot shadow them.
    const owner = await linkedTenant(deps.sql, client.instance_id, issuer, str(unverified.sub));
    if (owner !== undefined) {
      candidates = [
        ...candidates.filter((p) => p.tenant_id === owner),
        ...candidates.filter((p) => p.tenant_id !== owner),
      ];
    }
  }

  // The first provider whose keys verify the token speaks for it; none: the first provider's reason.
  let provider: TrustedIdentityProvider | undefined;
  let claims: JWTPayload | undefined;
  let firstError: unknown;
  for (const candidate of candidates) {
    try {
      claims = await verify(deps, candidate, token, iss, type);
      provider = candidate;
      break;
    } catch (err) {
      firstError ??= err;
    }
  }
  if (!provider || !claims) throw firstError;
  const sub = str(claims.sub);
  if (!sub || sub.length > 255) throw invalidGrant('the subject token has no valid subject (sub)');

  const user = await matchUser(deps.sql, provider, issuer, sub, claims, client);
  exchangedTenants.set(ctx.oidc, provider.tenant_id);
  return user;
}

/** The tenant of the user the account `sub` at `issuer` is linked to (null: a user without one), or undefined. */
async function linkedTenant(
  sql: Sql,
  instanceId: string,
  issuer: string,
  sub: string | undefined,
): Promise<string | null | undefined> {
  if (!sub) return undefined;
  const row = await sql.one<{ tenant_id: string | null }>(
    `SELECT u.tenant_id FROM user_identities ui JOIN users u ON u.id = ui.user_id
      WHERE ui.instance_id = $1 AND ui.issuer = $2 AND ui.provider_user_id = $3`,
    [instanceId, issuer, sub],
  );
  return row ? row.tenant_id : undefined;
}

/** Kinds of identity provider the instance turned off (`instance_metadata.identity_providers`, enabled: false). */
async function disabledKinds(sql: Sql, instanceId: string): Promise<Set<string>> {
  const row = await sql.one<{ settings: InstanceSettings | null }>(
    `SELECT settings FROM instances WHERE id = $1`,
    [instanceId],
  );
  const list = row?.settings?.identity_providers;
  return new Set(
    (Array.isArray(list) ? list : [])
      .filter(
        (e) => e && typeof e === 'object' && e.enabled === false && typeof e.identity_provider === 'string',
      )
      .map((e) => e.identity_provider),
  );
}

/** `aud` names our client at the provider; for an access token `azp` or `client_id` may name it instead. */
function audienceMatches(claims: JWTPayload, clientId: string, type: string): boolean {
  const aud = Array.isArray(claims.aud) ? claims.aud : claims.aud !== undefined ? [claims.aud] : [];
  if (aud.includes(clientId)) return true;
  return type === TOKEN_TYPES.accessToken && (claims.azp === clientId || claims.client_id === clientId);
}

async function verify(
  deps: TokenExchangeDeps,
  provider: TrustedIdentityProvider,
  token: string,
  iss: string,
  type: string,
): Promise<JWTPayload> {
  try {
    const uri = await deps.keys.jwksUriOf(provider);
    const { payload } = await jwtVerify(token, deps.keys.resolver(uri), {
      issuer: iss,
      algorithms: ALGORITHMS,
      requiredClaims: ['sub', 'exp'],
      clockTolerance: deps.clockToleranceSec ?? 30,
    });
    if (!audienceMatches(payload, provider.client_id, type)) {
      throw invalidGrant(
        "the subject token was not issued for this application's client at the identity provider (aud)",
      );
    }
    return payload;
  } catch (err) {
    if (err instanceof errors.OIDCProviderError) throw err;
    // One answer whatever went wrong upstream (the detail is in the log): no oracle of what is behind a URL.
    if (err instanceof UpstreamKeysError) throw invalidGrant('the identity provider could not be reached');
    if (err instanceof jose.JWTExpired) throw invalidGrant('the subject token has expired');
    if (err instanceof jose.JWTClaimValidationFailed) {
      throw invalidGrant(`the subject token's ${err.claim} claim is not valid: ${err.reason}`);
    }
    if (err instanceof jose.JWKSNoMatchingKey) {
      throw invalidGrant("no key of the identity provider matches the subject token's kid");
    }
    if (err instanceof jose.JOSEAlgNotAllowed)
      throw invalidGrant('the subject token is not signed with an accepted algorithm');
    if (err instanceof jose.JOSEError) throw invalidGrant(`the subject token is not valid (${err.code})`);
    throw err;
  }
}

function identityData(claims: JWTPayload): IdentityData {
  return {
    profile_picture: clip(claims.picture),
    username: clip(claims.preferred_username, 320),
    user_fullname: clip(claims.name, 500),
    email: clip(claims.email, 320),
    email_verified: bool(claims.email_verified),
    phone: clip(claims.phone_number, 50),
    phone_verified: bool(claims.phone_number_verified),
  };
}

/**
 * The user of account `sub` at `issuer`, always a user of the provider's tenant: the one its User Identity names;
 * else, when the provider verified the e-mail, the user of that tenant holding the address (linked now; one that
 * never verified it is taken over first, see takeOverUnverifiedAccount); else a new user of the provider's tenant.
 * An identity linked to a user of another tenant (or of none), an address held outside the tenant, or an
 * unverified address already held: the same invalid_grant, and nothing is written. A blocked user, or one the
 * client may not sign in, gets an invalid_grant too.
 *
 * Exchanges of one account run one at a time (a transaction-scoped advisory lock taken before the identity is
 * read), so a first sign-in always sees the identity an earlier one committed. Without it the two paths take their
 * locks in opposite orders (a known identity: its row, then the user row; a first sign-in by e-mail: the user row,
 * then it waits on the identity's unique key another exchange just updated) and PostgreSQL breaks the deadlock
 * with an error. Accounts sharing one e-mail still race for the new user's unique address: the loser tries again
 * and links to the winner's user; a deadlock (a takeover against a sign-in of the same user) is tried again too.
 */
async function matchUser(
  sql: Sql,
  provider: TrustedIdentityProvider,
  issuer: string,
  sub: string,
  claims: JWTPayload,
  client: GatehouseClient,
): Promise<User> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sql.transaction(async (tx) => {
        await tx.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
          `gatehouse:token-exchange:${client.instance_id}:${issuer}:${sub}`,
        ]);
        return matchUserOnce(tx, provider, issuer, sub, claims, client);
      });
    } catch (err) {
      const code = findPgError(err)?.code;
      // Another exchange (of an account with the same e-mail) committed first: the next attempt finds its user.
      if (attempt < MATCH_ATTEMPTS && (code === '23505' || code === '40P01' || code === '40001')) continue;
      if (code === '23505') throw refused();
      throw err;
    }
  }
}

/** Attempts at matching a user when concurrent exchanges conflict (unique violation, deadlock). */
const MATCH_ATTEMPTS = 3;

/**
 * The user of the instance whose address the provider's token names, linked to it: only when the provider verified
 * the address and the user is of the provider's tenant (else refused); null when no user has the address.
 */
async function userHoldingEmail(
  tx: Sql,
  instanceId: string,
  tenantId: TrustedIdentityProvider['tenant_id'],
  data: ReturnType<typeof identityData>,
): Promise<User | null> {
  if (!data.email) return null;
  const holder = await tx.one<{ id: string; tenant_id: string | null; email_verified: boolean }>(
    `SELECT u.id, u.tenant_id, u.email_verified FROM users u
      WHERE u.instance_id = $1 AND lower(u.user_email) = lower($2)
      FOR UPDATE`,
    [instanceId, data.email],
  );
  if (!holder) return null;
  // Linked by e-mail only when the provider verified it, and only to a user of the provider's tenant.
  if (data.email_verified !== true || holder.tenant_id !== tenantId) throw refused();
  // The local account never proved the address, its owner just did: nothing set up before survives.
  if (!holder.email_verified) await takeOverUnverifiedAccount(tx, holder.id);
  const found = await findUserById(tx, holder.id);
  if (!found) throw refused();
  return found;
}

/** A new user of the provider's tenant, from the token's claims; its id. */
async function createUser(
  tx: Sql,
  instanceId: string,
  tenantId: TrustedIdentityProvider['tenant_id'],
  data: ReturnType<typeof identityData>,
  claims: JWTPayload,
): Promise<string> {
  const [created] = await tx.rows<{ id: string }>(
    `INSERT INTO users (instance_id, tenant_id, user_email, email_verified, name, given_name, family_name,
                        nickname, picture, locale)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
    [
      instanceId,
      tenantId,
      data.email,
      data.email !== null && data.email_verified === true,
      data.user_fullname,
      clip(claims.given_name, 500),
      clip(claims.family_name, 500),
      clip(claims.nickname, 500),
      data.profile_picture,
      clip(claims.locale, 35),
    ],
  );
  return created.id;
}

async function matchUserOnce(
  tx: Sql,
  provider: TrustedIdentityProvider,
  issuer: string,
  sub: string,
  claims: JWTPayload,
  client: GatehouseClient,
): Promise<User> {
  const data = identityData(claims);
  // A tenant's provider speaks for the users of its tenant only (Keycloak's realms, Auth0's organizations).
  const tenantId = provider.tenant_id;
  const admit = (user: User | null | undefined): User => {
    if (!user) throw invalidGrant('the user of this identity no longer exists');
    if (user.tenantId !== tenantId) throw refused();
    if (user.isBlocked) throw invalidGrant('the user is blocked');
    if (!userMaySignInThrough(user, signInClientOf(client))) {
      throw invalidGrant("the subject token's user cannot sign in through this client (another tenant)");
    }
    return user;
  };

  const identity = await findIdentityByAccount(tx, client.instance_id, issuer, sub);
  let user: User;
  if (identity) {
    user = admit(await findUserById(tx, identity.user_id));
    await tx.exec(
      `UPDATE user_identities SET profile = $2::jsonb, last_sign_in_at = now(), updated_at = now(),
              identity_provider_id = coalesce(identity_provider_id, $3)
        WHERE id = $1`,
      [identity.id, JSON.stringify(data), provider.id],
    );
  } else {
    const found = await userHoldingEmail(tx, client.instance_id, tenantId, data);
    user = admit(
      found ?? (await findUserById(tx, await createUser(tx, client.instance_id, tenantId, data, claims))),
    );
    await tx.exec(
      `INSERT INTO user_identities (instance_id, user_id, provider, identity_provider_id, issuer, provider_user_id,
                                    profile, last_sign_in_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, now())`,
      [
        client.instance_id,
        user.id,
        provider.identity_provider,
        provider.id,
        issuer,
        sub,
        JSON.stringify(data),
      ],
    );
  }
  await tx.exec(
    `UPDATE users SET last_login_at = now(), login_count = login_count + 1, failed_login_count = 0 WHERE id = $1`,
    [user.id],
  );
  return user;
}
