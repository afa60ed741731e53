/**
 * The scopes of resource `resourceId` that user `userId` holds in effect: its own permissions, plus its roles',
 * plus those of every group it is in and every ancestor group, plus those groups' roles (docs/contract.md, identity).
 * A user token for an `rbac_enabled` resource carries only these (intersected with what the client may ask for);
 * `/tokeninfo` intersects an issued token's scope with them again, so a revocation shows at once.
 *
 * The identity schema has no permission source for users yet (user permissions, roles and groups are issue 13):
 * until they exist every user's effective scope set is empty, which is the answer an RBAC resource must give a
 * user nobody granted anything. Issue 13 replaces the body with its one indexed query; callers keep this
 * signature. The `db` parameter is the handle that query will run on.
 */
export async function effectiveUserScopes(_db: Sql, userId: string, resourceId: string): Promise<string[]> {
  if (!isUuid(userId) || !isUuid(resourceId)) return [];
  return [];
}
import { isUuid, type Sql } from '@gatehouse/db';
