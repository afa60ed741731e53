/** Every migration of apps/auth, in order. */
export const authMigrations = [];
