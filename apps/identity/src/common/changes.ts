import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { TokenValidator } from '@gatehouse/bearer';
import type { Queryable } from '@gatehouse/identity-data';
import { AccessCache } from './access.js';

/** The PostgreSQL channel every identity replica listens on. */
export const CHANGES_CHANNEL = 'gatehouse_identity_changes';

/**
 * What changed, as far as the caches of a replica care:
 * - `client`: a client's reach (global, tenant), existence or grants: its caller row and its tokens' cached checks;
 * - `user`: a user was blocked or deleted: its tokens' cached checks;
 * - `all`: anything wider (a resource went): every cached caller and token check.
 */
export type Change = { kind: 'client'; id: string } | { kind: 'user'; id: string } | { kind: 'all' };

/**
 * Announces a change to every replica (this one included), in the caller's transaction: PostgreSQL delivers the
 * notification at commit, and never for a rolled-back transaction.
 */
export async function announce(db: Queryable, change: Change): Promise<void> {
  const payload = change.kind === 'all' ? 'all' : `${change.kind}:${change.id.toLowerCase()}`;
  await db.query(`SELECT pg_notify($1, $2)`, [CHANGES_CHANNEL, payload]);
}

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/**
 * Keeps the caches of this replica in step with changes made through any replica: a dedicated connection LISTENs on
 * CHANGES_CHANNEL and drops what a change makes stale, so a client made tenant-bound, deleted or stripped of a
 * grant is held to it by every replica at once (not after the caller cache's 5 s or the bearer cache's TTL).
 * When the connection is lost it reconnects with back-off and then forgets everything (notifications sent in
 * between were missed); until then the caches' own lifetimes bound staleness, as without this feed.
 */
@Injectable()
export class ChangeFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('ChangeFeed');
  private client: pg.Client | undefined;
  private stopped = false;
  private retryMs = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | undefined;
  /** Notifications applied (for tests and metrics). */
  applied = 0;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(AccessCache) private readonly callers: AccessCache,
    @Inject(TokenValidator) private readonly tokens: TokenValidator,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // The first connection is awaited: a replica that starts serving is in step from its first request.
    await this.connect().catch((err: unknown) => this.retry(err));
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  /** Applies one notification payload (exported through the class for the feed's own tests). */
  apply(payload: string): void {
    this.applied++;
    const [kind, id] = payload.split(':', 2);
    if (kind === 'client' && id) {
      this.callers.forget(id);
      this.tokens.forgetWhere((c) => c.clientId.toLowerCase() === id);
    } else if (kind === 'user' && id) {
      this.tokens.forgetWhere((c) => c.sub.toLowerCase() === id);
    } else {
      this.forgetAll();
    }
  }

  private forgetAll(): void {
    this.callers.clear();
    this.tokens.clear();
  }

  private async connect(): Promise<void> {
    const url = (this.ds.options as { url?: string }).url;
    if (!url) return; // a data source without a URL (not built by createDataSource): no feed
    const client = new pg.Client({ connectionString: url, application_name: 'gatehouse-identity-changes' });
    client.on('notification', (n) => {
      if (n.channel === CHANGES_CHANNEL) this.apply(n.payload ?? 'all');
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    await client.connect();
    await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.retryMs > RECONNECT_MIN_MS;
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
    if (reconnected) this.forgetAll();
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.retry(err);
  }

  private retry(err: unknown): void {
    if (this.stopped) return;
    this.log.warn(
      `change feed disconnected (${(err as Error)?.message ?? err}); reconnecting in ${this.retryMs} ms`,
    );
    // caches may miss changes until the feed is back: forget now, and again on reconnect
    this.forgetAll();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect().catch((e: unknown) => this.retry(e));
    }, this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
  }
}
