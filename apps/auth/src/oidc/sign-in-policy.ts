import type { User } from './oidc-data.js';

/**
 * Tenants at sign-in: a client of a tenant signs in only that tenant's users; a tenant-less client any user of its
 * instance (Auth0's organizations and Keycloak's realms draw the same line). Applied to the password grant and to
 * every grant that finds its account (refresh, and the interactive grants to come).
 */
export function userMaySignInThrough(
  user: Pick<User, 'tenantId'>,
  clientTenantId: string | null | undefined,
): boolean {
  return !clientTenantId || user.tenantId === clientTenantId;
}
