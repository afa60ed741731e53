/** Every migration of apps/identity, in order. */
export const identityMigrations = [];
