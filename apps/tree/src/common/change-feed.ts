import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { forgetValidations, IdentityChangeListener, TokenValidator } from '@gatehouse/bearer';

/** Where the identity service announces its changes: its database (DATABASE_URL), when this service is told it. */
export const IDENTITY_CHANGES_URL = Symbol.for('gatehouse.tree.IdentityChangesUrl');

/**
 * Drops cached token checks as soon as the identity service announces a change (a client deleted or stripped of a
 * grant, a user blocked or given a new password, a resource changed): LISTEN on the identity database's
 * `gatehouse_identity_changes`. Without DATABASE_URL (the tree on a database of its own, told only
 * TREE_DATABASE_URL) there is no feed, and BEARER_CACHE_TTL_SEC alone bounds how long a revoked token is served.
 */
@Injectable()
export class TreeChangeFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('ChangeFeed');
  private listener: IdentityChangeListener | undefined;

  constructor(
    @Inject(TokenValidator) private readonly tokens: TokenValidator,
    @Inject(IDENTITY_CHANGES_URL) private readonly url: string | undefined,
  ) {}

  /** Notifications applied (for tests). */
  get applied(): number {
    return this.listener?.applied ?? 0;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.url) return;
    this.listener = new IdentityChangeListener({
      url: this.url,
      applicationName: 'gatehouse-tree-changes',
      onChange: (change) => forgetValidations(this.tokens, change),
      log: this.log,
    });
    await this.listener.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener?.stop();
  }
}
