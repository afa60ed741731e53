import { iso, Params, ScopedTable, type RecordScope, type Sql, type Timestamp } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';

/** The `roles` table (alias `ro`): rows of an instance, each of at most one tenant. */
export const rolesTable = new ScopedTable({ name: 'roles', alias: 'ro', tenantScoped: true });

/** A roles row as ROLE_COLUMNS reads it (timestamps as ISO text). */
export interface RoleRow {
  id: string;
  instance_id: string;
  tenant_id: string | null;
  role_name: string;
  role_description: string | null;
  app_metadata: AppMetadataEntry[];
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export type RoleRowWithCounts = RoleRow & {
  agg_permissions?: number;
  agg_users?: number;
  agg_groups?: number;
};

export const ROLE_COLUMNS = `ro.id, ro.instance_id, ro.tenant_id, ro.role_name, ro.role_description, ro.app_metadata,
  ro.created_by, ${iso('ro.created_at')} AS created_at, ro.updated_by, ${iso('ro.updated_at')} AS updated_at`;

/** The counts of a role's `aggregations` (alias `ro`). */
export const ROLE_AGGREGATION_COLUMNS = `(SELECT count(*) FROM role_permissions x WHERE x.role_id = ro.id)::int AS agg_permissions,
  (SELECT count(*) FROM user_roles x WHERE x.role_id = ro.id)::int AS agg_users,
  (SELECT count(*) FROM group_roles x WHERE x.role_id = ro.id)::int AS agg_groups`;

/** The role `id` in the caller's scope, or 404. `lock` holds a row lock until the transaction ends. */
export async function findRole(
  db: Sql,
  scope: RecordScope,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<RoleRowWithCounts> {
  const p = new Params([id]);
  const [row] = await db.rows<RoleRowWithCounts>(
    `SELECT ${ROLE_COLUMNS}${opts.aggregations ? `, ${ROLE_AGGREGATION_COLUMNS}` : ''}
       FROM ${rolesTable.from}
      WHERE ro.id = $1 AND ${rolesTable.where(scope, p)}${opts.lock ? ' FOR UPDATE OF ro' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`Role ${id} not found`);
  return row;
}

/** The roles among `ids` in the caller's scope; 404 naming those that are not. */
export async function findRoles(db: Sql, scope: RecordScope, ids: string[]): Promise<RoleRow[]> {
  const p = new Params([ids]);
  const found = await db.rows<RoleRow>(
    `SELECT ${ROLE_COLUMNS} FROM ${rolesTable.from} WHERE ro.id = ANY($1::uuid[]) AND ${rolesTable.where(scope, p)}`,
    p.values,
  );
  const missing = ids.filter((id) => !found.some((r) => r.id === id));
  if (missing.length) throw notFound(`Role${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
  return found;
}
