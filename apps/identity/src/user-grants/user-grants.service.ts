import { Inject, Injectable } from '@nestjs/common';
import { Db, iso, listPage, type ListPage } from '@gatehouse/db';
import { invalidRequest, notFound } from '@gatehouse/errors';
import { findUser } from '@gatehouse/identity-data';
import type { Access } from '../common/access.js';
import type { ListRequest } from '../common/presenter.js';
import { userGrantRecord, type UserGrantRecord, type UserGrantRow } from './user-grant.record.js';

/** oidc-provider's ids (grants: 43 base64url characters); anything else is a malformed path (400). */
const GRANT_ID = /^[\w-]{1,128}$/;

/** The user's live grants ($1: the user's id, a user found in the caller's scope first). */
const GRANTS_FROM = `(SELECT g.id, g.payload->>'accountId' AS user_id, g.payload->>'clientId' AS client_id,
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

const GRANT_COLUMNS = `ug.id, ug.user_id, ug.client_id, ug.client_name, ug.openid_scope, ug.resources, ug.refresh_tokens,
  ${iso('ug.created_at')} AS created_at, ${iso('ug.expires_at')} AS expires_at`;

/**
 * User Grants: the consents and logins a user gave clients (oidc-provider's Grant artifacts), and their revocation.
 * Revoking deletes the grant and every artifact of it (refresh tokens, codes, stored access tokens) in one
 * transaction; the token server then answers `/tokeninfo` inactive for the grant's JWT access tokens too (it checks
 * that a token's grant still exists), and the change feed drops the bearer caches of the user's tokens.
 */
@Injectable()
export class UserGrantsService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(access: Access, userId: string, req: ListRequest): Promise<ListPage<UserGrantRecord>> {
    const user = await findUser(this.db, access, userId);
    const page = await listPage<UserGrantRow>(this.db, {
      ...req,
      select: () => GRANT_COLUMNS,
      from: GRANTS_FROM,
      conditions: [],
      params: [user.id],
      defaultOrder: 'ORDER BY ug.created_at DESC',
      tieBreak: 'ug.id',
    });
    return { ...page, rows: page.rows.map(userGrantRecord) };
  }

  async revoke(access: Access, userId: string, grantId: string): Promise<void> {
    if (!GRANT_ID.test(grantId)) {
      throw invalidRequest('Path parameter grant_id is not a grant id', [
        { field: 'grant_id', message: 'not a grant id' },
      ]);
    }
    await this.db.transaction(async (tx) => {
      const user = await findUser(tx, access, userId, { lock: true });
      const grant = await tx.one<{ id: string }>(
        `SELECT id FROM oidc_payloads WHERE model = 'Grant' AND id = $1 AND payload->>'accountId' = $2 FOR UPDATE`,
        [grantId, user.id],
      );
      if (!grant) throw notFound(`Grant ${grantId} of user ${user.id} not found`);
      await tx.exec(`DELETE FROM oidc_payloads WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)`, [
        grant.id,
      ]);
    });
  }
}
