import { column, Params, Table, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AuthenticatorType } from '../entities/user-authenticator.entity.js';

/**
 * The `user_authenticators` table (alias `ua`): a user's second factors, rows of an instance; the tenant is the
 * user's, so a caller reaches an authenticator through its user (findUser) and this table adds the instance. The
 * TOTP secret's ciphertext, the last accepted time step, the recovery codes' hashes and a passkey's credential id,
 * public key, counter and transports are hidden columns: read only by the token server where a factor is checked,
 * never by a record.
 */
export const userAuthenticatorsTable = new Table({
  name: 'user_authenticators',
  alias: 'ua',
  tenantScoped: false,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    user_id: column.uuid(),
    type: column.textOf<AuthenticatorType>(),
    name: column.text(),
    confirmed_at: column.timestamp().nullable(),
    last_used_at: column.timestamp().nullable(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
    /** TOTP: the sealed secret (sealedIn.totpSecret). */
    secret_enc: column.text().nullable().hiddenColumn(),
    /** TOTP: the last accepted time step. */
    last_step: column.text().nullable().hiddenColumn(),
    /** Recovery codes: SHA-256 of each code (`used:` once used). */
    code_hashes: column.json<string[] | null>().hiddenColumn(),
    /** Passkey: the credential id (base64url). Not a secret, but only the token server needs it. */
    credential_id: column.text().nullable().hiddenColumn(),
    /** Passkey: the COSE public key. */
    public_key: column.text().nullable().hiddenColumn(),
    /** Passkey: the signature counter. */
    sign_count: column.text().nullable().hiddenColumn(),
    /** Passkey: the transports the browser reported. */
    transports: column.json<string[] | null>().hiddenColumn(),
    /** Passkey: backup eligible (synced). */
    backup_eligible: column.boolean().nullable().hiddenColumn(),
  },
});

/** A user_authenticators row as USER_AUTHENTICATOR_COLUMNS reads it (no secret, step or hash). */
export type UserAuthenticatorRow = RowOf<typeof userAuthenticatorsTable.columns>;

export const USER_AUTHENTICATOR_COLUMNS = userAuthenticatorsTable.select;

/** The authenticator `id` of user `userId` (already found in the caller's scope), or 404. */
export async function findUserAuthenticator(
  db: Sql,
  scope: RecordScope,
  userId: string,
  id: string,
): Promise<UserAuthenticatorRow> {
  const p = new Params([id, userId]);
  const [row] = await db.rows<UserAuthenticatorRow>(
    `SELECT ${USER_AUTHENTICATOR_COLUMNS} FROM ${userAuthenticatorsTable.from}
      WHERE ua.id = $1 AND ua.user_id = $2 AND ${userAuthenticatorsTable.where(scope, p)}`,
    p.values,
  );
  if (!row) throw notFound(`Authenticator ${id} of user ${userId} not found`);
  return row;
}
