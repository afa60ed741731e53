import type { Redis } from 'ioredis';
import type { JSONWebKeySet } from 'jose';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import type { Sql } from '@gatehouse/db';
import type { SecretBox } from '@gatehouse/identity-data';
import { effectiveTrustProxy } from '../config.js';
import { createProvider, ROUTES, type TokenLifetimes } from '../oidc/provider.js';
import type { OidcData } from '../oidc/oidc-data.js';
import type { PasswordLogin } from '../oidc/password-login.js';
import { applyFields } from '../oidc/fields.js';
import type { UpstreamKeys } from '../oidc/upstream-keys.js';
import type { OneTimeCodes } from '../passwordless/one-time-codes.js';
import type { SecondFactors } from '../mfa/second-factors.js';
import type { KeySet, SigningKeys } from '../keys/signing-keys.js';
import type { CurrentProvider, Handler } from '../endpoints/context.js';
import { DEVICE_POLL_INTERVAL_SEC } from '../endpoints/device-throttle.js';
import { TOKENINFO_PATH } from '../endpoints/tokeninfo.js';
import type { TokenServerEnv } from './token-server-env.js';
import type { AuthEvents } from '../events/auth-events.js';
import { auditProvider } from '../events/provider-events.js';
import { trackSessionDevices } from '../account/session-devices.js';

export interface ProviderHostDeps {
  env: TokenServerEnv;
  issuer: string;
  sql: Sql;
  data: OidcData;
  signingKeys: SigningKeys;
  login: PasswordLogin;
  redis: Redis | undefined;
  redisPrefix: string | undefined;
  log: Logger;
  box: SecretBox;
  codes: OneTimeCodes;
  mfa: SecondFactors;
  upstreamKeys: UpstreamKeys;
  events: AuthEvents;
  /** Told each key set as it is installed (before any request is served with it). */
  onInstall: (keys: KeySet, provider: Provider) => void;
}

/**
 * oidc-provider, built again whenever the published signing keys change (a rotation by this or another process),
 * with the key set it was built for.
 */
export class ProviderHost implements CurrentProvider {
  provider!: Provider;
  callback!: Handler;
  keys!: KeySet;
  publicJwks!: JSONWebKeySet;
  private reloading?: Promise<boolean>;
  /** Unknown kids recently looked up, so a flood of forged tokens cannot turn into a flood of key reloads. */
  private readonly unknownKids = new Map<string, number>();

  constructor(private readonly deps: ProviderHostDeps) {}

  /** A token names a key this process does not know: reload once, unless that kid was already tried recently. */
  async reloadForKid(kid: string | undefined): Promise<boolean> {
    if (!kid || kid.length > 200) return false;
    const now = Date.now();
    const tried = this.unknownKids.get(kid);
    if (tried !== undefined && now - tried < 30_000) return false;
    if (this.unknownKids.size > 1000) this.unknownKids.clear();
    this.unknownKids.set(kid, now);
    return this.reloadKeys(false);
  }

  /** Reload the key set when it changed in the database; `force` skips the cheap fingerprint check. */
  async reloadKeys(force: boolean): Promise<boolean> {
    this.reloading ??= (async () => {
      try {
        if (!force && (await this.deps.signingKeys.fingerprint()) === this.keys.fingerprint) return false;
        const keys = await this.deps.signingKeys.load();
        if (keys.fingerprint === this.keys.fingerprint) return false;
        this.install(keys);
        this.deps.log.info(
          { kids: keys.keys.map((k) => k.kid), active: keys.active },
          'signing keys reloaded',
        );
        return true;
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** Waits for a reload under way (at shutdown). */
  async settle(): Promise<void> {
    await this.reloading?.catch(() => undefined);
  }

  install(keys: KeySet): void {
    const provider = this.build(keys);
    this.keys = keys;
    this.deps.onInstall(keys, provider);
    this.publicJwks = { keys: keys.keys.map((k) => k.publicJwk) } as JSONWebKeySet;
    this.provider = provider;
    this.callback = provider.callback() as unknown as Handler;
  }

  private build(keys: KeySet): Provider {
    const { env, log, box } = this.deps;
    const lifetimes: TokenLifetimes = {
      accessToken: env.AUTH_ACCESS_TOKEN_TTL_SEC,
      idToken: env.AUTH_ID_TOKEN_TTL_SEC,
      refreshToken: env.AUTH_REFRESH_TOKEN_TTL_SEC,
      grant: env.AUTH_GRANT_TTL_SEC,
      deviceCode: env.AUTH_DEVICE_CODE_TTL_SEC,
    };
    const provider = createProvider({
      issuer: this.deps.issuer,
      sql: this.deps.sql,
      data: this.deps.data,
      keys,
      login: this.deps.login,
      lifetimes,
      redis: this.deps.redis,
      redisPrefix: this.deps.redisPrefix,
      // X-Forwarded-Proto/-Host are believed behind a trusted proxy; the client's address is the fast lane's
      // (clientAddress), computed with the trusted proxies as the rate limits do.
      proxy: effectiveTrustProxy(env) !== false,
      log,
      cookieKeys: box.derive('cookies'),
      codes: this.deps.codes,
      mfa: this.deps.mfa,
      upstreamKeys: this.deps.upstreamKeys,
      events: this.deps.events,
    });
    provider.use(this.amendAnswers());
    auditProvider(provider, this.deps.events, async (userId) => {
      const user = await this.deps.data.findUserById(userId);
      return user ? { instanceId: user.instanceId, tenantId: user.tenantId } : undefined;
    });
    trackSessionDevices(provider, this.deps.sql, (err) =>
      this.deps.log.warn({ err: (err as Error).message }, 'session device not recorded'),
    );
    return provider;
  }

  /** What our answers add to oidc-provider's: the device polling interval, `fields`, discovery's /tokeninfo. */
  private amendAnswers(): Parameters<Provider['use']>[0] {
    const tokeninfoEndpoint = `${this.deps.issuer}${TOKENINFO_PATH}`;
    return async (ctx, next) => {
      await next();
      // RFC 8628: the polling interval (oidc-provider leaves it out; clients then assume 5 s); before `fields`
      // picks from the answer, so that it can be picked
      if (
        ctx.status === 200 &&
        ctx.path === ROUTES.device_authorization &&
        ctx.body &&
        typeof ctx.body === 'object'
      ) {
        (ctx.body as Record<string, unknown>).interval ??= DEVICE_POLL_INTERVAL_SEC;
      }
      if (ctx.status === 200) ctx.body = applyFields(ctx.req, ctx.body);
      // Discovery also names our /tokeninfo.
      if (
        ctx.status === 200 &&
        ctx.path.startsWith('/.well-known/') &&
        ctx.body &&
        typeof ctx.body === 'object'
      ) {
        (ctx.body as Record<string, unknown>).tokeninfo_endpoint = tokeninfoEndpoint;
      }
    };
  }
}
