import {
  Inject,
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { catchError, concatMap, from, throwError, type Observable } from 'rxjs';
import {
  CACHE_ACKS_CHANNEL,
  CacheSettler,
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
 * Explicit announcements stay (a trigger of the changed table announces the same: PostgreSQL folds identical
 * notifications of one transaction), so the feed of a database migrated before 1790000700000 still works.
 *
 * Keeps the caches of this replica in step with changes made through any replica: a dedicated connection LISTENs on
 * CHANGES_CHANNEL and drops what a change makes stale, so a client made tenant-bound, deleted or stripped of a
 * grant is held to it by every replica at once (not after the caller cache's 5 s or the bearer cache's TTL).
 * When the connection is lost it reconnects with back-off and then forgets everything (notifications sent in
 * between were missed); until then the caches' own lifetimes bound staleness, as without this feed.
 */
@Injectable()
export class ChangeFeed extends IdentityChangeFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Waits for the token server replicas' acknowledgements after a change (see SettleInterceptor). */
  readonly settler: CacheSettler;

  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(AccessCache) private readonly callers: AccessCache,
    @Inject(TokenValidator) private readonly tokens: TokenValidator,
  ) {
    const log = new Logger('ChangeFeed');
    super('gatehouse-identity-changes', log);
    this.settler = new CacheSettler(db, log);
  }

  /**
   * Returns once every live cache subscriber (token server replica) has applied every change committed so far
   * (3 s at most); never throws (a failure is logged: the change itself is done).
   */
  async settle(): Promise<void> {
    if (!this.url()) return;
    await this.settler.settle().catch((err: unknown) => {
      new Logger('ChangeFeed').warn(`cache settle failed: ${(err as Error)?.message ?? err}`);
    });
  }

  protected override channels(): string[] {
    return [CACHE_ACKS_CHANNEL];
  }

  protected override notified(channel: string, payload: string): void {
    if (channel === CACHE_ACKS_CHANNEL) this.settler.ack(payload);
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

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Issue 16, exact invalidation: after every mutating request (success or error), before its response is sent,
 * wait until every token server replica has applied the changes it committed (ChangeFeed.settle). A client, user,
 * permission or resource changed through this API counts at the token server from the very next request.
 * Interceptors run after the handler's transaction has committed, and settle runs on the pool (autocommit).
 */
@Injectable()
export class SettleInterceptor implements NestInterceptor {
  constructor(@Inject(ChangeFeed) private readonly feed: ChangeFeed) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const method =
      ctx.getType() === 'http' ? ctx.switchToHttp().getRequest<{ method?: string }>().method : undefined;
    if (!method || !MUTATING.has(method)) return next.handle();
    return next.handle().pipe(
      concatMap(async (value: unknown) => {
        await this.feed.settle();
        return value;
      }),
      catchError((err: unknown) => from(this.feed.settle()).pipe(concatMap(() => throwError(() => err)))),
    );
  }
}
