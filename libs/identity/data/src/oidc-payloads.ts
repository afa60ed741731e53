import { iso, type Sql } from '@gatehouse/db';

/**
 * oidc-provider's storage format, owned here: the token server's adapter writes it, the management API and the
 * ticket pages read and delete from it, and every statement on the table is in this module.
 *
 * Table `oidc_payloads`: one row per artifact, primary key (model, id).
 *   model        oidc-provider's model name ('Grant', 'Session', 'AccessToken', 'RefreshToken',
 *                'AuthorizationCode', 'DeviceCode', 'Interaction', ...)
 *   id           the artifact's id
 *   payload      the artifact as oidc-provider hands it to its adapter (jsonb; see OidcPayloadFields)
 *   grant_id     payload.grantId, for deleting a grant with its artifacts
 *   user_code    payload.userCode (device flow), uid payload.uid (sessions, interactions): the adapter's look-ups
 *   expires_at   when the provider stops accepting it (plus storeGraceSec); NULL for never
 *   consumed_at  when a code or refresh token was used (the adapter reports it as payload.consumed)
 * A grant deleted (or updated) before its expiry announces `user:<accountId>` on the identity change feed by a
 * trigger of the table (identity migration 1790000700000).
 */

/** The fields of a payload this code reads (oidc-provider writes more). */
export interface OidcPayloadFields {
  /** The user (our users.id) of a Grant, Session, token or code. */
  accountId?: string;
  /** The client (our clients.id) of a Grant, token or code. */
  clientId?: string;
  grantId?: string;
  userCode?: string;
  uid?: string;
  /** Issued at (seconds since the epoch). */
  iat?: number;
  /** A Grant's OpenID scopes: `openid.scope` (space separated). */
  openid?: { scope?: string };
  /** A Grant's scopes per resource (API) identifier, space separated. */
  resources?: Record<string, string>;
  [key: string]: unknown;
}

/** What the adapter reads back of a row. */
export interface OidcPayloadRow<P = OidcPayloadFields> {
  payload: P;
  consumed_at: Date | null;
}

/** The row's artifact still accepted (unexpired). */
const LIVE = '(expires_at IS NULL OR expires_at > now())';

/**
 * How long an expired artifact stays findable, per model. oidc-provider reads a device code with `ignoreExpiration`
 * and answers an expired one `expired_token` (RFC 8628); gone from the store it would be `invalid_grant` ("not
 * found"), so a device polling just after expiry never learned why. Every other model: none (the provider never
 * accepts an expired artifact, and the store forgets it at once).
 */
export function storeGraceSec(model: string): number {
  return model === 'DeviceCode' ? 600 : 0;
}

// The adapter's statements. They return the driver's promise as is (no await of their own): the adapter's reads
// are on the token endpoint's path.

/** Writes (or replaces) an artifact. */
export function upsertOidcPayload(
  sql: Sql,
  model: string,
  id: string,
  payload: { grantId?: string; userCode?: string; uid?: string },
  expiresAt: Date | null,
): Promise<unknown[]> {
  return sql.rows(
    `INSERT INTO oidc_payloads (model, id, payload, grant_id, user_code, uid, expires_at)
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
         user_code = EXCLUDED.user_code, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`,
    [
      model,
      id,
      JSON.stringify(payload),
      payload.grantId ?? null,
      payload.userCode ?? null,
      payload.uid ?? null,
      expiresAt,
    ],
  );
}

/** The live artifact `id` of `model` (zero or one row). */
export function findOidcPayload<P>(sql: Sql, model: string, id: string): Promise<OidcPayloadRow<P>[]> {
  return sql.rows<OidcPayloadRow<P>>(
    `SELECT payload, consumed_at FROM oidc_payloads WHERE model = $1 AND id = $2 AND ${LIVE}`,
    [model, id],
  );
}

/** The live artifact of `model` with `uid` (zero or one row). */
export function findOidcPayloadByUid<P>(sql: Sql, model: string, uid: string): Promise<OidcPayloadRow<P>[]> {
  return sql.rows<OidcPayloadRow<P>>(
    `SELECT payload, consumed_at FROM oidc_payloads WHERE model = $1 AND uid = $2 AND ${LIVE} LIMIT 1`,
    [model, uid],
  );
}

/** The live artifact of `model` with the device flow's `userCode` (zero or one row). */
export function findOidcPayloadByUserCode<P>(
  sql: Sql,
  model: string,
  userCode: string,
): Promise<OidcPayloadRow<P>[]> {
  return sql.rows<OidcPayloadRow<P>>(
    `SELECT payload, consumed_at FROM oidc_payloads WHERE model = $1 AND user_code = $2 AND ${LIVE} LIMIT 1`,
    [model, userCode],
  );
}

/** Marks the artifact used if it was not: one row when this call consumed it, none when it was already used. */
export function consumeOidcPayload(sql: Sql, model: string, id: string): Promise<{ id: string }[]> {
  return sql.rows<{ id: string }>(
    `UPDATE oidc_payloads SET consumed_at = now()
        WHERE model = $1 AND id = $2 AND consumed_at IS NULL RETURNING id`,
    [model, id],
  );
}

/** The grant of artifact `id` of `model`, expired or not (zero or one row). */
export function grantIdOfOidcPayload(
  sql: Sql,
  model: string,
  id: string,
): Promise<{ grant_id: string | null }[]> {
  return sql.rows<{ grant_id: string | null }>(
    'SELECT grant_id FROM oidc_payloads WHERE model = $1 AND id = $2',
    [model, id],
  );
}

/** Deletes the grant `grantId` and every artifact of it (refresh tokens, codes, stored access tokens). */
export function deleteGrant(sql: Sql, grantId: string): Promise<number> {
  return sql.exec(`DELETE FROM oidc_payloads WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)`, [
    grantId,
  ]);
}

/** Deletes artifact `id` of `model`. */
export function deleteOidcPayload(sql: Sql, model: string, id: string): Promise<number> {
  return sql.exec('DELETE FROM oidc_payloads WHERE model = $1 AND id = $2', [model, id]);
}

/** Deletes the artifacts of `model` of grant `grantId`. */
export function deleteOidcPayloadsOfGrant(sql: Sql, model: string, grantId: string): Promise<number> {
  return sql.exec('DELETE FROM oidc_payloads WHERE model = $1 AND grant_id = $2', [model, grantId]);
}

/** Delete expired artifacts in batches; returns how many rows went. */
export async function purgeExpiredPayloads(sql: Sql, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await sql.rows<{ n: number }>(
      `WITH gone AS (
         DELETE FROM oidc_payloads WHERE ctid IN (
           SELECT ctid FROM oidc_payloads WHERE expires_at <= now() LIMIT $1)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [batch],
    );
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < batch) return total;
  }
}

// The statements about a user's artifacts (the management API, ticket pages, account take-over).

/**
 * Removes the user's oidc-provider artifacts from PostgreSQL: its grants, every artifact of those grants (refresh
 * and access tokens, codes) and anything else bound to its account (sessions). JWT access tokens carry their grant
 * id, so /tokeninfo reports them inactive once the grant is gone. The oidc_payloads trigger announces the change to
 * every token server replica (their grant caches drop it).
 */
export async function revokeUserTokens(db: Sql, userId: string): Promise<void> {
  await db.exec(
    `DELETE FROM oidc_payloads
      WHERE payload->>'accountId' = $1
         OR grant_id IN (SELECT id FROM oidc_payloads WHERE model = 'Grant' AND payload->>'accountId' = $1)`,
    [userId],
  );
}

/** Live (unused, unexpired) refresh and stored access tokens of each of `userIds` that has any. */
export function liveTokenCounts(db: Sql, userIds: string[]): Promise<{ user_id: string; n: number }[]> {
  return db.rows<{ user_id: string; n: number }>(
    `SELECT payload->>'accountId' AS user_id, count(*)::int AS n FROM oidc_payloads
          WHERE model IN ('RefreshToken', 'AccessToken') AND payload->>'accountId' = ANY($1::text[])
            AND consumed_at IS NULL AND (expires_at IS NULL OR expires_at > now())
          GROUP BY 1`,
    [userIds],
  );
}

/**
 * The user's live grants as a list source (alias `ug`), $1 the user's id (a user found in the caller's scope
 * first): id, user_id, client_id, client_name, openid_scope, resources (the payload's per-API scopes),
 * refresh_tokens (live ones of the grant), created_at (the payload's iat), expires_at.
 */
export const USER_GRANTS_FROM = `(SELECT g.id, g.payload->>'accountId' AS user_id, g.payload->>'clientId' AS client_id,
          (SELECT c.client_name FROM clients c /* unscoped: the grant's client, of the user's instance (user found in scope) */
            WHERE c.id = CASE WHEN g.payload->>'clientId' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                           THEN (g.payload->>'clientId')::uuid END) AS client_name,
          g.payload->'openid'->>'scope' AS openid_scope, g.payload->'resources' AS resources,
          (SELECT count(*) FROM oidc_payloads r
            WHERE r.grant_id = g.id AND r.model = 'RefreshToken' AND r.consumed_at IS NULL
              AND (r.expires_at IS NULL OR r.expires_at > now()))::int AS refresh_tokens,
          to_timestamp((g.payload->>'iat')::double precision) AS created_at, g.expires_at
     FROM oidc_payloads g
    WHERE g.model = 'Grant' AND g.payload->>'accountId' = $1 AND (g.expires_at IS NULL OR g.expires_at > now())) ug`;

/** The select list of USER_GRANTS_FROM (timestamps as ISO text). */
export const USER_GRANT_COLUMNS = `ug.id, ug.user_id, ug.client_id, ug.client_name, ug.openid_scope, ug.resources, ug.refresh_tokens,
  ${iso('ug.created_at')} AS created_at, ${iso('ug.expires_at')} AS expires_at`;

/** Locks the grant `grantId` of user `userId` for the rest of the transaction; undefined when it has no such grant. */
export function lockUserGrant(tx: Sql, grantId: string, userId: string): Promise<{ id: string } | undefined> {
  return tx.one<{ id: string }>(
    `SELECT id FROM oidc_payloads WHERE model = 'Grant' AND id = $1 AND payload->>'accountId' = $2 FOR UPDATE`,
    [grantId, userId],
  );
}
