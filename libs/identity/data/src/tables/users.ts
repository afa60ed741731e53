import { iso, Params, ScopedTable, type RecordScope, type Sql, type Timestamp } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';

/** The `users` table (alias `u`): rows of an instance, each of at most one tenant. */
export const usersTable = new ScopedTable({ name: 'users', alias: 'u', tenantScoped: true });

/** A users row as USER_COLUMNS reads it (timestamps as ISO text; never the password hash). */
export interface UserRow {
  id: string;
  instance_id: string;
  tenant_id: string | null;
  user_email: string | null;
  user_name: string | null;
  nickname: string | null;
  name: string | null;
  email_verified: boolean;
  phone_number: string | null;
  phone_verified: boolean;
  user_metadata: Record<string, unknown>;
  app_metadata: AppMetadataEntry[];
  is_blocked: boolean;
  is_invited: boolean;
  invited_at: Timestamp | null;
  last_login_at: Timestamp | null;
  login_count: number;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export type UserRowWithCounts = UserRow & {
  agg_identities?: number;
  agg_permissions?: number;
  agg_roles?: number;
};

export const USER_COLUMNS = `u.id, u.instance_id, u.tenant_id, u.user_email, u.user_name, u.nickname, u.name,
  u.email_verified, u.phone_number, u.phone_verified, u.user_metadata, u.app_metadata, u.is_blocked, u.is_invited,
  ${iso('u.invited_at')} AS invited_at, ${iso('u.last_login_at')} AS last_login_at, u.login_count, u.created_by,
  ${iso('u.created_at')} AS created_at, u.updated_by, ${iso('u.updated_at')} AS updated_at`;

/** The counts of a user's `aggregations` kept in rows (alias `u`). */
export const USER_AGGREGATION_COLUMNS = `(SELECT count(*) FROM user_identities x WHERE x.user_id = u.id)::int AS agg_identities,
  (SELECT count(*) FROM user_permissions x WHERE x.user_id = u.id)::int AS agg_permissions,
  (SELECT count(*) FROM user_roles x WHERE x.user_id = u.id)::int AS agg_roles`;

/** The user `id` in the caller's scope, or 404. `lock` holds a row lock until the transaction ends. */
export async function findUser(
  db: Sql,
  scope: RecordScope,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<UserRowWithCounts> {
  const p = new Params([id]);
  const [row] = await db.rows<UserRowWithCounts>(
    `SELECT ${USER_COLUMNS}${opts.aggregations ? `, ${USER_AGGREGATION_COLUMNS}` : ''} FROM ${usersTable.from}
      WHERE u.id = $1 AND ${usersTable.where(scope, p)}${opts.lock ? ' FOR UPDATE OF u' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`User ${id} not found`);
  return row;
}

/** The users among `ids` in the caller's scope; 404 naming those that are not. */
export async function findUsers(db: Sql, scope: RecordScope, ids: string[]): Promise<UserRow[]> {
  const p = new Params([ids]);
  const found = await db.rows<UserRow>(
    `SELECT ${USER_COLUMNS} FROM ${usersTable.from} WHERE u.id = ANY($1::uuid[]) AND ${usersTable.where(scope, p)}`,
    p.values,
  );
  const missing = ids.filter((id) => !found.some((u) => u.id === id));
  if (missing.length) throw notFound(`User${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
  return found;
}
