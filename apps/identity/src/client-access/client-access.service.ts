import { Inject, Injectable } from '@nestjs/common';
import { conflict, forbidden, notFound } from '@gatehouse/errors';
import { Db, type ListPage, listPage, Params, type Sql } from '@gatehouse/db';
import type { Access } from '../common/access.js';
import type { ListRequest } from '../common/presenter.js';
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
import { announce } from '../common/changes.js';

/** One entry of a grant or revoke body; `resource_id` may be left out under v2 (each scope names its resource). */
export interface PermissionEntry {
  resource_id?: string;
  scopes: string[];
}

const dedupe = (ids: string[]) => [...new Set(ids.map((i) => i.toLowerCase()))];

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
      for (const c of clients) await announce(m, { kind: 'client', id: c.id });
    });
  }

  /** Grants scopes; each resource must be authorized to the client first (409). 204, idempotent. */
  async grant(access: Access, clientId: string, entries: PermissionEntry[]) {
    await this.db.transaction(async (m) => {
      const client = await findClient(m, access, clientId, { lock: true });
      const pairs = await this.resolveScopes(m, access, entries);
      await this.assertGrantable(m, access, client, pairs);
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
      const pairs = await this.resolveScopes(m, access, entries);
      if (client.is_default && pairs.some((p) => p.is_system)) {
        throw forbidden('Permissions on system resources cannot be revoked from the default client');
      }
      await m.exec(`DELETE FROM client_permissions WHERE client_id = $1 AND scope_id = ANY($2::uuid[])`, [
        client.id,
        pairs.map((p) => p.scope_id),
      ]);
      await announce(m, { kind: 'client', id: client.id });
    });
  }

  /**
   * Nobody grants more than it holds: a scope of a system resource (the management and tree APIs), and any scope a
   * client grants to itself, must already be granted to the calling client (403 naming the scopes otherwise).
   * Without this, `clients:write` would be every scope there is: a caller could grant itself, or a client it
   * made, `clients:read_secrets` or `users:write`.
   */
  private async assertGrantable(
    m: Sql,
    access: Access,
    client: ClientRow,
    pairs: { scope_id: string; scope_name: string; is_system: boolean }[],
  ): Promise<void> {
    const guarded = pairs.filter((p) => p.is_system || client.id === access.clientId);
    if (!guarded.length) return;
    const held = await m.rows<{ scope_id: string }>(
      `SELECT scope_id FROM client_permissions WHERE client_id = $1 AND scope_id = ANY($2::uuid[])`,
      [access.clientId, guarded.map((p) => p.scope_id)],
    );
    const heldIds = new Set(held.map((h) => h.scope_id));
    const missing = guarded.filter((p) => !heldIds.has(p.scope_id)).map((p) => p.scope_name);
    if (missing.length) {
      throw forbidden(
        `A client can grant only scopes it holds itself${client.id === access.clientId ? ' (and none to itself that it lacks)' : ''}; the caller lacks ${missing.join(', ')}`,
      );
    }
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

  /**
   * The (resource, scope) pairs of a permissions body: each resource must exist in the caller's reach and each
   * scope must be one of its resource's (404 otherwise).
   */
  private async resolveScopes(
    m: Sql,
    access: Access,
    entries: PermissionEntry[],
  ): Promise<{ resource_id: string; scope_id: string; scope_name: string; is_system: boolean }[]> {
    const scopeIds = dedupe(entries.flatMap((e) => e.scopes));
    const named = dedupe(entries.flatMap((e) => (e.resource_id ? [e.resource_id] : [])));
    if (named.length) await findResources(m, access, named);
    const p = new Params([scopeIds]);
    const found = await m.rows<{ id: string; resource_id: string; scope_name: string; is_system: boolean }>(
      `SELECT s.id, s.resource_id, s.scope_name, r.is_system FROM scopes s JOIN ${resourcesTable.from} ON r.id = s.resource_id
        WHERE s.id = ANY($1::uuid[]) AND ${resourcesTable.where(access, p)}`,
      p.values,
    );
    const byId = new Map(found.map((s) => [s.id, s]));
    const out = new Map<
      string,
      { resource_id: string; scope_id: string; scope_name: string; is_system: boolean }
    >();
    for (const e of entries) {
      const resourceId = e.resource_id?.toLowerCase();
      for (const raw of e.scopes) {
        const id = raw.toLowerCase();
        const scope = byId.get(id);
        if (!scope) throw notFound(`Scope ${id} not found`);
        if (resourceId && scope.resource_id !== resourceId) {
          throw notFound(`Scope ${id} is not a scope of resource ${resourceId}`);
        }
        out.set(id, {
          resource_id: scope.resource_id,
          scope_id: id,
          scope_name: scope.scope_name,
          is_system: scope.is_system,
        });
      }
    }
    return [...out.values()];
  }
}
