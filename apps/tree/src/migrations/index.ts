/** Every migration of apps/tree, in order. */
export const treeMigrations = [];
