import type { User } from './oidc-data.js';

/** What the sign-in rule needs of a client: whether it is global and its tenant. */
export interface SignInClient {
  /** `is_global` of the client (document 1: a global client reaches all tenants' data). */
  isGlobal: boolean;
  tenantId: string | null;
}

/**
 * Tenants at sign-in: a global client (`is_global: true`) signs in any user of its instance; a client that is not
 * global only users of its own tenant (one left without a tenant signs in nobody). The client's instance is
 * checked where the user is found (every look-up is by instance). Auth0's organizations and Keycloak's realms draw
 * the same line. Applied to every grant that finds its account: password, otp, refresh, authorization code,
 * device code, and the login, one-time-code and e-mail link pages.
 */
export function userMaySignInThrough(user: Pick<User, 'tenantId'>, client: SignInClient): boolean {
  if (client.isGlobal) return true;
  return client.tenantId !== null && user.tenantId === client.tenantId;
}

/** The SignInClient of oidc-provider client metadata (`is_global`, `tenant_id` extra properties). */
export function signInClientOf(metadata: { is_global?: boolean; tenant_id?: string | null }): SignInClient {
  // A client whose metadata predates is_global was global unless it had a tenant (the earlier rule).
  return {
    isGlobal: metadata.is_global ?? !metadata.tenant_id,
    tenantId: metadata.tenant_id ?? null,
  };
}
