import type { Sql } from '@gatehouse/db';
import { clientAddress } from '@gatehouse/http';
import type Provider from 'oidc-provider';
import { errors, type Account, type ResourceServer, type TokenEndpointGrantContext } from 'oidc-provider';
import { sourceOf } from '../events/auth-events.js';
import { signInClientOf } from './sign-in-policy.js';
import { oauthError } from './oauth-errors.js';
import { LoginError, type LoginFailure, type PasswordLogin } from './password-login.js';
import type { User } from './oidc-data.js';
import type { OneTimeCodes } from '../passwordless/one-time-codes.js';
import { authContext, mfaNeed, type FirstFactor, type SecondFactors } from '../mfa/second-factors.js';

export const PASSWORD_GRANT = 'password';
export const PASSWORD_GRANT_PARAMS = ['username', 'password', 'scope', 'resource'];

const FAILURES: Record<LoginFailure, string> = {
  // Also a locked login (from this address) and a user of another tenant: one answer, no account oracle.
  invalid_credentials: 'invalid username or password',
  blocked: 'the user is blocked',
};

export interface PasswordGrantDeps {
  login: PasswordLogin;
  /** The provider's getResourceServerInfo (checks the client's authorization, gives granted scopes). */
  resourceServerInfo(ctx: TokenEndpointGrantContext, resource: string): Promise<ResourceServer>;
  account(user: User): Account;
  /** OIDC scopes the provider knows (openid, offline_access, profile, ...). */
  oidcScopes: ReadonlySet<string>;
  /** Access token lifetime without a resource, and the grant lifetime when a refresh token keeps it alive. */
  lifetimes: { accessToken: number; grant: number };
  /** The scopes the user holds in effect on an RBAC resource; undefined for a resource without RBAC. */
  rbacScopes(clientId: string, resource: string, accountId: string): Promise<Set<string> | undefined>;
  /** Second factors: a user who needs one gets `mfa_required` instead of tokens (absent: never asked). */
  mfa?: { factors: SecondFactors; codes: OneTimeCodes; sql: Sql };
}

/** The purpose of an `mfa_token` in one_time_codes (only its keyed hash is stored), and how long it lives. */
export const MFA_TOKEN_PURPOSE = 'mfa_token';
export const MFA_TOKEN_TTL_SEC = 300;

/** What an `mfa_token` continues: the grant it stands for, its first factor and its request. */
export interface MfaTokenParams {
  gty: string;
  first: FirstFactor;
  scope: string;
  resource?: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * The resource owner password credentials grant (RFC 6749 section 4.3), registered as a custom grant type.
 * Scopes: OIDC scopes as asked; for `resource` (alias `audience`) the asked scopes that the client was granted on
 * it, or all of those when the request names none. A refresh token follows the provider's issueRefreshToken rule
 * (client allows refresh_token and offline_access was asked).
 */
export function passwordGrantHandler(deps: PasswordGrantDeps) {
  return userGrantHandler(deps, PASSWORD_GRANT, async (ctx) => {
    const { client, params } = ctx.oidc;
    const username = str(params.username);
    const password = str(params.password);
    if (!username) throw new errors.InvalidRequest("missing required parameter 'username'");
    if (!password) throw new errors.InvalidRequest("missing required parameter 'password'");
    try {
      const c = client as unknown as { instance_id: string; tenant_id?: string; is_global?: boolean };
      // The address the rate limits counted (TRUST_PROXY's trusted proxies), not Koa's ctx.ip, which would
      // believe the left-most X-Forwarded-For entry, written by the client itself.
      return await deps.login.authenticate(
        String(c.instance_id),
        username,
        password,
        signInClientOf(c),
        clientAddress(ctx.req) ?? ctx.ip,
        { clientId: client?.clientId ?? '', method: 'password', source: sourceOf(ctx.req) },
      );
    } catch (err) {
      if (err instanceof LoginError) throw oauthError(errors.InvalidGrant, FAILURES[err.reason]);
      throw err;
    }
  });
}

/** The one resource a user grant is for (`resource`, a single value), if any. */
function singleResource(raw: unknown): string | undefined {
  if (!Array.isArray(raw)) return str(raw);
  if (raw.length > 1) {
    throw new errors.InvalidTarget('only a single resource indicator value is supported for this grant type');
  }
  return str(raw[0]);
}

/** Sets how long a grant lives (oidc-provider's Grant has no typed expiresIn). */
function grantLifetime(grant: object, seconds: number): void {
  (grant as { expiresIn: number }).expiresIn = seconds;
}

/** The scopes asked for on the resource that the client was granted there; none asked: every granted one. */
function askedOfResource(
  requested: ReadonlySet<string>,
  oidcScopes: ReadonlySet<string>,
  granted: ReadonlySet<string>,
): string[] {
  const asked = [...requested].filter((s) => !oidcScopes.has(s));
  return asked.length ? asked.filter((s) => granted.has(s)) : [...granted];
}

/** The token endpoint's answer of a user grant. */
function tokenResponse(
  accessToken: string,
  at: { expiration: number; tokenType: string; scope?: string },
  refreshToken: string | undefined,
  idToken: string | undefined,
) {
  return {
    access_token: accessToken,
    expires_in: at.expiration,
    token_type: at.tokenType,
    scope: at.scope ?? '',
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    ...(idToken ? { id_token: idToken } : {}),
  };
}

/** Checks a user grant's credentials (password, one-time code) and answers the user, or throws an OAuth error. */
export type Authenticate = (ctx: TokenEndpointGrantContext) => Promise<User>;

/**
 * A grant that signs a user in with credentials given at the token endpoint (password, otp): the resource is
 * resolved first (an unknown or unauthorized audience costs no login attempt), then `authenticate`, then the tokens
 * with the password grant's scope rules.
 */
export function userGrantHandler(
  deps: Omit<PasswordGrantDeps, 'login'>,
  gty: string,
  authenticate: Authenticate,
) {
  const grant: UserGrant = { deps, gty, authenticate };
  return (ctx: TokenEndpointGrantContext): Promise<void> => userGrant(grant, ctx);
}

interface UserGrant {
  deps: Omit<PasswordGrantDeps, 'login'>;
  gty: string;
  authenticate: Authenticate;
}

async function userGrant(
  { deps, gty, authenticate }: UserGrant,
  ctx: TokenEndpointGrantContext,
): Promise<void> {
  const { client, params, provider } = ctx.oidc;
  const resource = singleResource(params.resource);

  // Resolve the resource before checking the password: an unknown or unauthorized audience costs no login attempt.
  const rs = resource
    ? new provider.ResourceServer(resource, await deps.resourceServerInfo(ctx, resource))
    : undefined;
  const user = await authenticate(ctx);
  const first: FirstFactor = gty === PASSWORD_GRANT ? 'pwd' : 'otp';
  if (deps.mfa) {
    const state = await deps.mfa.factors.state(client.clientId, user.id);
    // a user whose only second factor is a passkey needs a page for it: no mfa_token (as without a factor)
    const need = mfaNeed(state, false) === 'verify' && !state.totp ? 'enrol' : mfaNeed(state, false);
    if (need) {
      await answerMfaRequired(ctx, deps.mfa, user, need, {
        gty,
        first,
        scope: str(params.scope) ?? '',
        ...(resource ? { resource } : {}),
      });
      return;
    }
  }
  await issueUserTokens(deps, ctx, {
    user,
    gty,
    resource,
    rs,
    scope: str(params.scope) ?? '',
    ...authContext([first], false),
  });
}

/**
 * 403 `mfa_required`: the user signed in with the first factor and needs a second one. With an authenticator, an
 * `mfa_token` (32 random bytes, only its keyed hash stored, one use, MFA_TOKEN_TTL_SEC) that the MFA grants take
 * with the factor; without one (the policy requires MFA and nothing is enrolled) no token: enrolment needs the
 * browser sign-in (its pages show the QR code), there is no enrolment at the token endpoint.
 */
async function answerMfaRequired(
  ctx: TokenEndpointGrantContext,
  mfa: NonNullable<PasswordGrantDeps['mfa']>,
  user: User,
  need: 'verify' | 'enrol',
  continued: MfaTokenParams,
): Promise<void> {
  ctx.status = 403;
  if (need === 'enrol') {
    ctx.body = {
      error: 'mfa_required',
      error_description:
        'multi-factor authentication is required and the user has no authenticator app (a passkey needs the ' +
        'browser): the user signs in, or enrols one, through the browser (/authorize) first',
    };
    return;
  }
  const token = await mfa.codes.issueLink(mfa.sql, {
    instanceId: user.instanceId,
    userId: user.id,
    clientId: ctx.oidc.client!.clientId,
    purpose: MFA_TOKEN_PURPOSE,
    ttlSec: MFA_TOKEN_TTL_SEC,
    params: { ...continued },
  });
  ctx.body = {
    error: 'mfa_required',
    error_description:
      'multi-factor authentication is required: continue with the mfa-otp grant and mfa_token',
    mfa_token: token,
  };
}

/** What a user grant issues tokens for: the user, the grant type, the resource and scope asked, amr and acr. */
export interface UserTokens {
  user: User;
  gty: string;
  resource: string | undefined;
  rs: InstanceType<Provider['ResourceServer']> | undefined;
  scope: string;
  amr: string[];
  acr: string;
}

/** The tokens of a user grant (password, otp, the MFA grants): the password grant's scope rules. */
export async function issueUserTokens(
  deps: Omit<PasswordGrantDeps, 'login'>,
  ctx: TokenEndpointGrantContext,
  { user, gty, resource, rs, scope, amr, acr }: UserTokens,
): Promise<void> {
  const { client, provider } = ctx.oidc;
  const account = deps.account(user);
  const requested = new Set(scope.split(' ').filter(Boolean));
  const oidcRequested = [...requested].filter((s) => deps.oidcScopes.has(s));

  const issueRefresh = client.grantTypeAllowed('refresh_token') && requested.has('offline_access');
  const grant = new provider.Grant({ clientId: client.clientId, accountId: user.id });
  // A grant lives as long as something can still use it: its refresh tokens, or else its one access token
  // (a login without a refresh token must not leave a year-long grant row behind).
  grantLifetime(
    grant,
    issueRefresh ? deps.lifetimes.grant : (rs?.accessTokenTTL ?? deps.lifetimes.accessToken) + 60,
  );
  if (oidcRequested.length) grant.addOIDCScope(oidcRequested.join(' '));
  let resourceScopes: string[] = [];
  if (rs && resource) {
    resourceScopes = askedOfResource(requested, deps.oidcScopes, rs.scopes);
    // An RBAC resource: of what the client may ask for, only what this user holds in effect.
    const effective = await deps.rbacScopes(client.clientId, resource, user.id);
    if (effective) resourceScopes = resourceScopes.filter((s) => effective.has(s));
    if (resourceScopes.length) grant.addResourceScope(resource, resourceScopes.join(' '));
  }
  const grantId = await grant.save();
  ctx.oidc.entity('Grant', grant);
  ctx.oidc.entity('Account', account);

  const at = new provider.AccessToken({ accountId: user.id, client, grantId, gty });
  if (rs && resource) at.resourceServer = rs;
  at.scope =
    (rs && resource
      ? grant.getResourceScopeFiltered(resource, resourceScopes)
      : grant.getOIDCScopeFiltered(new Set(oidcRequested))) || undefined;
  ctx.oidc.entity('AccessToken', at);
  const accessToken = await at.save();

  let refreshToken: string | undefined;
  if (issueRefresh) {
    const rt = new provider.RefreshToken({
      accountId: user.id,
      client,
      grantId,
      gty,
      resource,
      rotations: 0,
      scope: [...oidcRequested, ...resourceScopes].join(' '),
      amr,
      acr,
    });
    ctx.oidc.entity('RefreshToken', rt);
    refreshToken = await rt.save();
  }

  let idToken: string | undefined;
  if (requested.has('openid')) {
    const claims = await account.claims(
      'id_token',
      grant.getOIDCScopeFiltered(new Set(oidcRequested)),
      {},
      [],
    );
    const token = new provider.IdToken({ ...claims, sub: user.id, amr, acr }, { ctx });
    // As oidc-provider does: with an access token usable at userinfo, the ID token carries only `sub`.
    (token as unknown as { scope: string }).scope = at.aud
      ? grant.getOIDCScopeFiltered(new Set(oidcRequested))
      : 'openid';
    idToken = (await token.issue({ use: 'idtoken' })) as string;
  }

  ctx.body = tokenResponse(accessToken, at, refreshToken, idToken);
}
