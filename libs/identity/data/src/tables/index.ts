// One module per table of the management API: its declaration (a Table: scope, columns, row type) and its look-ups.
export * from './clients.js';
export * from './resources.js';
export * from './users.js';
export * from './tenants.js';
export * from './scopes.js';
export * from './roles.js';
export * from './groups.js';
export * from './tenant-admins.js';
export * from './identity-providers.js';
export * from './user-identities.js';
export * from './instances.js';
export * from './tickets.js';
export * from './log-streams.js';
export * from './events.js';
export * from './user-authenticators.js';
