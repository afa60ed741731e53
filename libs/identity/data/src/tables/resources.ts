import { column, Params, Table, type FullRowOf, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';

/** The resource has scopes (the seeded system resources got theirs without the flag). */
export const SCOPES_ADDED = `(r.scopes_added OR EXISTS (SELECT 1 FROM scopes sx WHERE sx.resource_id = r.id))`;

/**
 * The `resources` table (alias `r`): rows of an instance, each of at most one tenant. Its columns, declared once:
 * ResourceRow, RESOURCE_COLUMNS, the list spec's attributes and the record (apps/identity resource.record.ts)
 * derive from them. The columns of `resource_metadata` are internal: the record nests them under that field.
 */
export const resourcesTable = new Table({
  name: 'resources',
  alias: 'r',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    tenant_id: column.uuid().nullable(),
    resource_type: column.text(),
    resource_name: column.text(),
    resource_description: column.text().nullable(),
    identifier_url: column.text().nullable().internalColumn(),
    is_system: column.boolean().internalColumn(),
    signing_algorithm: column.text().internalColumn(),
    token_lifetime: column.integer().internalColumn(),
    rbac_enabled: column.boolean().internalColumn(),
    scopes_added: column.boolean().computed(SCOPES_ADDED),
    skip_consent_for_first_party: column.boolean().internalColumn(),
    app_metadata: column.json<AppMetadataEntry[]>(),
    created_by: column.uuid().nullable(),
    created_date: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_date: column.timestamp(),
    /** The sealed HS256 key: read only where a secret is answered or kept (findResource). */
    signing_secret_enc: column.text().nullable().hiddenColumn(),
  },
});

/** A resources row as RESOURCE_COLUMNS reads it (timestamps as ISO text; the sealed key only where asked). */
export type ResourceRow = RowOf<typeof resourcesTable.columns>;

export type ResourceRowWithSecret = ResourceRow &
  Pick<FullRowOf<typeof resourcesTable.columns>, 'signing_secret_enc'>;
export type ResourceRowWithCounts = ResourceRow & { agg_scopes?: number; agg_clients?: number };

/** Columns of a resources row (alias `r`), as every query selecting a resource reads them. */
export const RESOURCE_COLUMNS = resourcesTable.select;

/** The counts of a resource's `aggregations` (alias `r`). */
export const RESOURCE_AGGREGATION_COLUMNS = `(SELECT count(*) FROM scopes x WHERE x.resource_id = r.id)::int AS agg_scopes,
  (SELECT count(*) FROM client_resources x WHERE x.resource_id = r.id)::int AS agg_clients`;

/**
 * The resource `id` in the caller's scope, with its sealed signing key, or 404. `lock` holds a row lock until the
 * transaction ends.
 */
export async function findResource(
  db: Sql,
  scope: RecordScope,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<ResourceRowWithSecret & ResourceRowWithCounts> {
  const p = new Params([id]);
  const [row] = await db.rows<ResourceRowWithSecret & ResourceRowWithCounts>(
    `SELECT ${RESOURCE_COLUMNS}, r.signing_secret_enc${opts.aggregations ? `, ${RESOURCE_AGGREGATION_COLUMNS}` : ''}
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
