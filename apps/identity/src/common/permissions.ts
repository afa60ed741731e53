import { Params, type Sql } from '@gatehouse/db';
import { forbidden, notFound } from '@gatehouse/errors';
import { findResources, resourcesTable } from '@gatehouse/identity-data';
import type { Access } from './access.js';

/** One entry of a grant or revoke body; `resource_id` may be left out under v2 (each scope names its resource). */
export interface PermissionEntry {
  resource_id?: string;
  scopes: string[];
}

/** A scope of a permissions body, resolved. */
export interface ScopePair {
  resource_id: string;
  scope_id: string;
  scope_name: string;
  is_system: boolean;
  /** The resource's tenant (null: global). */
  tenant_id: string | null;
}

export const dedupe = (ids: string[]) => [...new Set(ids.map((i) => i.toLowerCase()))];

/**
 * The (resource, scope) pairs of a permissions body: each resource must exist in the caller's reach and each
 * scope must be one of its resource's (404 otherwise).
 */
export async function resolveScopes(
  m: Sql,
  access: Access,
  entries: PermissionEntry[],
): Promise<ScopePair[]> {
  const scopeIds = dedupe(entries.flatMap((e) => e.scopes));
  const named = dedupe(entries.flatMap((e) => (e.resource_id ? [e.resource_id] : [])));
  if (named.length) await findResources(m, access, named);
  const p = new Params([scopeIds]);
  const found = await m.rows<{
    id: string;
    resource_id: string;
    scope_name: string;
    is_system: boolean;
    tenant_id: string | null;
  }>(
    `SELECT s.id, s.resource_id, s.scope_name, r.is_system, r.tenant_id FROM scopes s JOIN ${resourcesTable.from} ON r.id = s.resource_id
      WHERE s.id = ANY($1::uuid[]) AND ${resourcesTable.where(access, p)}`,
    p.values,
  );
  const byId = new Map(found.map((s) => [s.id, s]));
  const out = new Map<string, ScopePair>();
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
        tenant_id: scope.tenant_id,
      });
    }
  }
  return [...out.values()];
}

/**
 * Nobody grants more than it holds: a scope of a system resource (the management and tree APIs), and any scope a
 * client grants to itself, must already be granted to the calling client (403 naming the scopes otherwise).
 * Without this, `clients:write` would be every scope there is: a caller could grant itself, or a client it
 * made, `clients:read_secrets` or `users:write`.
 */
export async function assertGrantable(
  m: Sql,
  access: Access,
  pairs: ScopePair[],
  /** The client receiving the grant, when it is one (a client granting itself is held to what it has). */
  clientId?: string,
): Promise<void> {
  const toSelf = clientId !== undefined && clientId === access.clientId;
  const guarded = pairs.filter((p) => p.is_system || toSelf);
  if (!guarded.length) return;
  const held = await m.rows<{ scope_id: string }>(
    `SELECT scope_id FROM client_permissions WHERE client_id = $1 AND scope_id = ANY($2::uuid[])`,
    [access.clientId, guarded.map((p) => p.scope_id)],
  );
  const heldIds = new Set(held.map((h) => h.scope_id));
  const missing = guarded.filter((p) => !heldIds.has(p.scope_id)).map((p) => p.scope_name);
  if (missing.length) {
    throw forbidden(
      `A client can grant only scopes it holds itself${toSelf ? ' (and none to itself that it lacks)' : ''}; the caller lacks ${missing.join(', ')}`,
    );
  }
}
