import { errors, type TokenEndpointGrantContext } from 'oidc-provider';
import { sourceOf, type AuthEvents } from '../events/auth-events.js';
import { authContext, type FactorKind, type FirstFactor } from '../mfa/second-factors.js';
import { oauthError } from './oauth-errors.js';
import type { OidcData } from './oidc-data.js';
import {
  issueUserTokens,
  MFA_TOKEN_PURPOSE,
  type MfaTokenParams,
  type PasswordGrantDeps,
} from './password.grant.js';

/** Auth0's grant types for the second factor of a grant that cannot show a page (password, otp). */
export const MFA_OTP_GRANT = 'http://auth0.com/oauth/grant-type/mfa-otp';
export const MFA_RECOVERY_CODE_GRANT = 'http://auth0.com/oauth/grant-type/mfa-recovery-code';
export const MFA_OTP_PARAMS = ['mfa_token', 'otp'];
export const MFA_RECOVERY_CODE_PARAMS = ['mfa_token', 'recovery_code'];

export interface MfaGrantDeps extends Omit<PasswordGrantDeps, 'login'> {
  data: OidcData;
  events: AuthEvents;
  mfa: NonNullable<PasswordGrantDeps['mfa']>;
}

const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/**
 * The MFA grants: `mfa_token` (from a 403 `mfa_required` of the password or otp grant, to this client) and the app's
 * code (`otp`) or a recovery code (`recovery_code`). A right factor uses the token up and issues what the first
 * grant would have issued (its scope and resource), with `amr` [first factor, otp, mfa] and the MFA acr; a wrong one
 * counts against the account's second-factor budget (the token stays usable until it expires, within that budget).
 * An unknown, used or expired token, or one of another client: `invalid_grant`.
 */
export function mfaGrantHandler(deps: MfaGrantDeps, kind: Exclude<FactorKind, 'webauthn'>) {
  return async (ctx: TokenEndpointGrantContext): Promise<void> => {
    const { client, params } = ctx.oidc;
    const token = str(params.mfa_token);
    const param = kind === 'totp' ? 'otp' : 'recovery_code';
    const code = str(params[param]);
    if (!token) throw new errors.InvalidRequest("missing required parameter 'mfa_token'");
    if (!code) throw new errors.InvalidRequest(`missing required parameter '${param}'`);
    const found = await deps.mfa.codes.findLink(token, MFA_TOKEN_PURPOSE);
    if (!found || found.client_id.toLowerCase() !== client!.clientId.toLowerCase()) {
      throw oauthError(errors.InvalidGrant, 'invalid or expired mfa_token');
    }
    const continued = found.params as unknown as MfaTokenParams;
    const user = await deps.data.findUserById(found.user_id);
    if (!user) throw oauthError(errors.InvalidGrant, 'invalid or expired mfa_token');
    const audit = {
      instanceId: user.instanceId,
      tenantId: user.tenantId,
      userId: user.id,
      clientId: client!.clientId,
      method: kind === 'totp' ? 'mfa_otp' : 'mfa_recovery_code',
      source: sourceOf(ctx.req),
    };
    const checked = await deps.mfa.factors.check(user.id, kind, code);
    if (checked !== 'ok') {
      deps.events.mfaFailure(audit, checked, kind);
      throw oauthError(
        errors.InvalidGrant,
        checked === 'locked'
          ? 'too many wrong second factors: try again later'
          : checked === 'reused_code'
            ? 'this code was already used'
            : 'the second factor is not right',
      );
    }
    if (user.isBlocked) throw oauthError(errors.InvalidGrant, 'the user is blocked');
    // one use: a second request with the same token (even concurrent) finds it used
    if (!(await deps.mfa.codes.redeem(token, MFA_TOKEN_PURPOSE))) {
      throw oauthError(errors.InvalidGrant, 'invalid or expired mfa_token');
    }
    const resource = continued.resource;
    const rs = resource
      ? new ctx.oidc.provider.ResourceServer(resource, await deps.resourceServerInfo(ctx, resource))
      : undefined;
    deps.events.signin({ ...audit, details: { factor: kind } });
    await issueUserTokens(deps, ctx, {
      user,
      gty: continued.gty,
      resource,
      rs,
      scope: continued.scope ?? '',
      ...authContext([continued.first as FirstFactor], true),
    });
  };
}
