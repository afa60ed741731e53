import type { IncomingMessage } from 'node:http';
import { isUuid, type Sql } from '@gatehouse/db';
import { clientAddress } from '@gatehouse/http';
import {
  defaultOutcome,
  EventWriter,
  insertEvents,
  type EventActor,
  type EventInput,
  type EventWriterOptions,
  type SigninFailureReason,
} from '@gatehouse/identity-data';
import type { PasskeyFailure } from '../mfa/passkeys.js';

/** Where a request came from, as an event records it: the source address and the user agent. */
export interface EventSource {
  ip: string | null;
  userAgent: string | null;
}

/** The source of `req`: the address the trusted-proxy rule resolved (the rate limits' one) and its user agent. */
export function sourceOf(req: IncomingMessage | undefined): EventSource {
  if (!req) return { ip: null, userAgent: null };
  const ua = req.headers['user-agent'];
  return { ip: clientAddress(req) ?? null, userAgent: typeof ua === 'string' ? ua : null };
}

/** A sign-in attempt as the paths that sign users in describe it. */
export interface SigninEvent {
  instanceId: string;
  tenantId?: string | null;
  userId?: string | null;
  clientId: string;
  /** How: `password` (grant), `login_page`, `otp` (grant), `otp_page`, `link`, `token_exchange`. */
  method: string;
  source: EventSource;
  reason?: SigninFailureReason;
  details?: Record<string, unknown>;
}

const uuidOrNull = (v: string | null | undefined) => (v && isUuid(v) ? v : null);

/**
 * The token server's audit events: one batched EventWriter (no I/O on the request; a timer writes what queued every
 * `flushMs`), owned by the composition root and closed (everything queued written) at shutdown, after the HTTP server
 * stopped taking requests. Ids that must be UUIDs are checked here, so a forged client id can never make a batch
 * fail; no password, code, token or secret is ever passed in.
 */
export class AuthEvents {
  readonly writer: EventWriter;
  /** Told of every event written (the `gatehouse_events_total` counter, set once the app's metrics exist). */
  counter?: (type: string, outcome: string, occurrences: number) => void;

  /** `flushMs` 0: no batching, one INSERT per event at once (the alternative measured in docs/events.md). */
  private readonly perEvent: boolean;
  /** false (AUTH_EVENTS=false): nothing is recorded. */
  private readonly enabled: boolean;

  constructor(
    private readonly sql: Sql,
    private readonly opts: Omit<EventWriterOptions, 'onWritten'> & { enabled?: boolean } = {},
  ) {
    this.perEvent = opts.flushMs === 0;
    this.enabled = opts.enabled ?? true;
    this.writer = new EventWriter(sql, {
      ...opts,
      onWritten: (type, outcome, occurrences) => this.counter?.(type, outcome, occurrences),
    });
  }

  /** Queues one event (ids that are not UUIDs are left out rather than failing the batch). */
  record(e: EventInput): void {
    if (this.accept(e)) this.queue(e);
  }

  /**
   * Queues an event that may repeat identically (same `key`) many times a second: the repeats within one flush
   * interval are one event with `details.count` (EventWriter.recordRepeatable). Unbatched: one event each.
   */
  recordRepeatable(key: string, e: EventInput): void {
    if (!this.accept(e)) return;
    if (this.perEvent) this.queue(e);
    else this.writer.recordRepeatable(key, e);
  }

  /** False when events are off or the event names no instance; ids that are not UUIDs become null. */
  private accept(e: EventInput): boolean {
    if (!this.enabled || !isUuid(e.instanceId)) return false;
    e.tenantId = uuidOrNull(e.tenantId);
    e.userId = uuidOrNull(e.userId);
    e.clientId = uuidOrNull(e.clientId);
    if (e.actor) e.actor.viaClientId = uuidOrNull(e.actor.viaClientId);
    return true;
  }

  private queue(e: EventInput): void {
    if (!this.perEvent) return this.writer.record(e);
    e.at ??= new Date();
    insertEvents(this.sql, [e]).then(
      () => this.counter?.(e.type, e.outcome ?? defaultOutcome(e.type), 1),
      (err: unknown) => this.opts.onError?.(err, 1),
    );
  }

  /** A person signed in (no `reason`) or was refused (`reason`). */
  signin(s: SigninEvent): void {
    const actor: EventActor = s.userId
      ? { type: 'user', id: s.userId, viaClientId: s.clientId }
      : { type: 'anonymous', viaClientId: s.clientId };
    this.record({
      type: s.reason ? 'signin.failure' : 'signin.success',
      reason: s.reason ?? null,
      instanceId: s.instanceId,
      tenantId: s.tenantId,
      actor,
      userId: s.userId,
      clientId: s.clientId,
      ip: s.source.ip,
      userAgent: s.source.userAgent,
      details: { method: s.method, ...s.details },
    });
  }

  /** A one-time code was refused: `invalid` (wrong, used, expired or worn out) or `locked` (too many of them). */
  otpFailure(
    o: Omit<SigninEvent, 'reason' | 'details'> & { userId: string },
    checked: 'invalid' | 'locked',
  ): void {
    this.record({
      type: 'otp.failure',
      reason: checked === 'locked' ? 'rate_limited' : 'wrong_code',
      instanceId: o.instanceId,
      tenantId: o.tenantId,
      actor: { type: 'anonymous', viaClientId: o.clientId },
      userId: o.userId,
      clientId: o.clientId,
      ip: o.source.ip,
      userAgent: o.source.userAgent,
      details: { method: o.method },
    });
  }

  /**
   * A second factor was refused: `signin.failure` with reason `mfa_failed`, `details.mfa_reason` `wrong_code`,
   * `reused_code` (a TOTP step or recovery code already used) or `locked` (the account's budget is spent), and
   * `details.factor` (`totp`, `recovery_code`).
   */
  mfaFailure(
    o: Omit<SigninEvent, 'reason' | 'details'> & { userId: string },
    checked: 'wrong_code' | 'reused_code' | 'locked' | PasskeyFailure,
    factor: 'totp' | 'recovery_code' | 'webauthn',
  ): void {
    this.signin({ ...o, reason: 'mfa_failed', details: { mfa_reason: checked, factor } });
  }

  /** A person enrolled an authenticator app (and got a new set of recovery codes), or a passkey. */
  mfaEnrolled(
    o: Omit<SigninEvent, 'reason' | 'details'> & { userId: string },
    authenticatorType: 'totp' | 'webauthn' = 'totp',
  ): void {
    this.record({
      type: 'mfa.enrolled',
      instanceId: o.instanceId,
      tenantId: o.tenantId,
      actor: { type: 'user', id: o.userId, viaClientId: o.clientId },
      userId: o.userId,
      clientId: o.clientId,
      ip: o.source.ip,
      userAgent: o.source.userAgent,
      details: { method: o.method, authenticator_type: authenticatorType },
    });
  }

  /** Writes what is queued now. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Writes everything queued (a clean shutdown loses nothing); later events are written one at a time. */
  close(): Promise<void> {
    return this.writer.close();
  }
}
