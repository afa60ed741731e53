import { Inject, Injectable } from '@nestjs/common';
import { Db, listPage, Params, type ListPage } from '@gatehouse/db';
import {
  findUser,
  findUserAuthenticator,
  insertEvents,
  USER_AUTHENTICATOR_COLUMNS,
  userAuthenticatorsTable,
  type UserAuthenticatorRow,
} from '@gatehouse/identity-data';
import type { ListRequest } from '@gatehouse/query';
import type { Access } from '../common/access.js';
import { auditEvent } from '../common/audit.js';
import { userAuthenticatorRecord, type UserAuthenticatorRecord } from './user-authenticator.record.js';

/**
 * A user's authenticators (second factors): listed, removed one by one, or all at once (a person who lost the
 * device: the next sign-in enrols a new one when the policy requires it). A user the caller does not reach (another
 * instance, another tenant for a caller that is not global) is 404. A removal is recorded as `mfa.removed`.
 */
@Injectable()
export class UserAuthenticatorsService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(access: Access, userId: string, req: ListRequest): Promise<ListPage<UserAuthenticatorRecord>> {
    const user = await findUser(this.db, access, userId);
    const p = new Params([user.id]);
    const page = await listPage<UserAuthenticatorRow>(this.db, {
      ...req,
      select: () => USER_AUTHENTICATOR_COLUMNS,
      from: userAuthenticatorsTable.from,
      conditions: ['ua.user_id = $1', ...userAuthenticatorsTable.conditions(access, p)],
      params: p,
      tieBreak: 'ua.id',
    });
    return { ...page, rows: page.rows.map(userAuthenticatorRecord) };
  }

  /**
   * Removes one authenticator. Removing the TOTP also removes the recovery codes made with it (they stand in for
   * it and nothing else), so the user is left without a second factor, as after a reset.
   */
  async remove(access: Access, userId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const user = await findUser(tx, access, userId, { lock: true });
      const found = await findUserAuthenticator(tx, access, user.id, id);
      await tx.exec(
        `DELETE FROM user_authenticators
          WHERE id = $1 OR ($3 AND user_id = $2 AND type = 'recovery_codes')`,
        [found.id, user.id, found.type === 'totp'],
      );
      const event = auditEvent({
        type: 'mfa.removed',
        userId: user.id,
        tenantId: user.tenant_id,
        record: { type: 'user_authenticator', id: found.id },
        details: { authenticator_type: found.type },
      });
      if (event) await insertEvents(tx, [event]);
    });
  }

  /** Removes every authenticator of the user (and its second-factor failure count); idempotent. */
  async reset(access: Access, userId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const user = await findUser(tx, access, userId, { lock: true });
      const removed = await tx.exec(`DELETE FROM user_authenticators WHERE user_id = $1`, [user.id]);
      await tx.exec(`DELETE FROM mfa_failures WHERE user_id = $1`, [user.id]);
      if (!removed) return;
      const event = auditEvent({
        type: 'mfa.removed',
        userId: user.id,
        tenantId: user.tenant_id,
        record: { type: 'user', id: user.id },
        details: { authenticator_type: 'all', count: removed },
      });
      if (event) await insertEvents(tx, [event]);
    });
  }
}
