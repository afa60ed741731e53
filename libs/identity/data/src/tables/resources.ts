import { iso, Params, ScopedTable, type RecordScope, type Sql, type Timestamp } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';

/** The `resources` table (alias `r`): rows of an instance, each of at most one tenant. */
export const resourcesTable = new ScopedTable({ name: 'resources', alias: 'r', tenantScoped: true });

/** A resources row as RESOURCE_COLUMNS reads it (timestamps as ISO text). */
export interface ResourceRow {
  id: string;
  instance_id: string;
  tenant_id: string | null;
  resource_type: string;
  resource_name: string;
  resource_description: string | null;
  identifier_url: string | null;
  is_system: boolean;
  signing_algorithm: string;
  signing_secret_enc: string | null;
  token_lifetime: number;
  rbac_enabled: boolean;
  scopes_added: boolean;
  skip_consent_for_first_party: boolean;
  app_metadata: AppMetadataEntry[];
  created_by: string | null;
  created_date: Timestamp;
  updated_by: string | null;
  updated_date: Timestamp;
}

export type ResourceRowWithCounts = ResourceRow & { agg_scopes?: number; agg_clients?: number };

/** The resource has scopes (the seeded system resources got theirs without the flag). */
export const SCOPES_ADDED = `(r.scopes_added OR EXISTS (SELECT 1 FROM scopes sx WHERE sx.resource_id = r.id))`;

/** Columns of a resources row (alias `r`), as every query selecting a resource reads them. */
export const RESOURCE_COLUMNS = `r.id, r.instance_id, r.tenant_id, r.resource_type, r.resource_name,
  r.resource_description, r.identifier_url, r.is_system, r.signing_algorithm, r.signing_secret_enc, r.token_lifetime,
  r.rbac_enabled, ${SCOPES_ADDED} AS scopes_added, r.skip_consent_for_first_party, r.app_metadata, r.created_by,
  ${iso('r.created_date')} AS created_date, r.updated_by, ${iso('r.updated_date')} AS updated_date`;

/** The counts of a resource's `aggregations` (alias `r`). */
export const RESOURCE_AGGREGATION_COLUMNS = `(SELECT count(*) FROM scopes x WHERE x.resource_id = r.id)::int AS agg_scopes,
  (SELECT count(*) FROM client_resources x WHERE x.resource_id = r.id)::int AS agg_clients`;

/** The resource `id` in the caller's scope, or 404. `lock` holds a row lock until the transaction ends. */
export async function findResource(
  db: Sql,
  scope: RecordScope,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<ResourceRowWithCounts> {
  const p = new Params([id]);
  const [row] = await db.rows<ResourceRowWithCounts>(
    `SELECT ${RESOURCE_COLUMNS}${opts.aggregations ? `, ${RESOURCE_AGGREGATION_COLUMNS}` : ''}
       FROM ${resourcesTable.from}
      WHERE r.id = $1 AND ${resourcesTable.where(scope, p)}
      ${opts.lock ? 'FOR UPDATE OF r' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`Resource ${id} not found`);
  return row;
}

/** The resources among `ids` in the caller's scope; 404 naming those that are not. */
export async function findResources(db: Sql, scope: RecordScope, ids: string[]): Promise<ResourceRow[]> {
  const p = new Params([ids]);
  const found = await db.rows<ResourceRow>(
    `SELECT ${RESOURCE_COLUMNS} FROM ${resourcesTable.from}
      WHERE r.id = ANY($1::uuid[]) AND ${resourcesTable.where(scope, p)}`,
    p.values,
  );
  const missing = ids.filter((id) => !found.some((r) => r.id === id));
  if (missing.length)
    throw notFound(`Resource${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
  return found;
}
