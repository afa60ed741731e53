import { tenantsTable, type TenantRowWithCounts } from '@gatehouse/identity-data';
import { linksOf, mapKeys } from '@gatehouse/query';
import { defineVersionedRecord, type VersionedAttribute } from '../common/records.js';
import { apiBase, type ApiVersion } from '../common/version.js';

/** Child collections of a tenant (linked under `links`, embedded with expand=all). */
export const TENANT_CHILDREN = ['admins'];

/** The counts of a tenant's `aggregations` (v2 `aggregates`), as the record names them. */
export const TENANT_COUNTS = ['users', 'clients', 'resources', 'roles', 'groups', 'admins'] as const;

/**
 * A tenant: `id`, `instance_id`, `tenant_name`, `tenant_description`, `app_metadata`, audit fields, and the counts
 * of what it holds under `aggregations` (`aggregates` in v2); `admins` (User records) is its child collection.
 */
export type TenantRecord = Record<string, unknown> & { id: string };

export const tenantSpecs = defineVersionedRecord({
  name: 'tenant',
  // The columns of the tenants table; sorted case-insensitively as the unique index of names holds them.
  attributes: tenantsTable.attributes<VersionedAttribute>({ tenant_name: { sortColumn: 'lower(t.name)' } }),
  children: { v1: TENANT_CHILDREN, v2: TENANT_CHILDREN },
  extraFields: [{ name: 'aggregations', v2Name: 'aggregates' }, { name: 'links' }],
});

/**
 * The record of a row: its columns (tenantsTable.record, so a read-only column added there needs no edit here),
 * and `aggregations` when the counts were read.
 */
export function tenantRecord(row: TenantRowWithCounts): TenantRecord {
  const rec: TenantRecord = tenantsTable.record(row);
  rec.app_metadata = row.app_metadata ?? [];
  const columns = row as unknown as Record<string, unknown>;
  if (columns.agg_users !== undefined) {
    const aggregations: Record<string, unknown> = { id: row.id, tenant_id: row.id };
    for (const c of TENANT_COUNTS) aggregations[c] = Number(columns[`agg_${c}`] ?? 0);
    Object.assign(aggregations, {
      created_by: row.created_by,
      created_at: row.created_at,
      updated_by: row.updated_by,
      updated_at: row.updated_at,
    });
    rec.aggregations = aggregations;
  }
  return rec;
}

/** The shape in a presentation: v2 says `aggregates`; `links` to the children when not expanded. */
export function shapeTenant(v: ApiVersion) {
  return (rec: TenantRecord, expand: boolean): Record<string, unknown> => {
    const out = mapKeys(rec, {
      aggregations: (x: unknown) => [v === 'v1' ? 'aggregations' : 'aggregates', x],
    });
    if (!expand) out.links = linksOf(`${apiBase(v)}/tenants/${rec.id}`, TENANT_CHILDREN);
    return out;
  };
}
