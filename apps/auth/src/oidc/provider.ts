import { createSecretKey, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import Provider, {
  errors,
  type AdapterPayload,
  interactionPolicy,
  type Account,
  type AccountClaims,
  type Configuration,
  type KoaContextWithOIDC,
  type ResourceServer,
} from 'oidc-provider';
import type { KeySet } from '../keys/signing-keys.js';
import { createAdapterFactory } from './adapters/adapter-factory.js';
import type { Sql } from '@gatehouse/db';
import {
  clientRules,
  EXTRA_CLIENT_PROPERTIES,
  secretExpired,
  SUPPORTED_GRANT_TYPES,
  toProviderClient,
} from '@gatehouse/oidc-clients';
import { browserError } from './browser-errors.js';
import { isStoreUnavailable, oauthError, withCommonShape } from './oauth-errors.js';
import { isClientId, type AccountUser, type OidcClientRecord, type OidcData } from './oidc-data.js';
import {
  PASSWORD_GRANT,
  PASSWORD_GRANT_PARAMS,
  passwordGrantHandler,
  userGrantHandler,
} from './password.grant.js';
import type { OneTimeCodes } from '../passwordless/one-time-codes.js';
import { pkceWaived } from '../passwordless/link-pkce.js';
import type { PasswordLogin } from './password-login.js';
import { signInClientOf, userMaySignInThrough } from './sign-in-policy.js';
import {
  exchangedTenantOf,
  TOKEN_EXCHANGE_GRANT,
  TOKEN_EXCHANGE_PARAMS,
  tokenExchangeHandler,
} from './token-exchange.grant.js';
import type { UpstreamKeys } from './upstream-keys.js';
import {
  deviceCodePage,
  deviceConfirmPage,
  deviceDonePage,
  errorPage,
  accountLabel,
  INTERACTION_PATH,
  loggedOutPage,
  logoutPage,
  originOf,
  pageHeaders,
  pickLocale,
} from '../interaction/pages.js';

/** Paths of the token server (oidc-provider routes). */
export const ROUTES = {
  token: '/token',
  revocation: '/revoke',
  introspection: '/token/introspection',
  userinfo: '/userinfo',
  jwks: '/jwks',
  authorization: '/authorize',
  end_session: '/session/end',
  device_authorization: '/device/code',
  code_verification: '/device',
} as const;

/** CSP of the pages oidc-provider renders: no sources at all but the form_post script's hash, no framing. */
const OIDC_PAGE_CSP = "default-src 'none'; script-src; base-uri 'none'; frame-ancestors 'none'";

/** The routes a browser opens (authorization and its resume, logout and its steps, the device pages). */
const browserFacing = (path: string) =>
  path === ROUTES.authorization ||
  path.startsWith(`${ROUTES.authorization}/`) ||
  path === ROUTES.end_session ||
  path.startsWith(`${ROUTES.end_session}/`) ||
  path === ROUTES.code_verification ||
  path.startsWith(`${ROUTES.code_verification}/`);

export const OIDC_SCOPES = ['openid', 'offline_access', 'profile', 'email', 'address', 'phone'] as const;

/** Claims per scope (document 1, "Get user info"); `phone_verified` is document 1's name, beside OIDC's own. */
export const CLAIMS = {
  openid: ['sub'],
  profile: [
    'name',
    'family_name',
    'given_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
  ],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified', 'phone_verified'],
};

export interface TokenLifetimes {
  /** Access tokens without a resource (userinfo only), seconds. */
  accessToken: number;
  idToken: number;
  refreshToken: number;
  grant: number;
  /** Device codes (RFC 8628 expires_in), seconds. */
  deviceCode: number;
}

export interface ProviderDeps {
  issuer: string;
  sql: Sql;
  data: OidcData;
  keys: KeySet;
  login: PasswordLogin;
  lifetimes: TokenLifetimes;
  redis?: Redis;
  redisPrefix?: string;
  /** Trust X-Forwarded-* (behind a TLS-terminating proxy). */
  proxy?: boolean;
  /** Keys of the signed cookies of browser sessions and interactions (current first), the same on every replica. */
  cookieKeys: Buffer[];
  /** Passwordless one-time codes (the otp grant checks them). */
  codes: OneTimeCodes;
  /** The identity providers' key sets token exchange verifies with (they outlive a rebuilt provider). */
  upstreamKeys: UpstreamKeys;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Grant types the token endpoint serves (@gatehouse/oidc-clients: the management API validates clients by them). */
export { SUPPORTED_GRANT_TYPES };

/** Client authentication at the token, introspection and revocation endpoints. */
const CLIENT_AUTH_METHODS = clientRules().clientAuthMethods ?? [];

/** oidc-provider Client with our extra metadata. */
interface GatehouseClient {
  clientId: string;
  instance_id?: string;
  tenant_id?: string;
  is_global?: boolean;
  refresh_token_ttl?: number;
  id_token_ttl?: number;
  is_first_party?: boolean;
}

export function userClaims(user: AccountUser): AccountClaims {
  const epoch = (d: Date | string | null | undefined) =>
    d ? Math.floor(new Date(d).getTime() / 1000) : undefined;
  const claims: Record<string, unknown> = {
    sub: user.id,
    name: user.name ?? ([user.givenName, user.familyName].filter(Boolean).join(' ') || undefined),
    given_name: user.givenName,
    family_name: user.familyName,
    middle_name: user.middleName,
    nickname: user.nickname,
    preferred_username: user.userName,
    picture: user.picture,
    gender: user.gender,
    birthdate: user.birthdate,
    zoneinfo: user.zoneinfo,
    locale: user.locale,
    updated_at: epoch(user.updatedAt),
    email: user.userEmail,
    email_verified: user.userEmail ? user.emailVerified : undefined,
    address: user.address ?? undefined,
    phone_number: user.phoneNumber,
    phone_number_verified: user.phoneNumber ? user.phoneVerified : undefined,
    phone_verified: user.phoneNumber ? user.phoneVerified : undefined,
  };
  for (const k of Object.keys(claims)) if (claims[k] === null || claims[k] === undefined) delete claims[k];
  return claims as AccountClaims;
}

const toAccount = (user: AccountUser): Account => ({
  accountId: user.id,
  claims: () => userClaims(user),
});

/**
 * oidc-provider's prompts, plus one login check: a session whose user this client may not sign in (a user of another
 * instance or tenant: findAccount finds no account) is no login here. The login page is shown again (prompt=none:
 * login_required) instead of the request failing for want of an account.
 */
function signInPolicy() {
  const policy = interactionPolicy.base();
  policy
    .get('login')!
    .checks.add(
      new interactionPolicy.Check(
        'session_elsewhere',
        "the session's user does not sign in through this client",
        'login_required',
        (ctx) => Boolean(ctx.oidc.session?.accountId && !ctx.oidc.account),
      ),
      1,
    );
  return policy;
}

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

/**
 * A code request asking for `offline_access` keeps it whenever the client may use refresh tokens, with or without
 * `prompt=consent` (Auth0's rule; oidc-provider drops it unless consent is prompted for). The consent page then asks
 * for it like any other scope unless the grant already holds it. Not with `prompt=none`: no page can ask there, so
 * oidc-provider's rule stays. Runs after oidc-provider's scope checks, as the validator of the `scope` parameter.
 */
async function keepOfflineAccess(ctx: KoaContextWithOIDC, value: string | undefined): Promise<void> {
  const { oidc } = ctx;
  if (oidc.route !== 'authorization' || !oidc.client) return;
  const raw = (oidc.body as { scope?: unknown } | undefined)?.scope ?? ctx.query.scope;
  const asked = typeof raw === 'string' ? raw.split(' ') : [];
  const scopes = value ? value.split(' ') : [];
  if (!asked.includes('offline_access') || scopes.includes('offline_access')) return;
  const responseType = String(oidc.params?.response_type ?? '');
  const allowList = oidc.client.scope ? oidc.client.scope.split(' ') : undefined;
  if (
    !responseType.split(' ').includes('code') ||
    oidc.prompts.has('none') ||
    !oidc.client.grantTypeAllowed('refresh_token') ||
    (allowList && !allowList.includes('offline_access'))
  )
    return;
  oidc.params!.scope = [...scopes, 'offline_access'].join(' ');
}

type ProviderClient = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/**
 * oidc-provider's Client of a client row, kept with the row object: the state cache (and a request's memo) hand back
 * the same object until the row changes, so a row already turned into a Client is answered at once. Otherwise
 * oidc-provider rebuilds the client's metadata on every look-up (several per request) and finds the Client it made
 * before by a SHA-256 of the metadata's JSON, a visible share of a code flow's CPU. The metadata depends on the
 * time in one way only, whether the secret has expired (toProviderClient), which is part of the key. A row not seen
 * before goes through oidc-provider's own find (its validation, its errors), with the metadata just built handed to
 * its adapter read (`handOff`) rather than read and built a second time.
 */
function keepClientsWithTheirRows(
  provider: Provider,
  data: OidcData,
  handOff: (metadata: { id: string; metadata: AdapterPayload } | undefined) => void,
): void {
  const Client = provider.Client;
  const find = Client.find.bind(Client);
  const made = new WeakMap<OidcClientRecord, { expired: boolean; client: ProviderClient }>();
  Client.find = async (id: string) => {
    // Only a well-formed client id can name a row (anything else: oidc-provider's own answer, none).
    if (!isClientId(id)) return find(id);
    const record = await data.findClient(id);
    // No row, or a row that makes no client (a confidential one without a secret): no client, as the adapter says.
    if (!record) return undefined;
    const expired = secretExpired(record);
    const known = made.get(record);
    if (known && known.expired === expired) return known.client;
    const metadata = toProviderClient(record, SUPPORTED_GRANT_TYPES);
    if (!metadata) return undefined;
    // oidc-provider asks its adapter at once (before its first await); should it not, the adapter reads the row.
    handOff({ id, metadata });
    const pending = find(id);
    handOff(undefined);
    const client = await pending;
    if (client) made.set(record, { expired, client });
    return client;
  };
}

/**
 * Build the oidc-provider instance of the token server. Everything it knows comes from PostgreSQL (clients,
 * resources, users, signing keys) and its artifacts go through our adapters; the instance itself is stateless,
 * so a new one can replace it (e.g. after a key rotation) at any time.
 */
export function createProvider(deps: ProviderDeps): Provider {
  const { data, keys, lifetimes } = deps;

  const rbacScopes = (clientId: string, indicator: string, accountId: string | undefined) =>
    userRbacScopes(data, clientId, indicator, accountId);

  async function getResourceServerInfo(
    ctx: KoaContextWithOIDC,
    indicator: string,
    client: unknown,
  ): Promise<ResourceServer> {
    const c = client as GatehouseClient;
    const access = await data.resourceAccess(c.clientId, indicator);
    if (!access) throw oauthError(errors.InvalidTarget, `unknown audience (resource indicator) ${indicator}`);
    if (!access.authorized) {
      throw oauthError(errors.AccessDenied, `the client is not authorized for the audience ${indicator}`);
    }
    // A user token (refresh, and every grant that knows its account here) of an RBAC resource: only what the
    // user holds in effect, of what the client was granted.
    const accountId = (ctx.oidc as { account?: { accountId?: string } } | undefined)?.account?.accountId;
    const effective = await rbacScopes(c.clientId, indicator, accountId);
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
  }

  const supportedGrants = SUPPORTED_GRANT_TYPES;

  // Client metadata handed to oidc-provider's adapter read by `Client.find` below, instead of building it again.
  let handoff: { id: string; metadata: AdapterPayload } | undefined;

  const configuration: Configuration = {
    adapter: createAdapterFactory({
      sql: deps.sql,
      redis: deps.redis,
      redisPrefix: deps.redisPrefix,
      onGrantGone: (grantId) => data.forgetGrant(grantId),
      clients: {
        find: async (clientId: string) => {
          if (handoff?.id === clientId) {
            const { metadata } = handoff;
            handoff = undefined;
            return metadata;
          }
          const record = await data.findClient(clientId);
          return record ? toProviderClient(record, supportedGrants) : undefined;
        },
      },
    }),
    clients: [],
    jwks: { keys: keys.keys.map((k) => k.privateJwk) as never },
    routes: { ...ROUTES },
    scopes: [...OIDC_SCOPES],
    claims: CLAIMS,
    // What makes client metadata valid (auth methods, defaults, response types) is shared with the management API,
    // which refuses a client this provider would refuse.
    ...clientRules(),
    // RFC 8414: without these a client must assume client_secret_basic only; introspection (tokeninfo.handler.ts)
    // and revocation take the token endpoint's methods (none: a public client, its own tokens).
    discovery: {
      introspection_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
      revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    },
    extraClientMetadata: { properties: EXTRA_CLIENT_PROPERTIES },
    // ID tokens are signed RS256 (clientDefaults; clients cannot choose another): discovery offers only that.
    enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
    // PKCE (S256) on every authorization code request, public clients or not (OAuth 2.1, RFC 9700), except the
    // request a confirmed sign-in link of a confidential client continues (document 2's link: link-pkce.ts).
    pkce: { required: (ctx, client) => !(client.clientAuthMethod !== 'none' && pkceWaived(ctx.req)) },
    interactions: {
      policy: signInPolicy(),
      url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`,
    },
    cookies: {
      keys: deps.cookieKeys,
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    // offline_access without prompt=consent: kept (see keepOfflineAccess); the validator runs after oidc-provider's
    // own scope checks, on the parameter it already knows.
    extraParams: { scope: keepOfflineAccess },
    // Consent a first-party client need not ask: every resource it asks for skips consent for first parties.
    loadExistingGrant: async (ctx) => {
      const client = ctx.oidc.client as unknown as GatehouseClient | undefined;
      const session = ctx.oidc.session;
      if (!client || !session?.accountId) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      if (!client.is_first_party) return undefined;
      const resources = ctx.oidc.params?.resource;
      const list = (Array.isArray(resources) ? resources : resources ? [resources] : []) as string[];
      const access = await Promise.all(list.map((r) => data.resourceAccess(client.clientId, r)));
      if (access.some((a) => !a?.authorized || !a.resource.skipConsentForFirstParty)) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      const requested = String(ctx.oidc.params?.scope ?? '')
        .split(' ')
        .filter(Boolean);
      grant.addOIDCScope(requested.filter((sc) => (OIDC_SCOPES as readonly string[]).includes(sc)).join(' '));
      for (const [i, r] of list.entries()) grant.addResourceScope(r, access[i]!.scopes.join(' '));
      await grant.save();
      return grant;
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // Any authenticated confidential client (a resource server) may introspect; a public one its own tokens.
        allowedPolicy: async (ctx, client, token) =>
          client.clientAuthMethod !== 'none' || token.clientId === ctx.oidc.client?.clientId,
      },
      revocation: {
        enabled: true,
        // RFC 7009: a token of another client is left alone and the answer is still 200.
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? undefined,
        // A refresh keeps the audience the grant was for.
        useGrantedResource: async () => true,
        getResourceServerInfo,
      },
      userinfo: { enabled: true },
      // RFC 8628: POST /device/code, the user enters the code at /device (then login and consent as for
      // /authorize), the device polls /token with grant_type device_code.
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        userCodeInputSource: async (ctx, form, _out, err) => {
          const nonce = randomBytes(16).toString('base64');
          pageHeaders(ctx.res, nonce);
          ctx.type = 'html';
          const e = err as { userCode?: unknown; name?: string } | undefined;
          ctx.body = deviceCodePage({
            locale: pickLocale(undefined, ctx.get('accept-language')),
            nonce,
            form,
            // a deliberate cancel is no failure: said so, neutrally
            error: e
              ? e.name === 'AbortedError'
                ? 'cancelled'
                : e.userCode || e.name === 'NoCodeError'
                  ? 'wrong'
                  : 'failed'
              : undefined,
          });
        },
        userCodeConfirmSource: async (ctx, form, client, _deviceInfo, userCode) => {
          const nonce = randomBytes(16).toString('base64');
          pageHeaders(ctx.res, nonce);
          ctx.type = 'html';
          ctx.body = deviceConfirmPage({
            locale: pickLocale(undefined, ctx.get('accept-language')),
            nonce,
            form,
            clientName: client.clientName ?? client.clientId,
            userCode,
          });
        },
        successSource: async (ctx) => {
          const nonce = randomBytes(16).toString('base64');
          pageHeaders(ctx.res, nonce);
          ctx.type = 'html';
          ctx.body = deviceDonePage({ locale: pickLocale(undefined, ctx.get('accept-language')), nonce });
        },
      },
      // RP-initiated logout at /session/end: a confirmation page (no JavaScript), post_logout_redirect_uri checked
      // against client_metadata.urls.logout_urls.
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          const nonce = randomBytes(16).toString('base64');
          const target = String(ctx.oidc.params?.post_logout_redirect_uri ?? '');
          pageHeaders(ctx.res, nonce, originOf(target));
          ctx.type = 'html';
          const locale = pickLocale(String(ctx.oidc.params?.ui_locales ?? ''), ctx.get('accept-language'));
          // the page names what ends: the application (from id_token_hint or client_id) and the signed-in account
          const accountId = ctx.oidc.session?.accountId;
          const user = accountId ? await data.findUserById(accountId) : undefined;
          ctx.body = logoutPage({
            locale,
            nonce,
            form,
            clientName: ctx.oidc.client ? (ctx.oidc.client.clientName ?? undefined) : undefined,
            account: user ? accountLabel(user) : undefined,
          });
        },
        postLogoutSuccessSource: async (ctx) => {
          const nonce = randomBytes(16).toString('base64');
          pageHeaders(ctx.res, nonce);
          ctx.type = 'html';
          ctx.body = loggedOutPage({ locale: pickLocale(undefined, ctx.get('accept-language')), nonce });
        },
      },
      pushedAuthorizationRequests: { enabled: false },
    },
    findAccount: async (ctx, sub) => {
      const user = await data.findAccountUser(sub);
      if (!user || user.isBlocked) return undefined;
      // A user signs in (and refreshes) only through global clients or clients of its own tenant.
      const client = ctx?.oidc?.client as unknown as GatehouseClient | undefined;
      if (client && !userMaySignInThrough(user, signInClientOf(client))) return undefined;
      // Instances are closed worlds: a session (or grant) of another instance's user signs in nobody here.
      if (client?.instance_id && user.instanceId !== client.instance_id) return undefined;
      return toAccount(user);
    },
    extraTokenClaims: async (ctx, token) => {
      const extra: Record<string, unknown> = {};
      // JWT access tokens are not stored: the grant id lets /tokeninfo see a revoked grant.
      const t = token as unknown as { format?: string; grantId?: string; gty?: string; accountId?: string };
      if (t.format === 'jwt' && t.grantId) extra.grant_id = t.grantId;
      // The client's tenant. Through a global client, the tokens of a token exchange (and those refreshed from
      // them: gty keeps the chain) name the tenant of its identity provider, which is always its user's.
      let tenant: string | null | undefined = (ctx?.oidc?.client as unknown as GatehouseClient | undefined)
        ?.tenant_id;
      if (!tenant && t.gty?.startsWith(TOKEN_EXCHANGE_GRANT)) {
        tenant =
          exchangedTenantOf(ctx) ??
          (t.accountId ? (await data.cachedUser(t.accountId))?.tenantId : undefined);
      }
      if (tenant) extra.tenant_id = tenant;
      return Object.keys(extra).length ? extra : undefined;
    },
    // What a browser sign-in issues ends with that browser's session unless offline_access was granted
    // (oidc-provider's rule), except a device code's tokens: the browser that approved them is another device
    // (RFC 8628), and signing out there does not sign out the device (as with Auth0). Bound to that session, a device
    // code was also "not found" to a poll arriving after the code was approved but before the session was saved.
    expiresWithSession: async (_ctx, code) =>
      (code as unknown as { kind?: string }).kind !== 'DeviceCode' && !code.scopes.has('offline_access'),
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? lifetimes.accessToken,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? lifetimes.accessToken,
      IdToken: (_ctx, _token, client) =>
        (client as unknown as GatehouseClient | undefined)?.id_token_ttl ?? lifetimes.idToken,
      RefreshToken: (_ctx, _token, client) =>
        (client as unknown as GatehouseClient | undefined)?.refresh_token_ttl ?? lifetimes.refreshToken,
      Grant: lifetimes.grant,
      AuthorizationCode: 60,
      DeviceCode: lifetimes.deviceCode,
      Interaction: 3600,
      Session: lifetimes.grant,
      BackchannelAuthenticationRequest: 600,
      PreAuthorizedCode: 600,
    },
    clientBasedCORS: () => false,
    // A browser (Accept: text/html) gets a page, never JSON; clients get the OAuth error object.
    // A person never reads oidc-provider's developer message: the page says what to do, with a reference to the
    // logged detail (browser-errors.ts).
    renderError: async (ctx, out, err) => {
      if (ctx.accepts('json', 'html') === 'html') {
        const nonce = randomBytes(16).toString('base64');
        pageHeaders(ctx.res, nonce);
        ctx.type = 'html';
        const locale = pickLocale(String(ctx.oidc?.params?.ui_locales ?? ''), ctx.get('accept-language'));
        const shown = browserError(locale, out, err);
        if (shown.logged) {
          const clientId = ctx.oidc?.client?.clientId ?? ctx.oidc?.params?.client_id;
          deps.log.warn({ ...shown.logged, client_id: clientId, path: ctx.path }, 'browser flow error');
        }
        ctx.body = errorPage({ locale, nonce, message: shown.message, details: shown.details });
        return;
      }
      ctx.type = 'json';
      ctx.body = withCommonShape(out);
    },
  };

  const provider = new Provider(deps.issuer, configuration);
  provider.proxy = deps.proxy ?? false;
  keepClientsWithTheirRows(provider, data, (metadata) => {
    handoff = metadata;
  });

  provider.registerGrantType(
    PASSWORD_GRANT,
    passwordGrantHandler({
      login: deps.login,
      resourceServerInfo: (ctx, resource) => getResourceServerInfo(ctx, resource, ctx.oidc.client),
      account: toAccount,
      oidcScopes: new Set(OIDC_SCOPES),
      lifetimes,
      rbacScopes,
    }),
    PASSWORD_GRANT_PARAMS,
    ['resource'],
  );

  // grant_type=otp: a code from POST /passwordless/start; the password grant's scope rules.
  provider.registerGrantType(
    'otp',
    userGrantHandler(
      {
        resourceServerInfo: (ctx, resource) => getResourceServerInfo(ctx, resource, ctx.oidc.client),
        account: toAccount,
        oidcScopes: new Set(OIDC_SCOPES),
        lifetimes,
        rbacScopes,
      },
      'otp',
      async (ctx) => {
        const { client, params } = ctx.oidc;
        const username = typeof params.username === 'string' ? params.username.trim() : '';
        const otp = typeof params.otp === 'string' ? params.otp.trim() : '';
        if (!username) throw new errors.InvalidRequest("missing required parameter 'username'");
        if (!otp) throw new errors.InvalidRequest("missing required parameter 'otp'");
        const c = client as unknown as GatehouseClient & { instance_id: string };
        const user = await data.findUserByLogin(String(c.instance_id), username);
        // one answer for an unknown user, a wrong, used or expired code, and too many attempts: no oracle
        const invalid = () => oauthError(errors.InvalidGrant, 'invalid or expired one-time code');
        if (!user || !userMaySignInThrough(user, signInClientOf(c))) throw invalid();
        if ((await deps.codes.check(user.id, c.clientId, otp)) !== 'ok') throw invalid();
        if (user.isBlocked) throw oauthError(errors.InvalidGrant, 'the user is blocked');
        return user;
      },
    ),
    ['username', 'otp', 'scope', 'resource'],
    ['resource'],
  );

  // RFC 8693 token exchange: a subject token of a tenant's identity provider for our tokens (token-exchange.grant.ts).
  provider.registerGrantType(
    TOKEN_EXCHANGE_GRANT,
    tokenExchangeHandler({
      sql: deps.sql,
      keys: deps.upstreamKeys,
      resourceServerInfo: (ctx, resource) => getResourceServerInfo(ctx, resource, ctx.oidc.client),
      account: toAccount,
      oidcScopes: new Set(OIDC_SCOPES),
      lifetimes,
      rbacScopes,
    }),
    TOKEN_EXCHANGE_PARAMS,
    ['resource'],
  );

  // The pages oidc-provider renders itself on the browser-facing routes (form_post auto-submit, errors, the device
  // and logout steps) get the headers of our own pages. Ours replace this CSP with their own (pageHeaders); the
  // form_post page adds the SHA-256 of its one inline script to the empty script-src (pushInlineSha), so that script
  // runs and nothing else does. No form-action: form_post submits to the client's redirect_uri, any origin.
  provider.use(async (ctx, next) => {
    if (browserFacing(ctx.path)) {
      ctx.set('Content-Security-Policy', OIDC_PAGE_CSP);
      ctx.set('X-Frame-Options', 'DENY');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Referrer-Policy', 'no-referrer');
    }
    await next();
  });

  // Every error body gets our common shape beside RFC 6749's. What escapes oidc-provider's own error handling is
  // answered here as a page or an error object, never Koa's plain-text 500.
  provider.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      // oidc-provider 9: a device form posted without the session its GET started (stale, forged, or a cookie-less
      // client) fails its xsrf check, and rendering that error touches a new session that its save step then refuses
      // to "persist" (a TypeError). That is the caller's 400 (found by tools/reliability/fuzz.mjs).
      const staleForm = err instanceof TypeError && /previously persisted Sessions/.test(err.message);
      if (!staleForm) deps.log.error({ err }, 'token server: unhandled error');
      ctx.status = staleForm ? 400 : 500;
      const out = staleForm
        ? {
            error: 'invalid_request',
            error_description: 'the form has expired or did not come from this server; open it again',
          }
        : { error: 'server_error', error_description: 'internal error' };
      await configuration.renderError!(ctx as unknown as KoaContextWithOIDC, out, err as Error);
    }
    if (ctx.status >= 400) {
      // Koa turns an empty body into 204 and a body set without a status into 200: keep the status.
      const status = ctx.status;
      ctx.body = withCommonShape(
        ctx.body ?? {
          error: status === 404 ? 'not_found' : 'invalid_request',
          error_description: ctx.message,
        },
      );
      ctx.status = status;
    }
  });

  provider.on('server_error', (ctx, err) => {
    if (isStoreUnavailable(err)) {
      deps.log.warn({ err: (err as Error).message }, 'token server: data store unavailable');
      const message = 'a data store of the token server is unavailable, try again later';
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = {
        error: 'temporarily_unavailable',
        error_description: message,
        code: 'service_unavailable',
        message,
      };
      return;
    }
    deps.log.error({ err }, 'token server error');
  });

  return provider;
}
