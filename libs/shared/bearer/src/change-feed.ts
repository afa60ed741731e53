import pg from 'pg';

/** The PostgreSQL channel on which the identity service announces changes (in the identity database). */
export const IDENTITY_CHANGES_CHANNEL = 'gatehouse_identity_changes';

/**
 * One announced change, as the caches of a service care:
 * - `client`: a client's reach (global, tenant), existence or grants;
 * - `user`: a user was blocked, deleted or got a new password;
 * - `all`: anything wider (a resource changed or went, a scope went), or a gap in the feed.
 */
export type IdentityChange = { kind: 'client'; id: string } | { kind: 'user'; id: string } | { kind: 'all' };

/** The payload `announce` sends for a change: `all`, `client:<id>`, `user:<id>`. */
export function changePayload(change: IdentityChange): string {
  return change.kind === 'all' ? 'all' : `${change.kind}:${change.id.toLowerCase()}`;
}

/** A payload back into a change; anything unknown counts as `all`. */
export function parseChange(payload: string | undefined): IdentityChange {
  const [kind, id] = (payload ?? 'all').split(':', 2);
  if ((kind === 'client' || kind === 'user') && id) return { kind, id: id.toLowerCase() };
  return { kind: 'all' };
}

/** Drops the cached token checks a change makes stale. */
export function forgetValidations(
  tokens: { forgetWhere(m: (c: { clientId: string; sub: string }) => boolean): number; clear(): void },
  change: IdentityChange,
): void {
  if (change.kind === 'client') tokens.forgetWhere((c) => c.clientId.toLowerCase() === change.id);
  else if (change.kind === 'user') tokens.forgetWhere((c) => c.sub.toLowerCase() === change.id);
  else tokens.clear();
}

export interface ChangeListenerOptions {
  /** Connection string of the identity database. */
  url: string;
  /** `application_name` of the listening connection. */
  applicationName: string;
  /** One change; `all` also after a reconnect (notifications sent in between were missed). */
  onChange(change: IdentityChange): void;
  log: { warn(message: string): void };
}

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/**
 * A dedicated connection LISTENing on IDENTITY_CHANGES_CHANNEL. When the connection is lost it reports `all` (caches
 * may miss changes until it is back), reconnects with back-off, and reports `all` again once reconnected.
 */
export class IdentityChangeListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private retryMs = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | undefined;
  /** Notifications applied (for tests and metrics). */
  applied = 0;

  constructor(private readonly opts: ChangeListenerOptions) {}

  /** Connects (awaited: a replica that starts serving is in step from its first request); failures retry. */
  async start(): Promise<void> {
    await this.connect().catch((err: unknown) => this.retry(err));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  /** Applies one notification payload. */
  apply(payload: string | undefined): void {
    this.applied++;
    this.opts.onChange(parseChange(payload));
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.opts.url,
      application_name: this.opts.applicationName,
    });
    client.on('notification', (n) => {
      if (n.channel === IDENTITY_CHANGES_CHANNEL) this.apply(n.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    await client.connect();
    await client.query(`LISTEN ${IDENTITY_CHANGES_CHANNEL}`);
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.retryMs > RECONNECT_MIN_MS;
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
    if (reconnected) this.opts.onChange({ kind: 'all' });
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.retry(err);
  }

  private retry(err: unknown): void {
    if (this.stopped) return;
    this.opts.log.warn(
      `change feed disconnected (${(err as Error)?.message ?? err}); reconnecting in ${this.retryMs} ms`,
    );
    // Caches may miss changes until the feed is back: forget now, and again on reconnect.
    this.opts.onChange({ kind: 'all' });
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect().catch((e: unknown) => this.retry(e));
    }, this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
  }
}

/**
 * The part every service's feed shares: one listener started with the application (awaited, so a replica that
 * starts serving is in step from its first request) and stopped with it. A subclass says where the identity
 * database is (undefined: no feed) and what a change makes stale.
 */
export abstract class IdentityChangeFeed {
  private listener: IdentityChangeListener | undefined;

  protected constructor(
    private readonly applicationName: string,
    private readonly log: { warn(message: string): void },
  ) {}

  /** Connection string of the identity database, or undefined when this service is not told it. */
  protected abstract url(): string | undefined;

  /** Drops what `change` makes stale. */
  protected abstract forget(change: IdentityChange): void;

  /** Notifications applied (for tests and metrics). */
  get applied(): number {
    return this.listener?.applied ?? 0;
  }

  async onApplicationBootstrap(): Promise<void> {
    const url = this.url();
    if (!url) return;
    this.listener = new IdentityChangeListener({
      url,
      applicationName: this.applicationName,
      onChange: (change) => this.forget(change),
      log: this.log,
    });
    await this.listener.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener?.stop();
  }

  /** Applies one notification payload (for the feeds' own tests). */
  apply(payload: string): void {
    this.listener?.apply(payload);
  }
}
