import { iso, Params, type Sql, type Timestamp } from '@gatehouse/db';
import { groupByParent } from '@gatehouse/query';
import type { Access } from '../common/access.js';
import { CLIENT_COLUMNS, clientsTable, RESOURCE_COLUMNS, resourcesTable } from '@gatehouse/identity-data';
import { resourceSummary, type ResourceRow } from '../resources/resource.record.js';
import { scopeData, type ScopeRecord } from '../scopes/scope.record.js';
import type { ClientResourceRecord } from './client-resource.record.js';
import type { ClientPermissionRecord } from './client-permission.record.js';
import type { ResourceClientRecord } from './resource-client.record.js';
import { clientRecord, type ClientRow } from '../clients/client.record.js';

/** Most children embedded per record with `expand=all`; their list operations page through all of them. */
export const EMBED_LIMIT = 100;

export const CLIENT_RESOURCE_COLUMNS = `cr.id AS cr_id, cr.client_id AS cr_client_id, cr.resource_id AS cr_resource_id,
  cr.created_by AS cr_created_by, ${iso('cr.created_at')} AS cr_created_at, cr.updated_by AS cr_updated_by,
  ${iso('cr.updated_at')} AS cr_updated_at, ${RESOURCE_COLUMNS}`;
/** The resources linked to a client (found in the caller's scope first): any resource it was authorized to. */
export const CLIENT_RESOURCE_FROM = `client_resources cr JOIN ${resourcesTable.from} /* scoped: through the client */ ON r.id = cr.resource_id`;

export interface ClientResourceRow extends ResourceRow {
  cr_id: string;
  cr_client_id: string;
  cr_resource_id: string;
  cr_created_by: string | null;
  cr_created_at: Timestamp;
  cr_updated_by: string | null;
  cr_updated_at: Timestamp;
}

export function clientResourceRecord(row: ClientResourceRow): ClientResourceRecord {
  return {
    id: row.cr_id,
    client_id: row.cr_client_id,
    resource_id: row.cr_resource_id,
    resource_data: resourceSummary(row),
    created_by: row.cr_created_by,
    created_at: row.cr_created_at,
    updated_by: row.cr_updated_by,
    updated_at: row.cr_updated_at,
  };
}

export const CLIENT_PERMISSION_COLUMNS = `p.id AS p_id, p.client_id AS p_client_id, p.resource_id AS p_resource_id,
  p.scope_id AS p_scope_id, p.created_by AS p_created_by, ${iso('p.created_at')} AS p_created_at,
  p.updated_by AS p_updated_by, ${iso('p.updated_at')} AS p_updated_at, s.instance_id AS s_instance_id, s.scope_name AS s_scope_name,
  s.scope_description AS s_scope_description, s.created_by AS s_created_by, ${iso('s.created_at')} AS s_created_at,
  s.updated_by AS s_updated_by, ${iso('s.updated_at')} AS s_updated_at, ${RESOURCE_COLUMNS}`;
export const CLIENT_PERMISSION_FROM = `client_permissions p JOIN ${resourcesTable.from} /* scoped: through the client */ ON r.id = p.resource_id
  JOIN scopes s ON s.id = p.scope_id`;

export interface ClientPermissionRow extends ResourceRow {
  p_id: string;
  p_client_id: string;
  p_resource_id: string;
  p_scope_id: string;
  p_created_by: string | null;
  p_created_at: Timestamp;
  p_updated_by: string | null;
  p_updated_at: Timestamp;
  s_instance_id: string;
  s_scope_name: string;
  s_scope_description: string | null;
  s_created_by: string | null;
  s_created_at: Timestamp;
  s_updated_by: string | null;
  s_updated_at: Timestamp;
}

export function clientPermissionRecord(row: ClientPermissionRow): ClientPermissionRecord {
  const scope: ScopeRecord = {
    id: row.p_scope_id,
    instance_id: row.s_instance_id,
    resource_id: row.p_resource_id,
    scope_name: row.s_scope_name,
    scope_description: row.s_scope_description,
    created_by: row.s_created_by,
    created_at: row.s_created_at,
    updated_by: row.s_updated_by,
    updated_at: row.s_updated_at,
  };
  return {
    id: row.p_id,
    client_id: row.p_client_id,
    resource_id: row.p_resource_id,
    scope_id: row.p_scope_id,
    resource_data: resourceSummary(row),
    scope_data: scopeData(scope),
    created_by: row.p_created_by,
    created_at: row.p_created_at,
    updated_by: row.p_updated_by,
    updated_at: row.p_updated_at,
  };
}

/** The resources authorized to each client (at most EMBED_LIMIT each, oldest first), in one query. */
export async function resourcesOfClients(
  db: Sql,
  clientIds: string[],
): Promise<Map<string, ClientResourceRecord[]>> {
  if (!clientIds.length) return new Map();
  const found = await db.rows<ClientResourceRow>(
    `SELECT * FROM (
       SELECT ${CLIENT_RESOURCE_COLUMNS},
              row_number() OVER (PARTITION BY cr.client_id ORDER BY cr.created_at, cr.id) AS rn
         FROM ${CLIENT_RESOURCE_FROM} WHERE cr.client_id = ANY($1::uuid[])) t
      WHERE rn <= ${EMBED_LIMIT} ORDER BY cr_created_at, cr_id`,
    [clientIds],
  );
  return groupByParent(found, (r) => r.cr_client_id, clientResourceRecord);
}

/** The permissions granted to each client (at most EMBED_LIMIT each), in one query. */
export async function permissionsOfClients(
  db: Sql,
  clientIds: string[],
): Promise<Map<string, ClientPermissionRecord[]>> {
  if (!clientIds.length) return new Map();
  const found = await db.rows<ClientPermissionRow>(
    `SELECT * FROM (
       SELECT ${CLIENT_PERMISSION_COLUMNS},
              row_number() OVER (PARTITION BY p.client_id ORDER BY p.created_at, p.id) AS rn
         FROM ${CLIENT_PERMISSION_FROM} WHERE p.client_id = ANY($1::uuid[])) t
      WHERE rn <= ${EMBED_LIMIT} ORDER BY p_created_at, p_id`,
    [clientIds],
  );
  return groupByParent(found, (p) => p.p_client_id, clientPermissionRecord);
}

export const RESOURCE_CLIENT_COLUMNS = `${CLIENT_COLUMNS}, r.id AS rc_resource_id, cr.id AS cr_id,
  cr.created_by AS cr_created_by, ${iso('cr.created_at')} AS cr_created_at, cr.updated_by AS cr_updated_by,
  ${iso('cr.updated_at')} AS cr_updated_at`;

export interface ResourceClientRow extends ClientRow {
  rc_resource_id: string;
  cr_id: string | null;
  cr_created_by: string | null;
  cr_created_at: Timestamp | null;
  cr_updated_by: string | null;
  cr_updated_at: Timestamp | null;
}

export function resourceClientRecord(row: ResourceClientRow): ResourceClientRecord {
  return {
    id: row.cr_id,
    resource_id: row.rc_resource_id,
    client_id: row.id,
    client_data: clientRecord(row),
    authorized: row.cr_id !== null,
    created_by: row.cr_created_by,
    created_at: row.cr_created_at,
    updated_by: row.cr_updated_by,
    updated_at: row.cr_updated_at,
  };
}

/** The clients each resource is authorized to (at most EMBED_LIMIT each, oldest first), in one query. */
export async function clientsOfResources(
  db: Sql,
  access: Access,
  resourceIds: string[],
): Promise<Map<string, ResourceClientRecord[]>> {
  if (!resourceIds.length) return new Map();
  const p = new Params([resourceIds]);
  const found = await db.rows<ResourceClientRow>(
    `SELECT * FROM (
       SELECT ${RESOURCE_CLIENT_COLUMNS},
              row_number() OVER (PARTITION BY cr.resource_id ORDER BY cr.created_at, cr.id) AS rn
         FROM client_resources cr JOIN ${clientsTable.from} ON c.id = cr.client_id
         JOIN ${resourcesTable.from} /* scoped: the resources were found in scope */ ON r.id = cr.resource_id
        WHERE cr.resource_id = ANY($1::uuid[]) AND ${clientsTable.where(access, p)}) t
      WHERE rn <= ${EMBED_LIMIT} ORDER BY cr_created_at, cr_id`,
    p.values,
  );
  return groupByParent(found, (c) => c.rc_resource_id, resourceClientRecord);
}
