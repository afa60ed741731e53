import { Db, isUuid, type Sql } from '@gatehouse/db';

/**
 * Where a user's permissions come from (docs/contract.md, identity): its own (`direct`), its roles' (`role`), and the
 * roles of every group it is in and of every ancestor of those groups (`group`, with the group that holds the role).
 * One row per (scope, source); the same scope may come from several sources. Parameter `$1` is the user.
 * Every join is indexed: user_permissions (user_id, resource_id), user_roles (user_id, role_id), role_permissions
 * (role_id, resource_id), group_members (user_id), group_closure (descendant_id, ancestor_id), group_roles (group_id).
 */
export const EFFECTIVE_PERMISSION_SOURCES = `
  SELECT up.resource_id, up.scope_id, 'direct'::text AS source, NULL::uuid AS role_id, NULL::uuid AS group_id
    FROM user_permissions up WHERE up.user_id = $1
  UNION
  SELECT rp.resource_id, rp.scope_id, 'role'::text, ur.role_id, NULL::uuid
    FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id
   WHERE ur.user_id = $1
  UNION
  SELECT rp.resource_id, rp.scope_id, 'group'::text, gr.role_id, gc.ancestor_id
    FROM group_members gm
    JOIN group_closure gc ON gc.descendant_id = gm.group_id
    JOIN group_roles gr ON gr.group_id = gc.ancestor_id
    JOIN role_permissions rp ON rp.role_id = gr.role_id
   WHERE gm.user_id = $1`;

/**
 * The scopes of resource `resourceId` that user `userId` holds in effect (see EFFECTIVE_PERMISSION_SOURCES), in one
 * indexed statement whatever the nesting depth. A user token for an `rbac_enabled` resource carries only these
 * (intersected with what the client may ask for); `/tokeninfo` intersects an issued token's scope with them again,
 * so a revocation shows at once.
 */
export async function effectiveUserScopes(db: Sql, userId: string, resourceId: string): Promise<string[]> {
  if (!isUuid(userId) || !isUuid(resourceId)) return [];
  // on the pool: a named prepared statement (planned once per connection); in a transaction, as it comes
  const run = db instanceof Db ? db.read.bind(db) : db.rows.bind(db);
  const rows = await run<{ scope_name: string }>(
    `SELECT s.scope_name FROM scopes s
      WHERE s.resource_id = $2 AND s.id IN (
        SELECT up.scope_id FROM user_permissions up WHERE up.user_id = $1 AND up.resource_id = $2
        UNION ALL
        SELECT rp.scope_id FROM user_roles ur
          JOIN role_permissions rp ON rp.role_id = ur.role_id AND rp.resource_id = $2
         WHERE ur.user_id = $1
        UNION ALL
        SELECT rp.scope_id FROM group_members gm
          JOIN group_closure gc ON gc.descendant_id = gm.group_id
          JOIN group_roles gr ON gr.group_id = gc.ancestor_id
          JOIN role_permissions rp ON rp.role_id = gr.role_id AND rp.resource_id = $2
         WHERE gm.user_id = $1)
      ORDER BY s.scope_name`,
    [userId, resourceId],
  );
  return rows.map((r) => r.scope_name);
}

/** Where a user token acts on a system resource, and the scopes the user holds there (see systemUserAccess). */
export interface SystemUserAccess {
  /** Scope names of the resource the user holds in effect in that place, sorted. */
  scopes: string[];
  /**
   * The tenant the token is confined to on the management API (its records only, as a client that is not global);
   * null: the instance (the client's own confinement applies).
   */
  tenantId: string | null;
}

/** One effective scope with the tenant of the role that gives it (null: a direct permission or a global role). */
export interface ScopeSource {
  scope_name: string;
  tenant_id: string | null;
}

/**
 * The place a user token acts in on a system resource, and its scopes there, from the user's effective scopes
 * with the tenant of their source:
 * - a client bound to a tenant: that tenant (the client reaches nothing else anyway);
 * - else a user of a tenant: its own tenant;
 * - else (a global user) the instance, where only direct permissions and global roles count; a global user holding
 *   such a resource only through the roles of one tenant (a tenant admin) acts in that tenant; through the roles of
 *   several tenants and no global source, it holds nothing (it signs in through a client of the tenant it manages).
 * In a tenant, direct permissions, global roles and that tenant's roles count. `tenantAware` false (the tree API,
 * which has no tenants): only direct permissions and global roles count, wherever the token acts.
 */
export function placeOfSystemAccess(
  sources: readonly ScopeSource[],
  user: { tenantId: string | null },
  client: { isGlobal: boolean; tenantId: string | null },
  tenantAware: boolean,
): SystemUserAccess {
  let tenantId: string | null = null;
  if (!client.isGlobal) tenantId = client.tenantId;
  else if (user.tenantId) tenantId = user.tenantId;
  else if (!sources.some((s) => s.tenant_id === null)) {
    const tenants = new Set(sources.map((s) => s.tenant_id));
    if (tenants.size === 1) tenantId = [...tenants][0]!;
  }
  if (!client.isGlobal && !client.tenantId) return { scopes: [], tenantId: null };
  const names = new Set<string>();
  for (const s of sources) {
    if (s.tenant_id === null || (tenantAware && tenantId !== null && s.tenant_id === tenantId)) {
      names.add(s.scope_name);
    }
  }
  return { scopes: [...names].sort(), tenantId };
}

/**
 * The effective scopes of `userId` on the system resource `resourceId`, each with the tenant of the role giving it
 * (see EFFECTIVE_PERMISSION_SOURCES; one indexed statement), and the user's own tenant.
 */
export async function systemScopeSources(
  db: Sql,
  userId: string,
  resourceId: string,
): Promise<{ userTenantId: string | null; sources: ScopeSource[] }> {
  if (!isUuid(userId) || !isUuid(resourceId)) return { userTenantId: null, sources: [] };
  const run = db instanceof Db ? db.read.bind(db) : db.rows.bind(db);
  const rows = await run<{
    scope_name: string | null;
    tenant_id: string | null;
    user_tenant_id: string | null;
  }>(
    `SELECT s.scope_name, src.tenant_id, u.tenant_id AS user_tenant_id
       FROM users u
       LEFT JOIN (
         SELECT up.scope_id, NULL::uuid AS tenant_id FROM user_permissions up
          WHERE up.user_id = $1 AND up.resource_id = $2
         UNION
         SELECT rp.scope_id, ro.tenant_id FROM user_roles ur
           JOIN roles ro ON ro.id = ur.role_id
           JOIN role_permissions rp ON rp.role_id = ur.role_id AND rp.resource_id = $2
          WHERE ur.user_id = $1
         UNION
         SELECT rp.scope_id, ro.tenant_id FROM group_members gm
           JOIN group_closure gc ON gc.descendant_id = gm.group_id
           JOIN group_roles gr ON gr.group_id = gc.ancestor_id
           JOIN roles ro ON ro.id = gr.role_id
           JOIN role_permissions rp ON rp.role_id = gr.role_id AND rp.resource_id = $2
          WHERE gm.user_id = $1) src ON true
       LEFT JOIN scopes s ON s.id = src.scope_id AND s.resource_id = $2
      WHERE u.id = $1`,
    [userId, resourceId],
  );
  return {
    userTenantId: rows[0]?.user_tenant_id ?? null,
    sources: rows
      .filter((r): r is ScopeSource & { user_tenant_id: string | null } => r.scope_name !== null)
      .map((r) => ({ scope_name: r.scope_name, tenant_id: r.tenant_id })),
  };
}
