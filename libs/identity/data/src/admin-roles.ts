import type { Sql } from '@gatehouse/db';
import { MANAGEMENT_AUDIENCE, SYSTEM_RESOURCES } from './system.js';

/**
 * Admins hold their power through roles (as ZITADEL's IAM and organization managers and Auth0's dashboard roles
 * do), never through the client they sign in with: user tokens carry on the system resources only what their user
 * holds in effect (effective-permissions.ts).
 * - `instance_admin`: one global role per instance holding every scope of its two system resources. The instance's
 *   admins (`/instances/:id/admins`, the first start's admin user included) hold it while they are admins.
 * - `tenant_admin`: one role per tenant (the role's `tenant_id`) holding TENANT_ADMIN_SCOPES of the management API.
 *   The tenant's admins (`/tenants/:id/admins`) hold it; a token whose scopes come from it acts in that tenant only.
 * Either role can be changed like any other (its permissions, its members), but adding or removing an admin gives
 * or takes it.
 */
export type AdminRoleKind = 'instance_admin' | 'tenant_admin';

/**
 * What a tenant's admin may do in its tenant: its users (their authenticators too), roles, groups, clients, resources,
 * tickets, itself, and read its events.
 */
export const TENANT_ADMIN_SCOPES = [
  'users:read',
  'users:write',
  'roles:read',
  'roles:write',
  'groups:read',
  'groups:write',
  'clients:read',
  'clients:write',
  'resources:read',
  'resources:write',
  'tickets:read',
  'tickets:write',
  'tenants:read',
  'tenants:write',
  'log_streams:write',
  'logs:read',
];

const NAMES: Record<AdminRoleKind, { name: string; description: string }> = {
  instance_admin: {
    name: 'Instance administrator',
    description: "Every scope of the instance's management and tree APIs; held by the instance's admins.",
  },
  tenant_admin: {
    name: 'Tenant administrator',
    description:
      "Manages the tenant's users, roles, groups, clients and resources; held by the tenant's admins.",
  },
};

/**
 * The admin role of the instance (`tenantId` null) or of a tenant, created with its scopes when missing (in the
 * caller's transaction). A role of the same name made by someone else keeps its name: this one gets a suffix.
 * Returns the role id and whether it was created now.
 */
export async function ensureAdminRole(
  tx: Sql,
  instanceId: string,
  tenantId: string | null,
  actor: string | null = null,
): Promise<{ id: string; created: boolean }> {
  const kind: AdminRoleKind = tenantId ? 'tenant_admin' : 'instance_admin';
  const find = async () =>
    (
      await tx.rows<{ id: string }>(
        `SELECT id FROM roles WHERE instance_id = $1 AND tenant_id IS NOT DISTINCT FROM $2 AND system_role = $3`,
        [instanceId, tenantId, kind],
      )
    )[0];
  const known = await find();
  if (known) return { id: known.id, created: false };
  const { name, description } = NAMES[kind];
  for (const candidate of [name, `${name} (system)`, `${name} (system ${instanceId.slice(0, 8)})`]) {
    const [row] = await tx.rows<{ id: string }>(
      `INSERT INTO roles (instance_id, tenant_id, role_name, role_description, system_role, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT DO NOTHING RETURNING id`,
      [instanceId, tenantId, candidate, description, kind, actor],
    );
    if (row) {
      await grantAdminScopes(tx, instanceId, row.id, kind, actor);
      return { id: row.id, created: true };
    }
    const raced = await find();
    if (raced) return { id: raced.id, created: false };
  }
  throw new Error(`cannot name the ${kind} role of instance ${instanceId}`);
}

/** Grants the role its scopes (those it lacks): every system scope, or TENANT_ADMIN_SCOPES of the management API. */
async function grantAdminScopes(
  tx: Sql,
  instanceId: string,
  roleId: string,
  kind: AdminRoleKind,
  actor: string | null,
): Promise<void> {
  await tx.exec(
    `INSERT INTO role_permissions (instance_id, role_id, resource_id, scope_id, created_by, updated_by)
     SELECT $1, $2, s.resource_id, s.id, $5, $5
       FROM scopes s JOIN resources r ON r.id = s.resource_id
      WHERE r.instance_id = $1 AND r.is_system AND r.identifier_url = ANY($3::text[])
        AND ($4::text[] IS NULL OR s.scope_name = ANY($4::text[]))
     ON CONFLICT (role_id, scope_id) DO NOTHING`,
    [
      instanceId,
      roleId,
      kind === 'instance_admin' ? SYSTEM_RESOURCES.map((r) => r.identifierUrl) : [MANAGEMENT_AUDIENCE],
      kind === 'instance_admin' ? null : TENANT_ADMIN_SCOPES,
      actor,
    ],
  );
}

/** Gives `userIds` the admin role of the instance or tenant (created when missing); idempotent. */
export async function giveAdminRole(
  tx: Sql,
  instanceId: string,
  tenantId: string | null,
  userIds: string[],
  actor: string | null = null,
): Promise<void> {
  if (!userIds.length) return;
  const role = await ensureAdminRole(tx, instanceId, tenantId, actor);
  await tx.exec(
    `INSERT INTO user_roles (instance_id, user_id, role_id, created_by, updated_by)
     SELECT $1, u, $3, $4, $4 FROM unnest($2::uuid[]) AS u
     ON CONFLICT (user_id, role_id) DO NOTHING`,
    [instanceId, userIds, role.id, actor],
  );
}

/** Takes the admin role of the instance or tenant from `userIds` (no role or not holding it: nothing happens). */
export async function takeAdminRole(
  tx: Sql,
  instanceId: string,
  tenantId: string | null,
  userIds: string[],
): Promise<void> {
  if (!userIds.length) return;
  await tx.exec(
    `DELETE FROM user_roles ur USING roles ro
      WHERE ro.id = ur.role_id AND ro.instance_id = $1 AND ro.tenant_id IS NOT DISTINCT FROM $2
        AND ro.system_role = $3 AND ur.user_id = ANY($4::uuid[])`,
    [instanceId, tenantId, tenantId ? 'tenant_admin' : 'instance_admin', userIds],
  );
}

/**
 * Every instance gets its admin role (a database from before admin roles: at its next start), given at creation to
 * the instance's admins of that moment (the first start's admin user, unless it was removed from them). A role that
 * already exists is left as it is: its members and permissions are the administrators' business from then on,
 * except that system scopes added by a newer release are granted to it (see addScopesToInstanceAdminRole).
 */
export async function ensureInstanceAdminRoles(tx: Sql): Promise<void> {
  const missing = await tx.rows<{ id: string }>(
    `SELECT i.id FROM instances i
      WHERE NOT EXISTS (SELECT 1 FROM roles r WHERE r.instance_id = i.id AND r.tenant_id IS NULL
                                              AND r.system_role = 'instance_admin')`,
  );
  for (const i of missing) {
    const admins = await tx.rows<{ user_id: string }>(
      `SELECT user_id FROM instance_admins WHERE instance_id = $1`,
      [i.id],
    );
    await ensureAdminRole(tx, i.id, null);
    await giveAdminRole(
      tx,
      i.id,
      null,
      admins.map((a) => a.user_id),
    );
  }
}

/** System scopes a newer release added (`scopeIds`) go to the instance's admin role too. */
export async function addScopesToInstanceAdminRole(
  tx: Sql,
  instanceId: string,
  scopeIds: string[],
): Promise<void> {
  if (!scopeIds.length) return;
  await tx.exec(
    `INSERT INTO role_permissions (instance_id, role_id, resource_id, scope_id)
     SELECT $1, r.id, s.resource_id, s.id
       FROM roles r, scopes s
      WHERE r.instance_id = $1 AND r.tenant_id IS NULL AND r.system_role = 'instance_admin'
        AND s.id = ANY($2::uuid[])
     ON CONFLICT (role_id, scope_id) DO NOTHING`,
    [instanceId, scopeIds],
  );
}

/**
 * System scopes a newer release added (`scopeIds`) that tenant admins hold (TENANT_ADMIN_SCOPES) go to every
 * tenant admin role of the instance too: an upgrade gives existing tenant admins what new ones get.
 */
export async function addScopesToTenantAdminRoles(
  tx: Sql,
  instanceId: string,
  scopeIds: string[],
): Promise<void> {
  if (!scopeIds.length) return;
  await tx.exec(
    `INSERT INTO role_permissions (instance_id, role_id, resource_id, scope_id)
     SELECT $1, r.id, s.resource_id, s.id
       FROM roles r, scopes s
      WHERE r.instance_id = $1 AND r.tenant_id IS NOT NULL AND r.system_role = 'tenant_admin'
        AND s.id = ANY($2::uuid[]) AND s.scope_name = ANY($3::text[])
     ON CONFLICT (role_id, scope_id) DO NOTHING`,
    [instanceId, scopeIds, TENANT_ADMIN_SCOPES],
  );
}
