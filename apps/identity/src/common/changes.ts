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
import { TokenValidator } from '@gatehouse/bearer';
import { SettlingChangeFeed, type IdentityChange } from '@gatehouse/changes';
import { Db } from '@gatehouse/db';
import { AccessCache } from './access.js';

/**
 * Keeps the caches of this replica in step with changes made through any replica: a dedicated connection LISTENs on
 * the identity change channel and drops what a change makes stale, so a client made tenant-bound, deleted or
 * stripped of a grant is held to it by every replica at once (not after the caller cache's 5 s or the bearer
 * cache's TTL).
 * The changes are announced by the triggers of the changed tables alone (@gatehouse/changes watched.ts), in the
 * writing transaction: no service code announces anything.
 * When the connection is lost it reconnects with back-off and then forgets everything (notifications sent in
 * between were missed); until then the caches' own lifetimes bound staleness, as without this feed.
 */
@Injectable()
export class ChangeFeed extends SettlingChangeFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(AccessCache) private readonly callers: AccessCache,
    @Inject(TokenValidator) private readonly tokens: TokenValidator,
  ) {
    super('gatehouse-identity-changes', db, new Logger('ChangeFeed'));
  }

  protected url(): string | undefined {
    return this.db.url;
  }

  protected forget(change: IdentityChange): void {
    if (change.kind === 'client') this.callers.forget(change.id);
    else if (change.kind === 'all') this.callers.clear();
    this.tokens.forget(change);
  }
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Exact invalidation: after every mutating request (success or error), before its response is sent,
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
