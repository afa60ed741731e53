import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';
import type Provider from 'oidc-provider';
import { clientBySecret, publicClientById } from '../client-auth/index.js';
import type { ClientResourceAccess, OidcClientRecord, OidcData, User } from '../oidc/oidc-data.js';
import { CLAIMS } from '../oidc/config/claims.js';

/**
 * Document 1's introspection response, plus `aud`, `sub`, `iss` (RFC 7662), `tenant_id` when the client has one,
 * `acting_tenant_id` when a user token of the management API acts in one tenant, and
 * the instance of the token's client: `instance_id` and `default_instance` (whether it is the default instance).
 */
export interface ActiveTokenInfo {
  active: true;
  token_type: 'Bearer' | 'refresh_token' | 'id_token';
  client_id: string;
  scope: string;
  username?: string;
  exp?: string;
  iat?: string;
  nbf?: string;
  subject: string;
  sub: string;
  jti?: string;
  aud?: string | string[];
  iss: string;
  tenant_id?: string;
  /**
   * A user token of the management API: the tenant it acts in (its user's tenant, or the tenant whose admin role
   * gives its scopes); the management API confines it to that tenant as a client that is not global.
   */
  acting_tenant_id?: string;
  instance_id: string;
  default_instance: boolean;
}

export type TokenInfo = ActiveTokenInfo | { active: false };

export const INACTIVE: TokenInfo = Object.freeze({ active: false as const });

export const TOKENINFO_FIELDS = [
  'active',
  'token_type',
  'client_id',
  'scope',
  'username',
  'exp',
  'iat',
  'nbf',
  'subject',
  'sub',
  'jti',
  'aud',
  'iss',
  'tenant_id',
  'acting_tenant_id',
  'instance_id',
  'default_instance',
] as const;

/**
 * Claims of an ID token that /tokeninfo answers beside document 1's fields (token_type_hint=id_token): the identity
 * claims (OIDC's standard claims and document 1's `phone_verified`) and those of the sign-in itself.
 */
export const ID_TOKEN_CLAIMS = [
  ...Object.values(CLAIMS).flat(),
  'azp',
  'nonce',
  'auth_time',
  'acr',
  'amr',
  'sid',
  'at_hash',
  'c_hash',
  's_hash',
] as const;

/** What a JWT's registered claims become in document 1's shape (or leave out): never copied as they are. */
const REGISTERED = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti']);

export interface TokenInfoDeps {
  /** The current oidc-provider instance (it may be replaced after a key rotation). */
  provider(): Provider;
  /** Public keys currently published at /jwks. */
  publicJwks(): JSONWebKeySet;
  /** Reload the key set from the database (a token signed by key `kid`, which this process does not know yet). */
  reloadKeys(kid: string | undefined): Promise<boolean>;
  data: OidcData;
  issuer: string;
  /** Lifetime of access tokens for a resource without its own token_lifetime (AUTH_ACCESS_TOKEN_TTL_SEC). */
  defaultAccessTokenTtlSec: number;
  clockToleranceSec?: number;
}

/** Verified asymmetric JWTs kept in memory (the signature check is the costly part of /tokeninfo). */
const VERIFIED_MAX = 5_000;

/** Seconds an access token's exp - iat may exceed its resource's lifetime (issuance rounds to whole seconds). */
const LIFETIME_SLACK_SEC = 5;

/** The one audience of a token (a string, or an array of exactly one string); undefined otherwise. */
function singleAudience(aud: unknown): string | undefined {
  if (typeof aud === 'string') return aud || undefined;
  if (Array.isArray(aud) && aud.length === 1 && typeof aud[0] === 'string') return aud[0] || undefined;
  return undefined;
}

interface OpaqueToken {
  kind: string;
  clientId: string;
  accountId?: string;
  scope?: string;
  exp?: number;
  iat?: number;
  jti: string;
  aud?: string | string[];
  grantId?: string;
  consumed?: unknown;
  extra?: Record<string, unknown>;
}

const iso = (epoch: unknown) =>
  typeof epoch === 'number' ? new Date(epoch * 1000).toISOString() : undefined;
/** Three base64url segments: a JWS in compact form (what this server issues as JWT access tokens). */
export const looksLikeJwt = (t: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(t);
const usernameOf = (u: User) => u.userEmail ?? u.userName ?? u.phoneNumber ?? undefined;

/**
 * /tokeninfo: document 1's token introspection for every access token the server issues, opaque (looked up
 * through oidc-provider's models) and JWT (signature, issuer and expiry checked here, since oidc-provider neither
 * stores nor introspects them), plus refresh tokens. A token is active only while its client exists, its user
 * (if any) exists and is not blocked, and its grant (if any) was not revoked.
 */
export class TokenInfoService {
  private jwks?: ReturnType<typeof createLocalJWKSet>;
  private jwksSource?: JSONWebKeySet;
  /**
   * RS256/ES256 tokens whose signature, issuer, audience and type were verified, by the exact token string (the
   * signature covers every byte, so only that same token can hit): a resource server asks about one token many
   * times. Bounded (least recently verified out), dropped when the key set changes; expiry and everything that can
   * change (client, resource, grant, user, scopes) is checked again on every call.
   */
  private readonly verified = new Map<
    string,
    { header: ReturnType<typeof decodeProtectedHeader>; payload: JWTPayload }
  >();
  /** The key set the memo's signatures were checked against: a reload (rotation, retirement) starts over. */
  private verifiedKeys?: JSONWebKeySet;

  constructor(private readonly deps: TokenInfoDeps) {}

  /**
   * Describe `token`. `caller` is the client the request authenticated as, if any: when the token is that client's
   * own, its record is not read twice.
   */
  async introspect(token: string, hint?: string, caller?: OidcClientRecord): Promise<TokenInfo> {
    if (!token || token.length > 8192) return INACTIVE;
    if (looksLikeJwt(token)) return this.introspectJwt(token, caller);
    return this.introspectOpaque(token, hint, caller);
  }

  private client(clientId: string, caller?: OidcClientRecord): Promise<OidcClientRecord | undefined> {
    return caller?.id === clientId ? Promise.resolve(caller) : this.deps.data.findClient(clientId);
  }

  private keySet() {
    const current = this.deps.publicJwks();
    if (!this.jwks || current !== this.jwksSource) {
      this.jwksSource = current;
      this.jwks = createLocalJWKSet(current);
    }
    return this.jwks;
  }

  private async introspectJwt(token: string, caller?: OidcClientRecord): Promise<TokenInfo> {
    const decoded = this.decodeJwt(token);
    if (!decoded) return INACTIVE;
    const { header, payload: unverified } = decoded;
    // Only what this server issues: our iss, one audience, a client, an expiry. A token naming several audiences
    // (e.g. a resource whose secret the caller knows, plus the management API) is never ours.
    if (unverified.iss !== this.deps.issuer || typeof unverified.client_id !== 'string') return INACTIVE;
    const aud = singleAudience(unverified.aud);
    if (!aud || typeof unverified.exp !== 'number' || typeof unverified.iat !== 'number') return INACTIVE;
    const { client, access } = await this.clientAndAccess(unverified.client_id, aud, caller);
    // The audience must be a resource of the client's instance that the client is (still) authorized on.
    if (!client || !access?.authorized) return INACTIVE;
    const payload = await this.verifyForResource(token, header, aud, access.resource);
    if (!payload) return INACTIVE;

    const grantId = typeof payload.grant_id === 'string' ? payload.grant_id : undefined;
    if (grantId && !(await this.liveGrant(grantId))) return INACTIVE;
    const sub = String(payload.sub ?? client.id);
    let user: User | undefined;
    if (sub !== client.id) {
      user = await this.deps.data.cachedUser(sub);
      // the user must still exist, be unblocked and belong to the client's instance
      if (!user || user.isBlocked || user.instanceId !== client.instanceId) return INACTIVE;
    }
    const { scope, actingTenantId } = await this.currentScope(
      typeof payload.scope === 'string' ? payload.scope : '',
      client,
      access,
      user,
    );
    return {
      active: true,
      token_type: 'Bearer',
      client_id: client.id,
      scope,
      ...(user ? { username: usernameOf(user) } : {}),
      exp: iso(payload.exp),
      iat: iso(payload.iat),
      nbf: iso(payload.nbf ?? payload.iat),
      subject: sub,
      sub,
      jti: payload.jti,
      aud,
      iss: this.deps.issuer,
      ...(client.tenantId ? { tenant_id: client.tenantId } : {}),
      ...(actingTenantId ? { acting_tenant_id: actingTenantId } : {}),
      ...(await this.instanceOf(client)),
    };
  }

  /** The header and claims of `token`, not verified (from the memo when it was verified before); undefined if malformed. */
  private decodeJwt(
    token: string,
  ): { header: ReturnType<typeof decodeProtectedHeader>; payload: JWTPayload } | undefined {
    // verified before: its header and claims are known (what can change is checked by the caller all the same)
    const known = this.verifiedFor(token);
    if (known) return known;
    try {
      return { header: decodeProtectedHeader(token), payload: decodeJwt(token) };
    } catch {
      return undefined;
    }
  }

  /**
   * The verified claims of an access token for `resource` (audience `aud`), or undefined: signed with the
   * resource's own algorithm and key, our issuer, `at+jwt`, and no longer-lived than the resource lets this server
   * issue.
   */
  private async verifyForResource(
    token: string,
    header: ReturnType<typeof decodeProtectedHeader>,
    aud: string,
    resource: ClientResourceAccess['resource'],
  ): Promise<JWTPayload | undefined> {
    const alg = String(header.alg ?? '');
    // The token's algorithm must be the resource's own: an HS256 secret verifies only tokens of that one
    // resource, and never a token of a resource signed with our keys (or opaque).
    if (alg !== (resource.signingAlgorithm ?? '').toUpperCase()) return undefined;
    let payload: JWTPayload;
    try {
      const opts = {
        issuer: this.deps.issuer,
        audience: aud,
        typ: 'at+jwt',
        requiredClaims: ['exp', 'iat'],
        clockTolerance: this.deps.clockToleranceSec ?? 0,
      };
      if (alg === 'HS256') {
        if (!resource.signingSecret || resource.isSystem) return undefined;
        const key = Buffer.from(resource.signingSecret);
        ({ payload } = await jwtVerify(token, key, { ...opts, algorithms: ['HS256'] }));
      } else if (alg === 'RS256' || alg === 'ES256') {
        payload = await this.verifyAsymmetric(token, header.kid, alg, opts);
      } else {
        return undefined;
      }
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return undefined;
      throw err;
    }
    // No longer-lived than the resource lets this server issue (a few seconds of slack for clock rounding).
    const maxLifetime =
      resource.tokenLifetime > 0 ? resource.tokenLifetime : this.deps.defaultAccessTokenTtlSec;
    if ((payload.exp as number) - (payload.iat as number) > maxLifetime + LIFETIME_SLACK_SEC)
      return undefined;
    return payload;
  }

  /**
   * An ID token this server issued to `callerClientId` (token_type_hint=id_token): our signature (the keys
   * published at /jwks; an ID token is never signed with a client's or a resource's secret), our `iss`, `aud`
   * exactly the caller (an ID token is for the client it was issued to, OIDC Core 3.1.3.7: a resource server has
   * no business reading another client's), not expired, and its user still there, unblocked, of the caller's
   * instance. Active: document 1's fields and the token's claims; anything else, an access token included, is
   * inactive.
   */
  async introspectIdToken(token: string, callerClientId: string): Promise<TokenInfo> {
    if (!token || token.length > 8192 || !looksLikeJwt(token)) return INACTIVE;
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return INACTIVE;
    }
    const alg = String(header.alg ?? '');
    // an access token (RFC 9068 typ at+jwt) is no ID token, whoever it is for
    if (
      !['RS256', 'ES256'].includes(alg) ||
      String(header.typ ?? 'JWT')
        .toLowerCase()
        .endsWith('at+jwt')
    ) {
      return INACTIVE;
    }
    let payload: JWTPayload;
    try {
      payload = await this.verifyWithKeys(token, header.kid, alg, {
        issuer: this.deps.issuer,
        audience: callerClientId,
        requiredClaims: ['exp', 'iat', 'sub'],
        clockTolerance: this.deps.clockToleranceSec ?? 0,
      });
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return INACTIVE;
      throw err;
    }
    if (singleAudience(payload.aud) !== callerClientId) return INACTIVE;
    // access tokens carry client_id (RFC 9068); ID tokens do not
    if (payload.client_id !== undefined || payload.scope !== undefined) return INACTIVE;
    const client = await this.deps.data.findClient(callerClientId);
    if (!client) return INACTIVE;
    const sub = String(payload.sub);
    const user = await this.deps.data.cachedUser(sub);
    if (!user || user.isBlocked || user.instanceId !== client.instanceId) return INACTIVE;
    const claims = Object.fromEntries(Object.entries(payload).filter(([k]) => !REGISTERED.has(k)));
    return {
      ...claims,
      active: true,
      token_type: 'id_token',
      client_id: client.id,
      scope: '',
      username: usernameOf(user),
      exp: iso(payload.exp),
      iat: iso(payload.iat),
      nbf: iso(payload.nbf ?? payload.iat),
      subject: sub,
      sub,
      ...(payload.jti ? { jti: payload.jti } : {}),
      aud: callerClientId,
      iss: this.deps.issuer,
      ...(client.tenantId ? { tenant_id: client.tenantId } : {}),
      ...(await this.instanceOf(client)),
    };
  }

  /** Whether the token's grant was not revoked (through the cache of live grants). */
  private liveGrant(grantId: string): Promise<boolean> {
    return this.deps.data.liveGrant(grantId, (id) => this.deps.provider().Grant.adapter.find(id));
  }

  /** `instance_id` and `default_instance` of an active token: its client's instance. */
  private async instanceOf(client: OidcClientRecord) {
    return {
      instance_id: client.instanceId,
      default_instance: await this.deps.data.isDefaultInstance(client.instanceId),
    };
  }

  /** The client (the caller's own record when it is the token's client) and its access to the audience. */
  private async clientAndAccess(
    clientId: string,
    aud: string,
    caller?: OidcClientRecord,
  ): Promise<{ client?: OidcClientRecord; access?: ClientResourceAccess }> {
    if (caller?.id === clientId)
      return { client: caller, access: await this.deps.data.resourceAccess(clientId, aud) };
    return this.deps.data.clientAndAccess(clientId, aud);
  }

  /**
   * The scopes of an issued token that still hold: those the client is granted on the resource now, and for a
   * user token of an RBAC resource (a system resource always) those the user still holds in effect. A revoked
   * permission is gone at once. `actingTenantId`: the tenant a user token of the management API is confined to.
   * A client's own token reads nothing more than before.
   */
  private async currentScope(
    issued: string,
    client: OidcClientRecord,
    access: ClientResourceAccess,
    user?: User,
  ): Promise<{ scope: string; actingTenantId: string | null }> {
    const granted = new Set(access.scopes);
    let kept = issued.split(' ').filter((s) => s && granted.has(s));
    let actingTenantId: string | null = null;
    if (user && (access.resource.rbacEnabled || access.resource.isSystem)) {
      const held = await this.deps.data.userScopes(client, user.id, access.resource);
      if (held) {
        kept = kept.filter((s) => held.scopes.has(s));
        actingTenantId = held.tenantId;
      }
    }
    return { scope: kept.join(' '), actingTenantId };
  }

  /** A token whose signature was verified against the current key set (see `verified`), or undefined. */
  private verifiedFor(token: string) {
    const keys = this.deps.publicJwks();
    if (keys !== this.verifiedKeys) {
      this.verified.clear();
      this.verifiedKeys = keys;
      return undefined;
    }
    return this.verified.get(token);
  }

  private async verifyAsymmetric(
    token: string,
    kid: string | undefined,
    alg: string,
    opts: JWTVerifyOptions & { audience: string },
  ): Promise<JWTPayload> {
    const keys = this.deps.publicJwks();
    const known = this.verifiedFor(token);
    if (known) {
      // jwtVerify's time checks, again: the signature and the claims it covers cannot have changed.
      const now = Math.floor(Date.now() / 1000);
      const tolerance = Number(opts.clockTolerance ?? 0);
      const p = known.payload;
      if ((p.exp as number) <= now - tolerance)
        throw new joseErrors.JWTExpired('"exp" claim timestamp check failed', p);
      if (typeof p.nbf === 'number' && p.nbf > now + tolerance)
        throw new joseErrors.JWTClaimValidationFailed('"nbf" claim timestamp check failed', p);
      return p;
    }
    const payload = await this.verifyWithKeys(token, kid, alg, opts);
    if (this.deps.publicJwks() === keys) {
      if (this.verified.size >= VERIFIED_MAX)
        this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(token, { header: decodeProtectedHeader(token), payload });
    }
    return payload;
  }

  private async verifyWithKeys(
    token: string,
    kid: string | undefined,
    alg: string,
    opts: JWTVerifyOptions,
  ): Promise<JWTPayload> {
    try {
      return (await jwtVerify(token, this.keySet(), { ...opts, algorithms: [alg] })).payload;
    } catch (err) {
      // Signed by a key another process just added: reload the published keys once and try again.
      if (err instanceof joseErrors.JWKSNoMatchingKey && (await this.deps.reloadKeys(kid))) {
        return (await jwtVerify(token, this.keySet(), { ...opts, algorithms: [alg] })).payload;
      }
      throw err;
    }
  }

  private async introspectOpaque(
    token: string,
    hint?: string,
    caller?: OidcClientRecord,
  ): Promise<TokenInfo> {
    const provider = this.deps.provider();
    const order =
      hint === 'refresh_token'
        ? [provider.RefreshToken, provider.AccessToken, provider.ClientCredentials]
        : [provider.AccessToken, provider.ClientCredentials, provider.RefreshToken];
    for (const Model of order) {
      const found = (await (Model as typeof provider.AccessToken).find(token).catch(() => undefined)) as
        OpaqueToken | undefined;
      if (!found) continue;
      if (found.kind === 'RefreshToken' && found.consumed) return INACTIVE;
      return this.describeOpaque(found, caller);
    }
    return INACTIVE;
  }

  private async describeOpaque(t: OpaqueToken, caller?: OidcClientRecord): Promise<TokenInfo> {
    const isAccessToken = t.kind !== 'RefreshToken';
    let aud: string | undefined;
    let client: OidcClientRecord | undefined;
    let access: ClientResourceAccess | undefined;
    if (isAccessToken && t.aud !== undefined) {
      aud = singleAudience(t.aud);
      if (!aud) return INACTIVE;
      ({ client, access } = await this.clientAndAccess(t.clientId, aud, caller));
      if (!access?.authorized) return INACTIVE;
    } else {
      client = await this.client(t.clientId, caller);
    }
    if (!client) return INACTIVE;
    if (t.grantId && !(await this.liveGrant(t.grantId))) return INACTIVE;
    let user: User | undefined;
    if (t.accountId) {
      user = await this.deps.data.cachedUser(t.accountId);
      if (!user || user.isBlocked || user.instanceId !== client.instanceId) return INACTIVE;
    }
    const sub = t.accountId ?? t.clientId;
    const { scope, actingTenantId } = access
      ? await this.currentScope(t.scope ?? '', client, access, user)
      : { scope: t.scope ?? '', actingTenantId: null };
    return {
      active: true,
      token_type: isAccessToken ? 'Bearer' : 'refresh_token',
      client_id: t.clientId,
      scope,
      ...(user ? { username: usernameOf(user) } : {}),
      exp: iso(t.exp),
      iat: iso(t.iat),
      nbf: iso(t.iat),
      subject: sub,
      sub,
      jti: t.jti,
      ...(aud !== undefined ? { aud } : t.aud !== undefined ? { aud: t.aud } : {}),
      iss: this.deps.issuer,
      ...(client.tenantId ? { tenant_id: client.tenantId } : {}),
      ...(actingTenantId ? { acting_tenant_id: actingTenantId } : {}),
      ...(await this.instanceOf(client)),
    };
  }

  /**
   * True when the client is authorized on the resource `identifier` of its instance and, when `tokenClientId` is
   * given, that token's client is of the same instance: a resource server of one instance never sees the tokens of
   * another instance, even for a resource with the same identifier (every instance has `urn:gatehouse:management`).
   */
  async isAuthorizedOn(clientId: string, identifier: string, tokenClientId?: string): Promise<boolean> {
    const access = await this.deps.data.resourceAccess(clientId, identifier);
    if (!access?.authorized) return false;
    if (tokenClientId === undefined) return true;
    const owner = await this.deps.data.findClient(tokenClientId);
    return owner?.instanceId === access.resource.instanceId;
  }

  /** A public client (one that authenticates with its client_id alone), or undefined. */
  publicClient(clientId: string): Promise<OidcClientRecord | undefined> {
    return publicClientById(this.deps.data, clientId);
  }

  /**
   * Basic client credentials of a caller: the client exists, is confidential, its secret matches and is current.
   * Returns the client, or undefined.
   */
  authenticateClient(clientId: string, secret: string): Promise<OidcClientRecord | undefined> {
    return clientBySecret(this.deps.data, clientId, secret);
  }
}
