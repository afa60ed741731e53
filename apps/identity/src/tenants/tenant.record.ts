import type { TenantRowWithCounts } from '@gatehouse/identity-data';
import { linksOf, mapKeys } from '@gatehouse/query';
import { auditAttributes, defineVersionedRecord } from '../common/records.js';
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
  attributes: [
    { name: 'id', column: 't.id', type: 'uuid' },
    { name: 'instance_id', column: 't.instance_id', type: 'uuid' },
    { name: 'tenant_name', column: 't.name', sortColumn: 'lower(t.name)', type: 'string' },
    { name: 'tenant_description', column: 't.description', type: 'string' },
    { name: 'app_metadata', column: 't.app_metadata', type: 'json' },
    ...auditAttributes('t'),
  ],
  children: { v1: TENANT_CHILDREN, v2: TENANT_CHILDREN },
  extraFields: [{ name: 'aggregations', v2Name: 'aggregates' }, { name: 'links' }],
});

/** The record of a row: its columns, and `aggregations` when the counts were read. */
export function tenantRecord(row: TenantRowWithCounts): TenantRecord {
  const rec: TenantRecord = {
    id: row.id,
    instance_id: row.instance_id,
    tenant_name: row.tenant_name,
    tenant_description: row.tenant_description,
    app_metadata: row.app_metadata ?? [],
    created_by: row.created_by,
    created_at: row.created_at,
    updated_by: row.updated_by,
    updated_at: row.updated_at,
  };
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
