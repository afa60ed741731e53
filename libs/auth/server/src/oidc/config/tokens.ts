import type { Configuration } from 'oidc-provider';
import { signInClientOf, userMaySignInThrough } from '../sign-in-policy.js';
import { exchangedTenantOf, TOKEN_EXCHANGE_GRANT } from '../token-exchange.grant.js';
import type { OidcData } from '../oidc-data.js';
import { toAccount } from './claims.js';
import type { GatehouseClient } from './client.js';

/** Whose tokens are issued (findAccount) and what they carry beside oidc-provider's claims. */
export const accountConfig = (data: OidcData): Pick<Configuration, 'findAccount' | 'extraTokenClaims'> => ({
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
        exchangedTenantOf(ctx) ?? (t.accountId ? (await data.cachedUser(t.accountId))?.tenantId : undefined);
    }
    if (tenant) extra.tenant_id = tenant;
    return Object.keys(extra).length ? extra : undefined;
  },
});

/** Refresh tokens: when one is issued, rotated, and what ends with the browser session. */
export const refreshConfig = (): Pick<
  Configuration,
  'expiresWithSession' | 'issueRefreshToken' | 'rotateRefreshToken'
> => ({
  // What a browser sign-in issues ends with that browser's session unless offline_access was granted
  // (oidc-provider's rule), except a device code's tokens: the browser that approved them is another device
  // (RFC 8628), and signing out there does not sign out the device (as with Auth0). Bound to that session, a device
  // code was also "not found" to a poll arriving after the code was approved but before the session was saved.
  expiresWithSession: async (_ctx, code) =>
    (code as unknown as { kind?: string }).kind !== 'DeviceCode' && !code.scopes.has('offline_access'),
  issueRefreshToken: async (_ctx, client, code) =>
    client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
  rotateRefreshToken: true,
});
