import type Provider from 'oidc-provider';
import { errors, type TokenEndpointGrantContext } from 'oidc-provider';
import type { Sql } from '@gatehouse/db';
import { sourceOf, type AuthEvents } from '../../events/auth-events.js';
import type { OneTimeCodes } from '../../passwordless/one-time-codes.js';
import type { SecondFactors } from '../../mfa/second-factors.js';
import { oauthError } from '../oauth-errors.js';
import type { OidcData, User } from '../oidc-data.js';
import type { PasswordLogin } from '../password-login.js';
import {
  PASSWORD_GRANT,
  PASSWORD_GRANT_PARAMS,
  passwordGrantHandler,
  userGrantHandler,
  type PasswordGrantDeps,
} from '../password.grant.js';
import { signInClientOf, userMaySignInThrough } from '../sign-in-policy.js';
import {
  MFA_OTP_GRANT,
  MFA_OTP_PARAMS,
  MFA_RECOVERY_CODE_GRANT,
  MFA_RECOVERY_CODE_PARAMS,
  mfaGrantHandler,
} from '../mfa.grant.js';
import {
  TOKEN_EXCHANGE_GRANT,
  TOKEN_EXCHANGE_PARAMS,
  tokenExchangeHandler,
} from '../token-exchange.grant.js';
import type { UpstreamKeys } from '../upstream-keys.js';
import { OIDC_SCOPES, toAccount } from './claims.js';
import type { GatehouseClient } from './client.js';
import { userRbacScopes, type ResourceServerInfo } from './resources.js';
import type { TokenLifetimes } from './ttl.js';

export interface GrantDeps {
  sql: Sql;
  data: OidcData;
  login: PasswordLogin;
  lifetimes: TokenLifetimes;
  /** Passwordless one-time codes (the otp grant checks them). */
  codes: OneTimeCodes;
  /** The identity providers' key sets token exchange verifies with (they outlive a rebuilt provider). */
  upstreamKeys: UpstreamKeys;
  /** The audit trail (sign-ins and one-time codes of the grants registered here). */
  events: AuthEvents;
  /** Second factors: the password and otp grants answer mfa_required, the MFA grants complete them. */
  mfa: SecondFactors;
}

/**
 * The grant types oidc-provider does not know: password, otp (passwordless), the MFA grants that complete them and
 * RFC 8693 token exchange.
 */
export function registerGrants(
  provider: Provider,
  deps: GrantDeps,
  resourceServerInfo: ResourceServerInfo,
): void {
  const { data } = deps;
  const userGrants: Omit<PasswordGrantDeps, 'login'> = {
    resourceServerInfo: (ctx, resource) => resourceServerInfo(ctx, resource, ctx.oidc.client),
    account: toAccount,
    oidcScopes: new Set(OIDC_SCOPES),
    lifetimes: deps.lifetimes,
    rbacScopes: (clientId, indicator, accountId) => userRbacScopes(data, clientId, indicator, accountId),
    mfa: { factors: deps.mfa, codes: deps.codes, sql: deps.sql },
  };

  provider.registerGrantType(
    PASSWORD_GRANT,
    passwordGrantHandler({ ...userGrants, login: deps.login }),
    PASSWORD_GRANT_PARAMS,
    ['resource'],
  );

  // grant_type=otp: a code from POST /passwordless/start; the password grant's scope rules.
  provider.registerGrantType(
    'otp',
    userGrantHandler(userGrants, 'otp', otpUser(data, deps.codes, deps.events)),
    ['username', 'otp', 'scope', 'resource'],
    ['resource'],
  );

  // The second factor of a password or otp grant that answered 403 mfa_required (mfa.grant.ts).
  const mfaGrants = { ...userGrants, data, events: deps.events, mfa: userGrants.mfa! };
  provider.registerGrantType(MFA_OTP_GRANT, mfaGrantHandler(mfaGrants, 'totp'), MFA_OTP_PARAMS);
  provider.registerGrantType(
    MFA_RECOVERY_CODE_GRANT,
    mfaGrantHandler(mfaGrants, 'recovery_code'),
    MFA_RECOVERY_CODE_PARAMS,
  );

  // RFC 8693 token exchange: a subject token of a tenant's identity provider for our tokens (token-exchange.grant.ts).
  provider.registerGrantType(
    TOKEN_EXCHANGE_GRANT,
    tokenExchangeHandler({ ...userGrants, sql: deps.sql, keys: deps.upstreamKeys, events: deps.events }),
    TOKEN_EXCHANGE_PARAMS,
    ['resource'],
  );
}

/** The user a one-time code (username and otp) signs in, or an OAuth error. */
function otpUser(data: OidcData, codes: OneTimeCodes, events: AuthEvents) {
  return async (ctx: TokenEndpointGrantContext): Promise<User> => {
    const { client, params } = ctx.oidc;
    const username = typeof params.username === 'string' ? params.username.trim() : '';
    const otp = typeof params.otp === 'string' ? params.otp.trim() : '';
    if (!username) throw new errors.InvalidRequest("missing required parameter 'username'");
    if (!otp) throw new errors.InvalidRequest("missing required parameter 'otp'");
    const c = client as unknown as GatehouseClient & { instance_id: string };
    const audit = {
      instanceId: String(c.instance_id),
      tenantId: c.tenant_id ?? null,
      clientId: c.clientId,
      method: 'otp',
      source: sourceOf(ctx.req),
    };
    const user = await data.findUserByLogin(String(c.instance_id), username);
    // one answer for an unknown user, a wrong, used or expired code, and too many attempts: no oracle
    const invalid = () => oauthError(errors.InvalidGrant, 'invalid or expired one-time code');
    if (!user || !userMaySignInThrough(user, signInClientOf(c))) {
      events.signin({ ...audit, reason: user ? 'tenant_mismatch' : 'unknown_user' });
      throw invalid();
    }
    const checked = await codes.check(user.id, c.clientId, otp);
    if (checked !== 'ok') {
      events.otpFailure({ ...audit, tenantId: user.tenantId, userId: user.id }, checked);
      events.signin({ ...audit, tenantId: user.tenantId, userId: user.id, reason: 'wrong_code' });
      throw invalid();
    }
    if (user.isBlocked) {
      events.signin({ ...audit, tenantId: user.tenantId, userId: user.id, reason: 'blocked' });
      throw oauthError(errors.InvalidGrant, 'the user is blocked');
    }
    events.signin({ ...audit, tenantId: user.tenantId, userId: user.id });
    return user;
  };
}
