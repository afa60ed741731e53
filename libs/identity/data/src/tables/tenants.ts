import { column, Params, Table, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';
import type { MfaPolicy } from '../entities/mfa-policy.js';

/**
 * The `tenants` table (alias `t`): rows of an instance. A restricted caller reaches only its own tenant, which the
 * condition below adds (tenants carry no tenant_id of their own). Its columns, declared once under the names of the
 * record (`name` is `tenant_name`): TenantRow, TENANT_COLUMNS, the list spec's attributes and the record
 * (apps/identity tenant.record.ts) derive from them.
 */
export const tenantsTable = new Table({
  name: 'tenants',
  alias: 't',
  tenantScoped: false,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    tenant_name: column.text().from('name'),
    tenant_description: column.text().nullable().from('description'),
    app_metadata: column.json<AppMetadataEntry[]>(),
    /** MFA policy (null: inherit the instance's). */
    mfa: column.textOf<MfaPolicy>().nullable(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
  },
});

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

/**
 * The conditions confining tenants (alias `t`) to what the scope reaches: its instance's, and for a restricted
 * caller only its own tenant (none at all when it has none).
 */
export function tenantConditions(scope: RecordScope, p: Params): string[] {
  const out = tenantsTable.conditions(scope, p);
  if (scope.restricted) out.push(scope.tenantId === null ? 'FALSE' : `t.id = ${p.add(scope.tenantId)}`);
  return out;
}

/** A tenants row as TENANT_COLUMNS reads it, under the names of the record (timestamps as ISO text). */
export type TenantRow = RowOf<typeof tenantsTable.columns>;

export type TenantRowWithCounts = TenantRow & {
  agg_users?: number;
  agg_clients?: number;
  agg_resources?: number;
  agg_roles?: number;
  agg_groups?: number;
  agg_admins?: number;
};

export const TENANT_COLUMNS = tenantsTable.select;

/** The tenant's admin role (admin-roles.ts) is not counted as its roles: it goes with the tenant. */
const NOT_ADMIN_ROLE = ' AND x.system_role IS NULL';

/** What a tenant holds, counted (its records of each kind, its admins); alias `t`. */
export const TENANT_AGGREGATION_COLUMNS = `(SELECT count(*) FROM users x WHERE x.tenant_id = t.id)::int AS agg_users,
  (SELECT count(*) FROM clients x WHERE x.tenant_id = t.id)::int AS agg_clients,
  (SELECT count(*) FROM resources x WHERE x.tenant_id = t.id)::int AS agg_resources,
  (SELECT count(*) FROM roles x WHERE x.tenant_id = t.id${NOT_ADMIN_ROLE})::int AS agg_roles,
  (SELECT count(*) FROM groups x WHERE x.tenant_id = t.id)::int AS agg_groups,
  (SELECT count(*) FROM tenant_admins x WHERE x.tenant_id = t.id)::int AS agg_admins`;

/** The kinds of record a tenant holds; a tenant holding any of them cannot be deleted. */
export const TENANT_HELD_KINDS = ['users', 'clients', 'resources', 'roles', 'groups'] as const;

/** The tenant `id` in the caller's reach, or 404. `lock` holds a row lock until the transaction ends. */
export async function findTenant(
  db: Sql,
  scope: RecordScope,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<TenantRowWithCounts> {
  const p = new Params([id]);
  const [row] = await db.rows<TenantRowWithCounts>(
    `SELECT ${TENANT_COLUMNS}${opts.aggregations ? `, ${TENANT_AGGREGATION_COLUMNS}` : ''}
       FROM ${tenantsTable.from}
      WHERE t.id = $1 AND ${tenantConditions(scope, p).join(' AND ')}${opts.lock ? ' FOR UPDATE OF t' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`Tenant ${id} not found`);
  return row;
}

export interface TenantInput {
  tenant_name?: string;
  tenant_description?: string | null;
  app_metadata?: AppMetadataEntry[];
  mfa?: MfaPolicy | null;
}

/** The unique index of tenant names and its 409 message. */
export const TENANT_CONFLICTS = { ux_tenants_name: 'A tenant with this tenant_name exists in the instance' };

/** INSERT of a tenant of `instanceId`; returns its id (a taken name throws the unique violation). */
export async function insertTenant(
  tx: Sql,
  instanceId: string,
  input: TenantInput,
  actor: string | null,
): Promise<string> {
  const [row] = await tx.rows<{ id: string }>(
    `INSERT INTO tenants (instance_id, name, description, app_metadata, created_by, updated_by, mfa)
     VALUES ($1, $2, $3, $4::jsonb, $5, $5, $6) RETURNING id`,
    [
      instanceId,
      input.tenant_name,
      input.tenant_description ?? null,
      JSON.stringify(input.app_metadata ?? []),
      actor,
      input.mfa ?? null,
    ],
  );
  return row.id;
}

/** UPDATE of the fields given (the others keep their value). */
export async function updateTenant(
  tx: Sql,
  current: TenantRow,
  input: TenantInput,
  actor: string | null,
): Promise<void> {
  await tx.exec(
    `UPDATE tenants SET name = $2, description = $3, app_metadata = $4::jsonb, updated_by = $5, updated_at = now(),
                        mfa = $6
      WHERE id = $1`,
    [
      current.id,
      input.tenant_name ?? current.tenant_name,
      input.tenant_description !== undefined ? input.tenant_description : current.tenant_description,
      JSON.stringify(input.app_metadata ?? current.app_metadata ?? []),
      actor,
      input.mfa !== undefined ? input.mfa : current.mfa,
    ],
  );
}

/** How many records of each kind the tenant holds (the kinds that forbid deleting it). */
export async function tenantHoldings(tx: Sql, tenantId: string): Promise<Record<string, number>> {
  const [row] = await tx.rows<Record<string, number>>(
    `SELECT ${TENANT_HELD_KINDS.map((k) => `(SELECT count(*) FROM ${k} x WHERE x.tenant_id = $1${k === 'roles' ? NOT_ADMIN_ROLE : ''})::int AS ${k}`).join(', ')}`,
    [tenantId],
  );
  return row;
}
