import { iso, type Params, type Sql } from '@gatehouse/db';
import { giveAdminRole, takeAdminRole } from '../admin-roles.js';

// The `tenant_admins` table: users who administer a tenant. Reached only through a tenant or user already found in
// the caller's scope (findTenant, findUser), so it has no ScopedTable of its own.

/** Links `userIds` as admins of the tenant (those already linked stay as they are). */
export async function addTenantAdmins(
  tx: Sql,
  tenant: { id: string; instance_id: string },
  userIds: string[],
  actor: string | null,
): Promise<void> {
  await tx.exec(
    `INSERT INTO tenant_admins (instance_id, tenant_id, user_id, created_by, updated_by)
     SELECT $1, $2, u, $4, $4 FROM unnest($3::uuid[]) AS u
     ON CONFLICT (tenant_id, user_id) DO NOTHING`,
    [tenant.instance_id, tenant.id, userIds, actor],
  );
  // a tenant admin's scopes come from the tenant's admin role (created with its first admin)
  await giveAdminRole(tx, tenant.instance_id, tenant.id, userIds, actor);
}

/** Unlinks `userIds` from the tenant's admins (ids that are not admins are no error). */
export async function removeTenantAdmins(tx: Sql, tenantId: string, userIds: string[]): Promise<void> {
  const gone = await tx.rows<{ instance_id: string }>(
    `DELETE FROM tenant_admins WHERE tenant_id = $1 AND user_id = ANY($2::uuid[]) RETURNING instance_id`,
    [tenantId, userIds],
  );
  if (gone[0]) await takeAdminRole(tx, gone[0].instance_id, tenantId, userIds);
}

/** The condition (alias `u` of users) "is an admin of the tenant", its parameter added to `p`. */
export function isTenantAdmin(p: Params, tenantId: string, userAlias = 'u'): string {
  return `EXISTS (SELECT 1 FROM tenant_admins ta WHERE ta.user_id = ${userAlias}.id AND ta.tenant_id = ${p.add(tenantId)})`;
}

/** One entry of a user's `tenants` child: its own tenant and the tenants it administers, one entry per tenant. */
export type UserTenantRow = {
  id: string;
  user_id: string;
  tenant_id: string;
  is_member: boolean;
  is_admin: boolean;
  created_by: string | null;
  created_at: string;
  updated_by: string | null;
  updated_at: string;
};

/** Columns of a `tenants` entry read from userTenantsFrom (alias `l`). */
export const USER_TENANT_COLUMNS = `l.id, l.user_id, l.tenant_id, l.is_member, l.is_admin, l.created_by,
  ${iso('l.created_at')} AS created_at, l.updated_by, ${iso('l.updated_at')} AS updated_at`;

/**
 * The `tenants` entries of the users in `$<userIds>` (a uuid[] parameter), as a FROM-able subquery aliased `l`:
 * the user's own tenant (audit fields of the user) and each tenant it administers (audit fields of the admin link),
 * one entry per tenant; `id` is the tenant's id.
 */
export function userTenantsFrom(userIdsParam: string): string {
  return `(SELECT u.tenant_id AS id, u.id AS user_id, u.tenant_id, true AS is_member,
                  EXISTS (SELECT 1 FROM tenant_admins a WHERE a.user_id = u.id AND a.tenant_id = u.tenant_id) AS is_admin,
                  u.created_by, u.created_at,
                  u.updated_by, u.updated_at
             FROM users u /* unscoped: users already found in scope */
            WHERE u.id = ANY(${userIdsParam}::uuid[]) AND u.tenant_id IS NOT NULL
           UNION ALL
           SELECT a.tenant_id AS id, a.user_id, a.tenant_id, false AS is_member, true AS is_admin,
                  a.created_by, a.created_at,
                  a.updated_by, a.updated_at
             FROM tenant_admins a JOIN users u ON u.id = a.user_id /* unscoped: users already found in scope */
            WHERE a.user_id = ANY(${userIdsParam}::uuid[]) AND a.tenant_id IS DISTINCT FROM u.tenant_id) l`;
}
