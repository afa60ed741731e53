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
