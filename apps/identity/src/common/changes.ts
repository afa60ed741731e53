import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  changePayload,
  forgetValidations,
  IDENTITY_CHANGES_CHANNEL,
  IdentityChangeFeed,
  TokenValidator,
  type IdentityChange,
} from '@gatehouse/bearer';
import { Db, type Sql } from '@gatehouse/db';
import { AccessCache } from './access.js';

/** The PostgreSQL channel every identity replica listens on. */
export const CHANGES_CHANNEL = IDENTITY_CHANGES_CHANNEL;

/** What changed, as far as the caches of a replica (and of the tree service) care. */
export type Change = IdentityChange;

/**
 * Announces a change to every replica (this one included) and to the tree service, in the caller's transaction:
 * PostgreSQL delivers the notification at commit, and never for a rolled-back transaction.
 */
export async function announce(db: Sql, change: Change): Promise<void> {
  await db.exec(`SELECT pg_notify($1, $2)`, [CHANGES_CHANNEL, changePayload(change)]);
}

/**
 * Keeps the caches of this replica in step with changes made through any replica: a dedicated connection LISTENs on
 * CHANGES_CHANNEL and drops what a change makes stale, so a client made tenant-bound, deleted or stripped of a
 * grant is held to it by every replica at once (not after the caller cache's 5 s or the bearer cache's TTL).
 * When the connection is lost it reconnects with back-off and then forgets everything (notifications sent in
 * between were missed); until then the caches' own lifetimes bound staleness, as without this feed.
 */
@Injectable()
export class ChangeFeed extends IdentityChangeFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(AccessCache) private readonly callers: AccessCache,
    @Inject(TokenValidator) private readonly tokens: TokenValidator,
  ) {
    super('gatehouse-identity-changes', new Logger('ChangeFeed'));
  }

  protected url(): string | undefined {
    return this.db.url;
  }

  protected forget(change: Change): void {
    if (change.kind === 'client') this.callers.forget(change.id);
    else if (change.kind === 'all') this.callers.clear();
    forgetValidations(this.tokens, change);
  }
}
