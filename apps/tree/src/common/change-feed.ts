import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { TokenValidator } from '@gatehouse/bearer';
import { IdentityChangeFeed, type IdentityChange } from '@gatehouse/changes';

/** Where the identity service announces its changes: its database (DATABASE_URL), when this service is told it. */
export const IDENTITY_CHANGES_URL = Symbol.for('gatehouse.tree.IdentityChangesUrl');

/**
 * Drops cached token checks as soon as the identity service announces a change (a client deleted or stripped of a
 * grant, a user blocked or given a new password, a resource changed): LISTEN on the identity database's
 * `gatehouse_identity_changes`. Without DATABASE_URL (the tree on a database of its own, told only
 * TREE_DATABASE_URL) there is no feed, and BEARER_CACHE_TTL_SEC alone bounds how long a revoked token is served.
 */
@Injectable()
export class TreeChangeFeed
  extends IdentityChangeFeed
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  constructor(
    @Inject(TokenValidator) private readonly tokens: TokenValidator,
    @Inject(IDENTITY_CHANGES_URL) private readonly identityUrl: string | undefined,
  ) {
    super('gatehouse-tree-changes', new Logger('ChangeFeed'));
  }

  protected url(): string | undefined {
    return this.identityUrl;
  }

  protected forget(change: IdentityChange): void {
    this.tokens.forget(change);
  }
}
