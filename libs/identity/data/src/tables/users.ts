import { column, Params, Table, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';

/**
 * The `users` table (alias `u`): rows of an instance, each of at most one tenant. Its columns, declared once:
 * UserRow, USER_COLUMNS and the list spec's attributes (apps/identity user.record.ts) derive from them. The record
 * renames several of them (`nickname` is `user_nickname`...), so user.record.ts maps a row by hand.
 */
export const usersTable = new Table({
  name: 'users',
  alias: 'u',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    tenant_id: column.uuid().nullable().internalColumn(),
    user_email: column.text().nullable(),
    user_name: column.text().nullable(),
    nickname: column.text().nullable(),
    name: column.text().nullable(),
    email_verified: column.boolean(),
    phone_number: column.text().nullable(),
    phone_verified: column.boolean(),
    user_metadata: column.json<Record<string, unknown>>(),
    app_metadata: column.json<AppMetadataEntry[]>(),
    is_blocked: column.boolean(),
    is_invited: column.boolean(),
    invited_at: column.timestamp().nullable(),
    last_login_at: column.timestamp().nullable().internalColumn(),
    login_count: column.integer().internalColumn(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
    /** The argon2id hash: read only where a password is checked, never by a record. */
    password_hash: column.text().nullable().hiddenColumn(),
  },
});

/** A users row as USER_COLUMNS reads it (timestamps as ISO text; never the password hash). */
export type UserRow = RowOf<typeof usersTable.columns>;

export type UserRowWithCounts = UserRow & {
  agg_identities?: number;
  agg_permissions?: number;
  agg_roles?: number;
  /** Confirmed second factors (TOTP, recovery codes). */
  agg_authenticators?: number;
};

export const USER_COLUMNS = usersTable.select;

/** The counts of a user's `aggregations` kept in rows (alias `u`). */
export const USER_AGGREGATION_COLUMNS = `(SELECT count(*) FROM user_identities x WHERE x.user_id = u.id)::int AS agg_identities,
  (SELECT count(*) FROM user_permissions x WHERE x.user_id = u.id)::int AS agg_permissions,
  (SELECT count(*) FROM user_roles x WHERE x.user_id = u.id)::int AS agg_roles,
  (SELECT count(*) FROM user_authenticators x
    WHERE x.user_id = u.id AND x.confirmed_at IS NOT NULL)::int AS agg_authenticators`;

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
