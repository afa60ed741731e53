import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import type { CacheSubscriber } from '@gatehouse/changes';
import type { Delivery } from '@gatehouse/delivery';
import type { FastLane, HttpMetrics } from '@gatehouse/http';
import type { AuthEvents } from './events/auth-events.js';
import type { FastClientCredentials } from './oidc/client-credentials.fast.js';
import type { PasswordLogin } from './oidc/password-login.js';
import type { UpstreamKeys } from './oidc/upstream-keys.js';
import type { KeySet } from './keys/signing-keys.js';
import type { TokenInfoService } from './tokeninfo/tokeninfo.service.js';
import type { OneTimeCodes } from './passwordless/one-time-codes.js';
import type { SecondFactors } from './mfa/second-factors.js';
import type { Passkeys } from './mfa/passkeys.js';
import type { DevicePollThrottle } from './endpoints/device-throttle.js';
import { TokenServerRouter } from './endpoints/router.js';
import { composeTokenServer, type TokenServerParts } from './composition/services.js';
import { scheduleHousekeeping } from './composition/housekeeping.js';
import { startEventHousekeeping } from '@gatehouse/identity-data';
import type { ProviderHost } from './composition/provider-host.js';
import type { TokenServerOptions } from './composition/token-server-env.js';

export { TOKENINFO_PATH } from './endpoints/tokeninfo.js';
export { DEVICE_POLL_INTERVAL_SEC } from './endpoints/device-throttle.js';
export { LOGOUT_ROUTES, TOKEN_SERVER_ROUTES } from './endpoints/routes.js';
export { issuerOf, type TokenServerEnv, type TokenServerOptions } from './composition/token-server-env.js';

/**
 * The token server: oidc-provider (rebuilt whenever the published signing keys change), our endpoints around it
 * on the foundation's fast lane (endpoints/routes.ts, endpoints/router.ts), and the housekeeping timers. Built by
 * the composition root (composition/services.ts).
 */
export class TokenServer {
  readonly issuer: string;
  readonly tokenInfo: TokenInfoService;
  /** Passwordless one-time codes, their delivery and POST /passwordless/start. */
  readonly codes: OneTimeCodes;
  /** Second factors: their checks, budget and clock (tests move it). */
  readonly mfa: SecondFactors;
  /** WebAuthn passkeys. */
  readonly passkeys: Passkeys;
  /** Identity providers' key sets (token exchange), fetched under the outbound policy of OUTBOUND_*. */
  readonly upstreamKeys: UpstreamKeys;
  /** Plain client_credentials requests, answered without oidc-provider's pipeline (same answer). */
  readonly fastClientCredentials: FastClientCredentials;
  /** Resource-owner password logins (lockouts count by its `clock`). */
  readonly login: PasswordLogin;
  /**
   * The identity change feed that keeps the state cache in step and acknowledges identity's settle markers
   * (undefined when the cache is off).
   */
  feed?: CacheSubscriber;
  readonly log: Logger;
  /** The audit trail's batched writer (`events.flush()` writes what is queued). */
  readonly events: AuthEvents;
  /** This process's delivery worker: the messages the token server queued (codes, links), sent after the answer. */
  private readonly delivery: Delivery;
  private readonly host: ProviderHost;
  private readonly router: TokenServerRouter;
  private readonly throttle: DevicePollThrottle;
  private readonly redis: Redis | undefined;
  private timers: NodeJS.Timeout[] = [];
  private stopEventHousekeeping: (() => void) | undefined;

  private constructor(parts: TokenServerParts) {
    this.issuer = parts.endpoints.issuer;
    this.tokenInfo = parts.endpoints.tokenInfo;
    this.codes = parts.codes;
    this.mfa = parts.mfa;
    this.passkeys = parts.passkeys;
    this.upstreamKeys = parts.upstreamKeys;
    this.fastClientCredentials = parts.endpoints.fastClientCredentials;
    this.login = parts.login;
    this.feed = parts.feed;
    this.log = parts.log;
    this.events = parts.events;
    this.delivery = parts.delivery;
    this.host = parts.host;
    this.router = new TokenServerRouter(parts.endpoints);
    this.throttle = parts.endpoints.deviceThrottle;
    this.redis = parts.redis;
  }

  static async start(opts: TokenServerOptions): Promise<TokenServer> {
    const parts = await composeTokenServer(opts);
    const server = new TokenServer(parts);
    parts.host.install(await parts.signingKeys.load());
    server.delivery.start();
    // today's events partition exists before the first request; the next days' are made hourly (identity purges)
    server.stopEventHousekeeping = await startEventHousekeeping(opts.db, {
      warn: (msg, err) => parts.log.warn({ err: (err as Error).message }, msg),
    });
    server.timers = scheduleHousekeeping({
      ...parts,
      env: opts.env,
      signup: parts.endpoints.signup,
      reloadKeys: () => server.reloadKeys(false),
    });
    return server;
  }

  /** The clock device polls are timed by (tests move it instead of waiting). */
  get pollClock(): () => number {
    return this.throttle.clock;
  }

  set pollClock(clock: () => number) {
    this.throttle.clock = clock;
  }

  get currentProvider(): Provider {
    return this.host.provider;
  }

  /** oidc-provider as currently built (the name tests know it by). */
  get provider(): Provider {
    return this.host.provider;
  }

  get keySet(): KeySet {
    return this.host.keys;
  }

  /** Reload the key set when it changed in the database; `force` skips the cheap fingerprint check. */
  reloadKeys(force: boolean): Promise<boolean> {
    return this.host.reloadKeys(force);
  }

  /** Whether the token server serves `method path` (path without the query): what {@link serve} answers. */
  claims(method: string, path: string): boolean {
    return this.router.claims(method, path);
  }

  /** The foundation's fast lane: the token server on node's request, without Express (see createHttpApp). */
  lane(): FastLane {
    return this.router.lane();
  }

  /** Serves what {@link claims}; passes anything else on to `next`. */
  serve(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void {
    this.router.serve(req, res, next);
  }

  /** Counts every audit event written in `metrics.events` (gatehouse_events_total). */
  countEventsIn(metrics: HttpMetrics): void {
    this.events.counter = (type, outcome, occurrences) =>
      metrics.events.labels(type, outcome).inc(occurrences);
  }

  /**
   * Called once the HTTP server stopped taking requests (Nest's shutdown hooks run after it closed): the audit
   * events still queued are written first, while the database pool is open.
   */
  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.events.close();
    this.stopEventHousekeeping?.();
    await this.delivery.close();
    this.timers.length = 0;
    await this.feed?.stop();
    await this.host.settle();
    if (this.redis) await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}
