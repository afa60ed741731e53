import pg from 'pg';
import { IDENTITY_CHANGES_CHANNEL, parseChange, SYNC_PREFIX, type IdentityChange } from './channel.js';

export interface ChangeListenerOptions {
  /** Connection string of the identity database. */
  url: string;
  /** `application_name` of the listening connection. */
  applicationName: string;
  /** One change; `all` also after a reconnect (notifications sent in between were missed). */
  onChange(change: IdentityChange): void;
  log: { warn(message: string): void };
  /** More channels to LISTEN on; their notifications go to `onNotification`. */
  channels?: string[];
  onNotification?(channel: string, payload: string): void;
  /** A settle marker `sync:<token>` on the change channel, in order with the changes (the token passed). */
  onSync?(token: string): void;
  /**
   * Run on each new connection after its LISTENs, before it counts as connected (a failure drops the connection
   * and retries).
   */
  onConnect?(client: pg.Client): Promise<void>;
  /** The connection was lost (or closed by `stop`). */
  onDisconnect?(): void;
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
    if (c) this.opts.onDisconnect?.();
    await c?.end().catch(() => undefined);
  }

  /** Whether the listening connection is up. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Applies one notification payload of the change channel (a settle marker goes to `onSync`). */
  apply(payload: string | undefined): void {
    if (payload?.startsWith(SYNC_PREFIX)) {
      this.opts.onSync?.(payload.slice(SYNC_PREFIX.length));
      return;
    }
    const change = parseChange(payload);
    if (!change) return;
    this.applied++;
    this.opts.onChange(change);
  }

  /** A statement on the listening connection (in order with its notifications); rejects when it is down. */
  async query(text: string, params: unknown[] = []): Promise<pg.QueryResult> {
    const c = this.client;
    if (!c) throw new Error('change feed not connected');
    return c.query(text, params);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.opts.url,
      application_name: this.opts.applicationName,
    });
    client.on('notification', (n) => {
      if (n.channel === IDENTITY_CHANGES_CHANNEL) this.apply(n.payload);
      else this.opts.onNotification?.(n.channel, n.payload ?? '');
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      for (const channel of [IDENTITY_CHANGES_CHANNEL, ...(this.opts.channels ?? [])]) {
        await client.query(`LISTEN ${channel}`);
      }
      if (!this.stopped) await this.opts.onConnect?.(client);
    } catch (err) {
      client.removeAllListeners('end');
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      throw err;
    }
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
    this.opts.onDisconnect?.();
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

  /** More channels to LISTEN on (their notifications go to `notified`). */
  protected channels(): string[] {
    return [];
  }

  /** A notification of one of `channels()`. */
  protected notified(_channel: string, _payload: string): void {
    // none by default
  }

  /** Whether the listening connection is up. */
  get connected(): boolean {
    return this.listener?.connected ?? false;
  }

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
      channels: this.channels(),
      onNotification: (channel, payload) => this.notified(channel, payload),
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
