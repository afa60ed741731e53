import { createHmac } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Db, type Sql } from '@gatehouse/db';
import { OutboundError, OutboundFetcher, outboundPolicyFromEnv } from '@gatehouse/outbound';
import { SERVICE_ENV } from '@gatehouse/service';
import {
  leaseDueLogStreams,
  markStreamDelivered,
  markStreamFailed,
  nextStreamEvents,
  SECRET_BOX,
  sealedIn,
  type DueLogStream,
  type SecretBox,
} from '@gatehouse/identity-data';

export const SIGNATURE_HEADER = 'gatehouse-signature';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, as Stripe signs its webhooks. */
export function signDelivery(secret: string, body: string, at: number = Date.now()): string {
  const t = Math.floor(at / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${v1}`;
}

export interface LogStreamDeliveryEnv {
  OUTBOUND_ALLOWLIST?: string;
  LOG_STREAMS_DELIVERY: boolean;
  LOG_STREAMS_POLL_MS: number;
  LOG_STREAMS_RETRY_BASE_MS: number;
  LOG_STREAMS_PAUSE_AFTER: number;
  LOG_STREAMS_LEASE_MS: number;
}

/** Events per delivery. */
const BATCH = 100;
/** Streams served at once by one replica. */
const STREAMS_PER_ROUND = 10;
/** The longest wait between two tries of one stream. */
const MAX_DELAY_MS = 10 * 60_000;
/** A receiver that has not answered in this time failed the delivery. */
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Delivers the log streams (docs/events.md, "Streams"). Every replica of identity runs it (unless
 * LOG_STREAMS_DELIVERY=false); a stream is served by one replica at a time (a lease in its row), so its deliveries
 * go out one after the other, in order. The cursor moves only after a 2xx, in the same statement that ends the
 * lease: a replica that dies mid-delivery leaves the cursor where it was, and once the lease runs out another
 * replica sends the same events again (at least once). A failure waits `retryBase * 2^(failures - 1)` (10 %
 * jitter, at most 10 minutes) and the `pauseAfter`-th in a row pauses the stream with the reason.
 */
@Injectable()
export class LogStreamDelivery implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('LogStreams');
  private readonly fetcher: OutboundFetcher;
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<unknown> | undefined;
  private closed = false;

  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(SERVICE_ENV) private readonly env: LogStreamDeliveryEnv,
  ) {
    this.fetcher = new OutboundFetcher({
      policy: outboundPolicyFromEnv({ OUTBOUND_ALLOWLIST: env.OUTBOUND_ALLOWLIST ?? '' }),
      limits: { timeoutMs: DELIVERY_TIMEOUT_MS, maxBytes: 64 * 1024 },
    });
  }

  onApplicationBootstrap(): void {
    if (this.env.LOG_STREAMS_DELIVERY) this.schedule(0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.round;
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.round = this.deliverDue()
        .catch((err: unknown) => this.log.warn({ msg: 'log stream round failed', err: String(err) }))
        .finally(() => this.schedule(this.env.LOG_STREAMS_POLL_MS));
    }, ms);
    this.timer.unref();
  }

  /** One round: leases the streams that are due and delivers each. The number of events delivered. */
  async deliverDue(): Promise<number> {
    const due = await leaseDueLogStreams(this.db, STREAMS_PER_ROUND, this.env.LOG_STREAMS_LEASE_MS);
    const sent = await Promise.all(due.map((s) => this.serve(this.db, s)));
    return sent.reduce((a, b) => a + b, 0);
  }

  /** Delivers the stream's events batch after batch until none is left, a delivery fails or the lease runs low. */
  private async serve(db: Sql, stream: DueLogStream): Promise<number> {
    const leaseEnds = Date.now() + this.env.LOG_STREAMS_LEASE_MS - DELIVERY_TIMEOUT_MS;
    let secret: string;
    try {
      secret = this.box.decrypt(stream.secret_enc, sealedIn.logStreamSecret(stream.id));
    } catch {
      await markStreamFailed(db, stream.id, 'the secret cannot be opened (set a new one)', MAX_DELAY_MS, 1);
      return 0;
    }
    let sent = 0;
    for (;;) {
      const { events, horizon } = await nextStreamEvents(db, stream, BATCH);
      const full = events.length === BATCH;
      if (events.length) {
        const body = JSON.stringify({
          stream_id: stream.id,
          events: events.map(({ txid: _t, seq: _s, ...e }) => e),
        });
        try {
          await this.fetcher.post(stream.url, body, {
            'content-type': 'application/json',
            [SIGNATURE_HEADER]: signDelivery(secret, body),
          });
        } catch (err) {
          const reason = err instanceof OutboundError ? err.message : String(err);
          const failures = stream.failures + 1;
          const backoff = Math.min(this.env.LOG_STREAMS_RETRY_BASE_MS * 2 ** (failures - 1), MAX_DELAY_MS);
          const r = await markStreamFailed(
            db,
            stream.id,
            reason,
            Math.round(backoff * (1 + Math.random() * 0.1)),
            this.env.LOG_STREAMS_PAUSE_AFTER,
          );
          this.log.warn({ msg: 'log stream delivery failed', stream_id: stream.id, reason, ...r });
          return sent;
        }
        sent += events.length;
      }
      // Past the last event sent; when the read was not full, up to the horizon (every finished transaction's
      // events were in it), so the next read does not walk the same events of other streams again.
      const last = events[events.length - 1];
      const cursor = full ? { txid: last.txid, seq: last.seq } : { txid: horizon, seq: '0' };
      const more = full && Date.now() < leaseEnds && !this.closed;
      await markStreamDelivered(
        db,
        stream.id,
        cursor,
        events.length,
        more ? this.env.LOG_STREAMS_LEASE_MS : undefined,
      );
      if (!more) return sent;
      stream = { ...stream, cursor_txid: cursor.txid, cursor_seq: cursor.seq, failures: 0 };
    }
  }
}
