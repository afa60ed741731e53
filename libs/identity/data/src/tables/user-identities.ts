import { iso, Params, ScopedTable, type RecordScope, type Sql, type Timestamp } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';

/**
 * The `user_identities` table (alias `ui`): rows of an instance; the tenant is the user's, so a caller reaches an
 * identity through its user (findUser) and this table adds the instance.
 */
export const userIdentitiesTable = new ScopedTable({
  name: 'user_identities',
  alias: 'ui',
  tenantScoped: false,
});

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

/** A user_identities row as USER_IDENTITY_COLUMNS reads it. */
export interface UserIdentityRow {
  id: string;
  instance_id: string;
  user_id: string;
  provider: string;
  identity_provider_id: string | null;
  issuer: string | null;
  provider_user_id: string;
  profile: Partial<IdentityData>;
  last_sign_in_at: Timestamp | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export const USER_IDENTITY_COLUMNS = `ui.id, ui.instance_id, ui.user_id, ui.provider, ui.identity_provider_id,
  ui.issuer, ui.provider_user_id, ui.profile, ${iso('ui.last_sign_in_at')} AS last_sign_in_at, ui.created_by,
  ${iso('ui.created_at')} AS created_at, ui.updated_by, ${iso('ui.updated_at')} AS updated_at`;

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

/** An identity as the `identities` child of a user record reads it. */
export interface UserIdentityChildRow {
  id: string;
  user_id: string;
  provider: string;
  provider_user_id: string;
  profile: Record<string, unknown>;
  last_sign_in_at: Timestamp | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

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
    `SELECT * FROM (SELECT i.id, i.user_id, i.provider, i.provider_user_id, i.profile,
                             ${iso('i.last_sign_in_at')} AS last_sign_in_at, i.created_by,
                             ${iso('i.created_at')} AS created_at, i.updated_by, ${iso('i.updated_at')} AS updated_at,
                             row_number() OVER (PARTITION BY i.user_id ORDER BY i.created_at, i.id) AS rn
                        FROM user_identities i WHERE i.user_id = ANY($1::uuid[])) t
        WHERE rn <= ${limit} ORDER BY created_at, id`,
    [userIds],
  );
}
