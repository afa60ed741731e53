import { identityMigrations as dataMigrations } from '@gatehouse/identity-data';

/** Every migration of apps/identity, in order: the identity data model's (shared with apps/auth). */
export const identityMigrations = [...dataMigrations];
