import { Inject, Injectable } from '@nestjs/common';
import { Db, listPage, type ListPage } from '@gatehouse/db';
import { invalidRequest, notFound } from '@gatehouse/errors';
import {
  deleteGrant,
  findUser,
  insertEvents,
  lockUserGrant,
  USER_GRANT_COLUMNS,
  USER_GRANTS_FROM,
} from '@gatehouse/identity-data';
import type { Access } from '../common/access.js';
import { auditEvent } from '../common/audit.js';
import type { ListRequest } from '@gatehouse/query';
import { userGrantRecord, type UserGrantRecord, type UserGrantRow } from './user-grant.record.js';

/** oidc-provider's ids (grants: 43 base64url characters); anything else is a malformed path (400). */
const GRANT_ID = /^[\w-]{1,128}$/;

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
      select: () => USER_GRANT_COLUMNS,
      from: USER_GRANTS_FROM,
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
      const grant = await lockUserGrant(tx, grantId, user.id);
      if (!grant) throw notFound(`Grant ${grantId} of user ${user.id} not found`);
      await deleteGrant(tx, grant.id);
      // oidc-provider's artifacts have no audit trigger (the token server writes them on every login)
      const event = auditEvent({
        type: 'mgmt.deleted',
        userId: user.id,
        record: { type: 'user_grant', id: grant.id },
      });
      if (event) await insertEvents(tx, [event]);
    });
  }
}
