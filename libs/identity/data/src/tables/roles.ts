import { column, Params, Table, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';

/**
 * The `roles` table (alias `ro`): rows of an instance, each of at most one tenant. Its columns, declared once:
 * RoleRow, ROLE_COLUMNS, the record spec and the record (apps/identity common/named-records.ts) derive from them.
 */
export const rolesTable = new Table({
  name: 'roles',
  alias: 'ro',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    tenant_id: column.uuid().nullable(),
    role_name: column.text(),
    role_description: column.text().nullable(),
    app_metadata: column.json<AppMetadataEntry[]>(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
  },
});

/** A roles row as ROLE_COLUMNS reads it (timestamps as ISO text). */
export type RoleRow = RowOf<typeof rolesTable.columns>;

export type RoleRowWithCounts = RoleRow & {
  agg_permissions?: number;
  agg_users?: number;
  agg_groups?: number;
};

export const ROLE_COLUMNS = rolesTable.select;

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
