import { forbidden, notFound } from '@gatehouse/errors';
import { rows, type Queryable } from '@gatehouse/identity-data';
import { tenantCondition, type Access } from '../common/access.js';
import { CLIENT_COLUMNS, type ClientRow } from './client.record.js';

export type ClientRowWithSecret = ClientRow & { client_secret_enc: string | null };

export const AGGREGATION_COLUMNS = `(SELECT count(*) FROM client_resources x WHERE x.client_id = c.id)::int AS agg_resources,
  (SELECT count(*) FROM client_permissions x WHERE x.client_id = c.id)::int AS agg_permissions`;

/**
 * The client `id` of the caller's instance and reach, or 404 (unknown, other instance, or another tenant's for a
 * caller that is not global). `lock` takes a row lock for the rest of the transaction.
 */
export async function findClient(
  db: Queryable,
  access: Access,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<ClientRowWithSecret & { agg_resources?: number; agg_permissions?: number }> {
  const params: unknown[] = [id, access.instanceId];
  const tenant = tenantCondition(access, 'c.tenant_id', params);
  const [row] = await rows<ClientRowWithSecret>(
    db,
    `SELECT ${CLIENT_COLUMNS}, c.client_secret_enc${opts.aggregations ? `, ${AGGREGATION_COLUMNS}` : ''}
       FROM clients c
      WHERE c.id = $1 AND c.instance_id = $2${tenant ? ` AND ${tenant}` : ''}
      ${opts.lock ? 'FOR UPDATE OF c' : ''}`,
    params,
  );
  if (!row) throw notFound(`Client ${id} not found`);
  return row;
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

/** The clients among `ids` the caller reaches; 404 naming those it does not. */
export async function findClients(db: Queryable, access: Access, ids: string[]): Promise<ClientRow[]> {
  const params: unknown[] = [ids, access.instanceId];
  const tenant = tenantCondition(access, 'c.tenant_id', params);
  const found = await rows<ClientRow>(
    db,
    `SELECT ${CLIENT_COLUMNS} FROM clients c
      WHERE c.id = ANY($1::uuid[]) AND c.instance_id = $2${tenant ? ` AND ${tenant}` : ''}`,
    params,
  );
  const missing = ids.filter((id) => !found.some((c) => c.id === id));
  if (missing.length)
    throw notFound(`Client${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
  return found;
}
