import { notFound } from '@gatehouse/errors';
import { rows, type Queryable } from '@gatehouse/identity-data';
import { tenantCondition, type Access } from '../common/access.js';
import { RESOURCE_COLUMNS, type ResourceRow } from './resource.record.js';

export const RESOURCE_AGGREGATION_COLUMNS = `(SELECT count(*) FROM scopes x WHERE x.resource_id = r.id)::int AS agg_scopes,
  (SELECT count(*) FROM client_resources x WHERE x.resource_id = r.id)::int AS agg_clients`;

export type ResourceRowWithCounts = ResourceRow & { agg_scopes?: number; agg_clients?: number };

/** The resource `id` in the caller's instance and reach, or 404. `lock` holds a row lock until the transaction ends. */
export async function findResource(
  db: Queryable,
  access: Access,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<ResourceRowWithCounts> {
  const params: unknown[] = [id, access.instanceId];
  const tenant = tenantCondition(access, 'r.tenant_id', params);
  const [row] = await rows<ResourceRowWithCounts>(
    db,
    `SELECT ${RESOURCE_COLUMNS}${opts.aggregations ? `, ${RESOURCE_AGGREGATION_COLUMNS}` : ''}
       FROM resources r
      WHERE r.id = $1 AND r.instance_id = $2${tenant ? ` AND ${tenant}` : ''}
      ${opts.lock ? 'FOR UPDATE OF r' : ''}`,
    params,
  );
  if (!row) throw notFound(`Resource ${id} not found`);
  return row;
}

/** The resources among `ids` the caller reaches; 404 naming those it does not. */
export async function findResources(db: Queryable, access: Access, ids: string[]): Promise<ResourceRow[]> {
  const params: unknown[] = [ids, access.instanceId];
  const tenant = tenantCondition(access, 'r.tenant_id', params);
  const found = await rows<ResourceRow>(
    db,
    `SELECT ${RESOURCE_COLUMNS} FROM resources r
      WHERE r.id = ANY($1::uuid[]) AND r.instance_id = $2${tenant ? ` AND ${tenant}` : ''}`,
    params,
  );
  const missing = ids.filter((id) => !found.some((r) => r.id === id));
  if (missing.length)
    throw notFound(`Resource${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
  return found;
}
