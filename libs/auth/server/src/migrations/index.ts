import { identityMigrations } from '@gatehouse/identity-data';

/** Every migration of apps/auth, in order: the identity schema (owned by @gatehouse/identity-data). */
export const authMigrations = [...identityMigrations];
