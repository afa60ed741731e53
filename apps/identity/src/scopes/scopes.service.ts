import { Db, listPage, type ListPage, type Sql, withConflicts } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
import { forbidden, notFound } from '@gatehouse/errors';
import type { Access } from '../common/access.js';
import type { ListRequest } from '@gatehouse/query';
import { findResource } from '@gatehouse/identity-data';
import { SCOPE_COLUMNS, type ScopeRecord } from './scope.record.js';

export interface ScopeInput {
  scope_name?: string;
  scope_description?: string | null;
}

const CONFLICTS = { uq_scopes_name: 'The resource already has a scope with this scope_name' };

/**
 * Scopes of a resource. The scopes of system resources are what the services check: they are protected (403).
 * A renamed scope is carried under its new name by the next token; a deleted one drops its permissions.
 */
@Injectable()
export class ScopesService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(access: Access, resourceId: string, req: ListRequest): Promise<ListPage<ScopeRecord>> {
    await findResource(this.db, access, resourceId);
    return listPage<ScopeRecord>(this.db, {
      ...req,
      select: () => SCOPE_COLUMNS,
      from: 'scopes s',
      conditions: ['s.resource_id = $1'],
      params: [resourceId],
    });
  }

  async get(access: Access, resourceId: string, scopeId: string): Promise<ScopeRecord> {
    await findResource(this.db, access, resourceId);
    return this.find(this.db, resourceId, scopeId);
  }

  async create(access: Access, resourceId: string, input: ScopeInput): Promise<ScopeRecord> {
    return this.db.transaction(async (m) => {
      const resource = await findResource(m, access, resourceId, { lock: true });
      if (resource.is_system) throw forbidden('The scopes of a system resource cannot be changed');
      const [row] = await withConflicts(CONFLICTS, () =>
        m.rows<{ id: string }>(
          `INSERT INTO scopes (instance_id, resource_id, scope_name, scope_description, created_by, updated_by)
           VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`,
          [
            resource.instance_id,
            resource.id,
            input.scope_name,
            input.scope_description ?? null,
            access.actor,
          ],
        ),
      );
      await m.exec(`UPDATE resources SET scopes_added = true WHERE id = $1 AND NOT scopes_added`, [
        resource.id,
      ]);
      return this.find(m, resource.id, row.id);
    });
  }

  async update(access: Access, resourceId: string, scopeId: string, input: ScopeInput): Promise<ScopeRecord> {
    return this.db.transaction(async (m) => {
      const resource = await findResource(m, access, resourceId, { lock: true });
      const cur = await this.find(m, resource.id, scopeId);
      if (resource.is_system) throw forbidden('The scopes of a system resource cannot be changed');
      await withConflicts(CONFLICTS, () =>
        m.exec(
          `UPDATE scopes SET scope_name = $2, scope_description = $3, updated_by = $4, updated_at = now()
            WHERE id = $1`,
          [
            cur.id,
            input.scope_name ?? cur.scope_name,
            input.scope_description !== undefined ? input.scope_description : cur.scope_description,
            access.actor,
          ],
        ),
      );
      return this.find(m, resource.id, cur.id);
    });
  }

  async remove(access: Access, resourceId: string, scopeId: string): Promise<void> {
    await this.db.transaction(async (m) => {
      const resource = await findResource(m, access, resourceId, { lock: true });
      const cur = await this.find(m, resource.id, scopeId);
      if (resource.is_system) throw forbidden('The scopes of a system resource cannot be changed');
      await m.exec(`DELETE FROM scopes WHERE id = $1`, [cur.id]);
      await m.exec(
        `UPDATE resources SET scopes_added = EXISTS (SELECT 1 FROM scopes WHERE resource_id = $1) WHERE id = $1`,
        [resource.id],
      );
    });
  }

  private async find(db: Sql, resourceId: string, scopeId: string): Promise<ScopeRecord> {
    const [row] = await db.rows<ScopeRecord>(
      `SELECT ${SCOPE_COLUMNS} FROM scopes s WHERE s.id = $1 AND s.resource_id = $2`,
      [scopeId, resourceId],
    );
    if (!row) throw notFound(`Scope ${scopeId} of resource ${resourceId} not found`);
    return row;
  }
}
