import type { Sql } from '@gatehouse/db';
import { forbidden, invalidRequest } from '@gatehouse/errors';
import { tenantExists } from '@gatehouse/identity-data';
import type { Access } from './access.js';

/**
 * The tenant a new record gets. A caller that is not global creates only in its own tenant (naming another is 403);
 * a global caller may name any tenant of its instance (an unknown one is 400) or none.
 */
export async function tenantForNewRecord(
  db: Sql,
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

/** 400 unless `tenantId` is a tenant of the caller's instance (and reach). */
export async function assertTenant(db: Sql, access: Access, tenantId: string, field = 'tenant_id') {
  if (!(await tenantExists(db, access, tenantId))) {
    throw invalidRequest(`${field}: no tenant with this id in the instance`, [
      { field, message: 'no tenant with this id' },
    ]);
  }
}

/** Refuses changes the caller's reach forbids: a client that is not global cannot make or move global clients. */
export function assertTenantChange(
  access: Access,
  change: { is_global?: boolean; tenant_id?: string | null },
): void {
  if (!access.restricted) return;
  if (change.is_global === true) throw forbidden('A client that is not global cannot make a client global');
  if (change.tenant_id !== undefined && change.tenant_id !== access.tenantId) {
    throw forbidden('A client that is not global cannot move a client to another tenant');
  }
}
