import { Params, ScopedTable, type RecordScope, type Sql } from '@gatehouse/db';

/**
 * The `tenants` table (alias `t`): rows of an instance. A restricted caller reaches only its own tenant, which the
 * condition below adds (tenants carry no tenant_id of their own).
 */
export const tenantsTable = new ScopedTable({ name: 'tenants', alias: 't', tenantScoped: false });

/** True when `tenantId` is a tenant of the scope's instance (and, for a restricted caller, its own). */
export async function tenantExists(db: Sql, scope: RecordScope, tenantId: string): Promise<boolean> {
  const p = new Params([tenantId]);
  const own = scope.restricted ? ` AND t.id = ${p.add(scope.tenantId)}` : '';
  const found = await db.rows(
    `SELECT 1 FROM ${tenantsTable.from} WHERE t.id = $1 AND ${tenantsTable.where(scope, p)}${own}`,
    p.values,
  );
  return found.length > 0;
}
