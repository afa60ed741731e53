import { forbidden, invalidRequest } from '@gatehouse/errors';
import { rows, type Queryable } from '@gatehouse/identity-data';
import type { Access } from './access.js';

/**
 * The tenant a new record gets. A caller that is not global creates only in its own tenant (naming another is 403);
 * a global caller may name any tenant of its instance (an unknown one is 400) or none.
 */
export async function tenantForNewRecord(
  db: Queryable,
  access: Access,
  requested: string | null | undefined,
  field = 'tenant_id',
): Promise<string | null> {
  if (access.restricted) {
    if (access.tenantId === null) {
      throw forbidden(
        'A client that is not global and has no tenant can create nothing; give it a tenant_id',
      );
    }
    if (requested !== undefined && requested !== access.tenantId) {
      throw forbidden(`A client that is not global can only create records of its own tenant (${field})`);
    }
    return access.tenantId;
  }
  if (requested === undefined || requested === null) return null;
  await assertTenant(db, access, requested, field);
  return requested.toLowerCase();
}

/** 400 unless `tenantId` is a tenant of the caller's instance. */
export async function assertTenant(db: Queryable, access: Access, tenantId: string, field = 'tenant_id') {
  const found = await rows(db, `SELECT 1 FROM tenants WHERE id = $1 AND instance_id = $2`, [
    tenantId,
    access.instanceId,
  ]);
  if (!found.length) {
    throw invalidRequest(`${field}: no tenant with this id in the instance`, [
      { field, message: 'no tenant with this id' },
    ]);
  }
}
