import { column, Params, Table, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';

/** What an identity provider said about the user (document 2's `identity_data`), kept in `profile`. */
export interface IdentityData {
  profile_picture: string | null;
  username: string | null;
  user_fullname: string | null;
  email: string | null;
  email_verified: boolean | null;
  phone: string | null;
  phone_verified: boolean | null;
}

/**
 * The `user_identities` table (alias `ui`): rows of an instance; the tenant is the user's, so a caller reaches an
 * identity through its user (findUser) and this table adds the instance. Its columns, declared once:
 * UserIdentityRow, USER_IDENTITY_COLUMNS and the list spec's attributes (apps/identity user-identity.record.ts)
 * derive from them. The record renames and reshapes them (`profile` is `identity_data`), so it maps a row by hand.
 */
export const userIdentitiesTable = new Table({
  name: 'user_identities',
  alias: 'ui',
  tenantScoped: false,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    user_id: column.uuid(),
    provider: column.text(),
    identity_provider_id: column.uuid().nullable(),
    issuer: column.text().nullable(),
    provider_user_id: column.text(),
    /** What the provider said (IdentityData's names, or OIDC claim names in rows written otherwise). */
    profile: column.json<Record<string, unknown>>(),
    last_sign_in_at: column.timestamp().nullable(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
  },
});

/** A user_identities row as USER_IDENTITY_COLUMNS reads it. */
export type UserIdentityRow = RowOf<typeof userIdentitiesTable.columns>;

export const USER_IDENTITY_COLUMNS = userIdentitiesTable.select;

/** The identity `id` of user `userId` (already found in the caller's scope), or 404. */
export async function findUserIdentity(
  db: Sql,
  scope: RecordScope,
  userId: string,
  id: string,
): Promise<UserIdentityRow> {
  const p = new Params([id, userId]);
  const [row] = await db.rows<UserIdentityRow>(
    `SELECT ${USER_IDENTITY_COLUMNS} FROM ${userIdentitiesTable.from}
      WHERE ui.id = $1 AND ui.user_id = $2 AND ${userIdentitiesTable.where(scope, p)}`,
    p.values,
  );
  if (!row) throw notFound(`Identity ${id} of user ${userId} not found`);
  return row;
}

/** The identity of the account `subject` at `issuer` in the instance, with its user's id, or undefined. */
export async function findIdentityByAccount(
  db: Sql,
  instanceId: string,
  issuer: string,
  subject: string,
): Promise<UserIdentityRow | undefined> {
  const scope: RecordScope = { instanceId, restricted: false, tenantId: null };
  const p = new Params([issuer, subject]);
  const [row] = await db.rows<UserIdentityRow>(
    `SELECT ${USER_IDENTITY_COLUMNS} FROM ${userIdentitiesTable.from}
      WHERE ui.issuer = $1 AND ui.provider_user_id = $2 AND ${userIdentitiesTable.where(scope, p)}`,
    p.values,
  );
  return row;
}

/** The columns of an identity as the `identities` child of a user record reads it. */
const CHILD_COLUMNS = [
  'id',
  'user_id',
  'provider',
  'provider_user_id',
  'profile',
  'last_sign_in_at',
  'created_by',
  'created_at',
  'updated_by',
  'updated_at',
] as const;

/** An identity as the `identities` child of a user record reads it. */
export type UserIdentityChildRow = Pick<UserIdentityRow, (typeof CHILD_COLUMNS)[number]>;

/** CHILD_COLUMNS under alias `i`. */
const CHILD_SELECT = userIdentitiesTable.selectOf(CHILD_COLUMNS, 'i');

/**
 * The first `limit` identities (oldest first) of each of `userIds`. No scoping condition: the users were read in
 * the caller's scope, and an identity is reached through its user.
 */
export function identitiesOfUsers(
  db: Sql,
  userIds: string[],
  limit: number,
): Promise<UserIdentityChildRow[]> {
  return db.rows<UserIdentityChildRow>(
    `SELECT * FROM (SELECT ${CHILD_SELECT},
                             row_number() OVER (PARTITION BY i.user_id ORDER BY i.created_at, i.id) AS rn
                        FROM user_identities i WHERE i.user_id = ANY($1::uuid[])) t
        WHERE rn <= ${limit} ORDER BY created_at, id`,
    [userIds],
  );
}
