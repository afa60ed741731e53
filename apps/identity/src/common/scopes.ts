/** Scopes of the management API (docs/contract.md): `<group>:read` for GET, `<group>:write` otherwise. */
export const CLIENTS_READ = 'clients:read';
export const CLIENTS_WRITE = 'clients:write';
export const RESOURCES_READ = 'resources:read';
export const RESOURCES_WRITE = 'resources:write';
export const USERS_READ = 'users:read';
export const USERS_WRITE = 'users:write';
export const ROLES_READ = 'roles:read';
export const ROLES_WRITE = 'roles:write';
export const GROUPS_READ = 'groups:read';
export const GROUPS_WRITE = 'groups:write';
export const TENANTS_READ = 'tenants:read';
export const TENANTS_WRITE = 'tenants:write';
/** The audit trail (`GET /logs`): read-only, so there is no `logs:write`. */
export { LOGS_READ } from '@gatehouse/identity-data';
