import { Inject, Injectable } from '@nestjs/common';
import { conflict, forbidden } from '@gatehouse/errors';
import { Db, type ListPage, listPage, Params, type Sql } from '@gatehouse/db';
import type { Access } from '../common/access.js';
import type { ListRequest } from '@gatehouse/query';
import type { ClientRow } from '../clients/client.record.js';
import {
  clientsTable,
  findClient,
  findClients,
  findResource,
  findResources,
  resourcesTable,
} from '@gatehouse/identity-data';
import type { ResourceRow } from '../resources/resource.record.js';
import {
  CLIENT_PERMISSION_COLUMNS,
  CLIENT_PERMISSION_FROM,
  CLIENT_RESOURCE_COLUMNS,
  CLIENT_RESOURCE_FROM,
  clientPermissionRecord,
  clientResourceRecord,
  RESOURCE_CLIENT_COLUMNS,
  resourceClientRecord,
  type ClientPermissionRow,
  type ClientResourceRow,
  type ResourceClientRow,
} from './client-access.queries.js';
import type { ClientPermissionRecord } from './client-permission.record.js';
import type { ClientResourceRecord } from './client-resource.record.js';
import type { ResourceClientRecord } from './resource-client.record.js';
import { assertGrantable, dedupe, resolveScopes, type PermissionEntry } from '../common/permissions.js';

export type { PermissionEntry };

/**
 * Which resources are authorized to which clients (client_resources) and which scopes each client was granted
 * (client_permissions), seen from either side. Bulk links are idempotent. Revoking a resource drops the client's
 * permissions on it (foreign key cascade). The token server reads these rows on every token request.
 */
@Injectable()
export class ClientAccessService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async listClientResources(
    access: Access,
    clientId: string,
    req: ListRequest,
  ): Promise<ListPage<ClientResourceRecord>> {
    await findClient(this.db, access, clientId);
    const page = await listPage<ClientResourceRow>(this.db, {
      ...req,
      select: () => CLIENT_RESOURCE_COLUMNS,
      from: CLIENT_RESOURCE_FROM,
      conditions: ['cr.client_id = $1'],
      params: [clientId],
    });
    return { ...page, rows: page.rows.map(clientResourceRecord) };
  }

  async listClientPermissions(
    access: Access,
    clientId: string,
    req: ListRequest,
  ): Promise<ListPage<ClientPermissionRecord>> {
    await findClient(this.db, access, clientId);
    const page = await listPage<ClientPermissionRow>(this.db, {
      ...req,
      select: () => CLIENT_PERMISSION_COLUMNS,
      from: CLIENT_PERMISSION_FROM,
      conditions: ['p.client_id = $1'],
      params: [clientId],
    });
    return { ...page, rows: page.rows.map(clientPermissionRecord) };
  }

  /** Every client the caller reaches, each with `authorized` for this resource. */
  async listResourceClients(
    access: Access,
    resourceId: string,
    req: ListRequest,
  ): Promise<ListPage<ResourceClientRecord>> {
    await findResource(this.db, access, resourceId);
    const params = new Params([resourceId]);
    const page = await listPage<ResourceClientRow>(this.db, {
      ...req,
      select: () => RESOURCE_CLIENT_COLUMNS,
      // the resource was found in the caller's scope just above
      from: `${clientsTable.from} JOIN ${resourcesTable.from} /* scoped: found above */ ON r.id = $1
             LEFT JOIN client_resources cr ON cr.client_id = c.id AND cr.resource_id = r.id`,
      conditions: clientsTable.conditions(access, params),
      params,
      // An unauthorized client has no authorization id: the client id keeps the order total.
      tieBreak: 'c.id ASC',
    });
    return { ...page, rows: page.rows.map(resourceClientRecord) };
  }

  /** Authorizes every resource to every client given (one side is the path, the other the body). 204, idempotent. */
  async authorize(access: Access, clientIds: string[], resourceIds: string[], side: 'client' | 'resource') {
    await this.db.transaction(async (m) => {
      const { clients, resources } = await this.sides(
        m,
        access,
        dedupe(clientIds),
        dedupe(resourceIds),
        side,
      );
      for (const c of clients) {
        for (const r of resources) {
          if (r.tenant_id && c.tenant_id && r.tenant_id !== c.tenant_id) {
            throw conflict(`Resource ${r.id} belongs to another tenant than client ${c.id}`);
          }
        }
      }
      await m.exec(
        `INSERT INTO client_resources (instance_id, client_id, resource_id, created_by, updated_by)
         SELECT $1, c, r, $4, $4 FROM unnest($2::uuid[]) AS c CROSS JOIN unnest($3::uuid[]) AS r
         ON CONFLICT (client_id, resource_id) DO NOTHING`,
        [access.instanceId, clients.map((c) => c.id), resources.map((r) => r.id), access.actor],
      );
    });
  }

  /** Revokes the resources from the clients, with the permissions on them. 204, idempotent. */
  async revoke(access: Access, clientIds: string[], resourceIds: string[], side: 'client' | 'resource') {
    await this.db.transaction(async (m) => {
      const { clients, resources } = await this.sides(
        m,
        access,
        dedupe(clientIds),
        dedupe(resourceIds),
        side,
      );
      this.protectDefaultClient(clients, resources);
      await m.exec(
        `DELETE FROM client_resources WHERE client_id = ANY($1::uuid[]) AND resource_id = ANY($2::uuid[])`,
        [clients.map((c) => c.id), resources.map((r) => r.id)],
      );
    });
  }

  /** Grants scopes; each resource must be authorized to the client first (409). 204, idempotent. */
  async grant(access: Access, clientId: string, entries: PermissionEntry[]) {
    await this.db.transaction(async (m) => {
      const client = await findClient(m, access, clientId, { lock: true });
      const pairs = await resolveScopes(m, access, entries);
      await assertGrantable(m, access, pairs, client.id);
      const resourceIds = [...new Set(pairs.map((p) => p.resource_id))];
      const authorized = await m.rows<{ resource_id: string }>(
        `SELECT resource_id FROM client_resources WHERE client_id = $1 AND resource_id = ANY($2::uuid[])`,
        [client.id, resourceIds],
      );
      const missing = resourceIds.filter((r) => !authorized.some((a) => a.resource_id === r));
      if (missing.length) {
        throw conflict(
          `Resource ${missing.join(', ')} is not authorized to client ${client.id}: authorize the resource first`,
        );
      }
      await m.exec(
        `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id, created_by, updated_by)
         SELECT $1, $2, x.resource_id, x.scope_id, $5, $5
           FROM unnest($3::uuid[], $4::uuid[]) AS x(resource_id, scope_id)
         ON CONFLICT (client_id, scope_id) DO NOTHING`,
        [
          access.instanceId,
          client.id,
          pairs.map((p) => p.resource_id),
          pairs.map((p) => p.scope_id),
          access.actor,
        ],
      );
    });
  }

  /** Revokes granted scopes. 204, idempotent (a scope not granted is no error). */
  async revokePermissions(access: Access, clientId: string, entries: PermissionEntry[]) {
    await this.db.transaction(async (m) => {
      const client = await findClient(m, access, clientId, { lock: true });
      const pairs = await resolveScopes(m, access, entries);
      if (client.is_default && pairs.some((p) => p.is_system)) {
        throw forbidden('Permissions on system resources cannot be revoked from the default client');
      }
      await m.exec(`DELETE FROM client_permissions WHERE client_id = $1 AND scope_id = ANY($2::uuid[])`, [
        client.id,
        pairs.map((p) => p.scope_id),
      ]);
    });
  }

  /** The path side must exist (404); the body side too, every id of it (404 naming the missing ones). */
  private async sides(
    m: Sql,
    access: Access,
    clientIds: string[],
    resourceIds: string[],
    side: 'client' | 'resource',
  ): Promise<{ clients: ClientRow[]; resources: ResourceRow[] }> {
    if (side === 'client') {
      const clients = [await findClient(m, access, clientIds[0], { lock: true })];
      return { clients, resources: await findResources(m, access, resourceIds) };
    }
    const resources = [await findResource(m, access, resourceIds[0], { lock: true })];
    return { clients: await findClients(m, access, clientIds), resources };
  }

  /** The default client keeps its system resources: revoking them would lock the instance's management out. */
  private protectDefaultClient(clients: ClientRow[], resources: ResourceRow[]) {
    if (clients.some((c) => c.is_default) && resources.some((r) => r.is_system)) {
      throw forbidden('System resources cannot be revoked from the default client');
    }
  }
}
