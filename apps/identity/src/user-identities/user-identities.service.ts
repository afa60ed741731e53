import { Inject, Injectable } from '@nestjs/common';
import { Db, listPage, Params, type ListPage } from '@gatehouse/db';
import {
  findUser,
  findUserIdentity,
  USER_IDENTITY_COLUMNS,
  userIdentitiesTable,
  type UserIdentityRow,
} from '@gatehouse/identity-data';
import type { Access } from '../common/access.js';
import type { ListRequest } from '@gatehouse/query';
import { userIdentityRecord, type UserIdentityRecord } from './user-identity.record.js';

/**
 * User Identities: the accounts at identity providers linked to a user (made by token exchange). A user the caller
 * does not reach (another instance, another tenant for a caller that is not global) is 404.
 */
@Injectable()
export class UserIdentitiesService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(access: Access, userId: string, req: ListRequest): Promise<ListPage<UserIdentityRecord>> {
    const user = await findUser(this.db, access, userId);
    const p = new Params([user.id]);
    const page = await listPage<UserIdentityRow>(this.db, {
      ...req,
      select: () => USER_IDENTITY_COLUMNS,
      from: userIdentitiesTable.from,
      conditions: ['ui.user_id = $1', ...userIdentitiesTable.conditions(access, p)],
      params: p,
      tieBreak: 'ui.id',
    });
    return { ...page, rows: page.rows.map(userIdentityRecord) };
  }

  /** Unlinks the account: the user stays; the account's next token exchange links or creates a user anew. */
  async remove(access: Access, userId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const user = await findUser(tx, access, userId, { lock: true });
      const identity = await findUserIdentity(tx, access, user.id, id);
      await tx.exec(`DELETE FROM user_identities WHERE id = $1`, [identity.id]);
    });
  }
}
