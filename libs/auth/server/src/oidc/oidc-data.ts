import type { IncomingMessage } from 'node:http';
import Provider from 'oidc-provider';
import {
  clientAndResourceAccess,
  effectiveUserScopes,
  findClientForOidc,
  MANAGEMENT_AUDIENCE,
  placeOfSystemAccess,
  systemScopeSources,
  findAccountUser,
  findUserById,
  findUserByLogin,
  instanceSupportedLocales,
  isDefaultInstance,
  supportedLocalesOfClient,
  type ClientResourceAccess,
  type OidcClientRecord,
  type OidcResourceRecord,
  type SystemUserAccess,
  type AccountUser,
  type SecretBox,
  type User,
} from '@gatehouse/identity-data';
import type { Sql } from '@gatehouse/db';

/**
 * A client id as the token server accepts it: a UUID in canonical (lower-case) form, exactly as the identity API
 * issues it. Client ids are compared exactly, as Auth0 and Keycloak do: `3F0C...` is no client, rather than a second
 * spelling of one with its own rate-limit budget and cache entries.
 */
const CLIENT_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export function isClientId(value: unknown): value is string {
  return typeof value === 'string' && CLIENT_ID_RE.test(value);
}
import { StateCache } from './state-cache.js';

export type { AccountUser, ClientResourceAccess, OidcClientRecord, User };

/**
 * What one request already read: a token request names its client and its audience up front, so both are read
 * in one round trip and the provider's later look-ups of the same rows in the same request are answered from
 * here. Nothing outlives the request.
 */
interface RequestMemo {
  clients: Map<string, Promise<OidcClientRecord | undefined>>;
  access: Map<string, Promise<ClientResourceAccess | undefined>>;
  /** Effective scopes by user and resource: a token request asks for them more than once (grant, then token). */
  effective: Map<string, Promise<string[]>>;
  /** The same for system resources, by client, user and resource. */
  system: Map<string, Promise<SystemUserAccess>>;
}

/**
 * The memo of each request served with one (withRequestMemo), by its node request. A look-up finds it through the
 * request oidc-provider is serving (`Provider.ctx`: oidc-provider's own AsyncLocalStorage, whose context every
 * promise already carries) rather than through an AsyncLocalStorage of ours: a second enabled storage made every
 * promise of the process carry one more context (its init hook, a property per promise), a visible part of a code
 * flow's CPU and garbage. Code of ours running before oidc-provider takes the request names the request itself.
 */
const requestMemos = new WeakMap<IncomingMessage, RequestMemo>();

/** The memo of the request oidc-provider is serving now, if it was given one. */
function currentMemo(): RequestMemo | undefined {
  const req = Provider.ctx?.req;
  return req === undefined ? undefined : requestMemos.get(req);
}
const accessKey = (clientId: string, identifier: string) => `${clientId}\n${identifier}`;

type Joined = { client?: OidcClientRecord; access?: ClientResourceAccess };

/**
 * What the token server reads from the identity tables (owned by @gatehouse/identity-data). Clients (with their
 * decrypted secret), a client's access to a resource (the resource row, the authorization, the granted scopes) and,
 * for /tokeninfo, users are kept across requests in `cache` (bounded, short-lived, dropped at once by the identity
 * change feed: see StateCache); a rotated secret, a deleted client or a revoked permission counts from the request
 * after the change's notification arrives. Effective user scopes (RBAC) and grants are read per request.
 */
export class OidcData {
  /** Whether an instance is the default one, by instance id (an instance's `is_default` never changes). */
  private readonly defaultInstances = new Map<string, boolean>();

  constructor(
    private readonly sql: Sql,
    private readonly box: SecretBox,
    private readonly onSecretError: (what: string, err: unknown) => void = () => undefined,
    readonly cache: StateCache = new StateCache({ max: 0, ttlMs: 0 }),
  ) {}

  /** A client whose stored secret cannot be opened (made once: the joined read passes it on each miss). */
  private readonly clientSecretError = (clientId: string, err: unknown): void =>
    this.onSecretError(`client ${clientId}`, err);

  /** The state cache's version (see StateCache.version): unchanged means no cached row changed. */
  stateVersion(): number | undefined {
    return this.cache.version();
  }

  /**
   * Run `fn`, which hands `req` (one HTTP request) to oidc-provider, with its own memo of the rows oidc-provider's
   * look-ups read while serving it.
   */
  withRequestMemo<T>(req: IncomingMessage, fn: () => T): T {
    requestMemos.set(req, { clients: new Map(), access: new Map(), effective: new Map(), system: new Map() });
    return fn();
  }

  /** `to` (a request rebuilt from `from`, its body replayed) is served with the memo of `from`. */
  carryRequestMemo(from: IncomingMessage, to: IncomingMessage): void {
    const memo = requestMemos.get(from);
    if (memo) requestMemos.set(to, memo);
  }

  /**
   * A token request `req` for `clientId` and audience `identifier`: read the client and the resource access in one
   * statement, for the rest of this request. Errors surface where the rows are used.
   */
  prefetchTokenRequest(req: IncomingMessage, clientId: string, identifier: string): void {
    const memo = requestMemos.get(req);
    if (!memo || !isClientId(clientId) || memo.clients.has(clientId)) return;
    const joined = this.readClientAndAccess(clientId, identifier);
    const client = joined.then((r) => r.client);
    const access = joined.then((r) => r.access);
    // Whoever asks first sees a failure; unused promises must not become unhandled rejections.
    client.catch(() => undefined);
    access.catch(() => undefined);
    memo.clients.set(clientId, client);
    memo.access.set(accessKey(clientId, identifier), access);
  }

  /** The client and its decrypted secret; a secret that cannot be opened (wrong key, tampered) makes it unusable. */
  findClient(clientId: string): Promise<OidcClientRecord | undefined> {
    if (!isClientId(clientId)) return Promise.resolve(undefined);
    const memo = currentMemo();
    const known = memo?.clients.get(clientId);
    if (known) return known;
    const read = this.cache.through(
      `c:${clientId}`,
      () => ({ client: clientId }),
      () => this.readClient(clientId),
      (c) => c !== undefined,
    );
    memo?.clients.set(clientId, read);
    return read;
  }

  /** The resource of the client's instance with this identifier, whether it is authorized, the granted scopes. */
  async resourceAccess(clientId: string, identifier: string): Promise<ClientResourceAccess | undefined> {
    const known = currentMemo()?.access.get(accessKey(clientId, identifier));
    if (known) return known;
    if (!isClientId(clientId) || typeof identifier !== 'string') return undefined;
    return (await this.readClientAndAccess(clientId, identifier)).access;
  }

  /**
   * The client and its access to the resource `identifier` of its instance, in one statement (memoised for the
   * request like findClient and resourceAccess).
   */
  async clientAndAccess(
    clientId: string,
    identifier: string,
  ): Promise<{ client?: OidcClientRecord; access?: ClientResourceAccess }> {
    if (!isClientId(clientId)) return {};
    const memo = currentMemo();
    const key = accessKey(clientId, identifier);
    const knownClient = memo?.clients.get(clientId);
    const knownAccess = memo?.access.get(key);
    if (knownClient && knownAccess) return { client: await knownClient, access: await knownAccess };
    const joined = this.readClientAndAccess(clientId, identifier);
    if (memo) {
      const client = joined.then((r) => r.client);
      const access = joined.then((r) => r.access);
      client.catch(() => undefined);
      access.catch(() => undefined);
      memo.clients.set(clientId, client);
      memo.access.set(key, access);
    }
    return joined;
  }

  /** The scopes of `resourceId` that the user holds in effect (its permissions, roles and groups). */
  effectiveUserScopes(userId: string, resourceId: string): Promise<string[]> {
    const memo = currentMemo()?.effective;
    const key = `${userId}\n${resourceId}`;
    const known = memo?.get(key);
    if (known) return known;
    const read = effectiveUserScopes(this.sql, userId, resourceId);
    read.catch(() => undefined);
    memo?.set(key, read);
    return read;
  }

  /**
   * What a user token of `client` holds on `resource`: undefined when the client's grants alone count (a resource
   * without RBAC); otherwise the scopes the user holds in effect (to intersect with the client's grants) and, for
   * a system resource, the tenant the token acts in. RBAC is always on for system resources, whatever their
   * `rbac_enabled`: a client's management or tree scopes never reach its users by themselves.
   */
  async userScopes(
    client: Pick<OidcClientRecord, 'id' | 'isGlobal' | 'tenantId'>,
    userId: string,
    resource: OidcResourceRecord,
  ): Promise<{ scopes: Set<string>; tenantId: string | null } | undefined> {
    if (resource.isSystem) {
      const place = await this.systemUserAccess(client, userId, resource);
      return { scopes: new Set(place.scopes), tenantId: place.tenantId };
    }
    if (!resource.rbacEnabled) return undefined;
    return { scopes: new Set(await this.effectiveUserScopes(userId, resource.id)), tenantId: null };
  }

  private systemUserAccess(
    client: Pick<OidcClientRecord, 'id' | 'isGlobal' | 'tenantId'>,
    userId: string,
    resource: OidcResourceRecord,
  ): Promise<SystemUserAccess> {
    const memo = currentMemo()?.system;
    const key = `${client.id}\n${userId}\n${resource.id}`;
    const known = memo?.get(key);
    if (known) return known;
    const read = systemScopeSources(this.sql, userId, resource.id).then(({ userTenantId, sources }) =>
      placeOfSystemAccess(
        sources,
        { tenantId: userTenantId },
        client,
        resource.identifierUrl === MANAGEMENT_AUDIENCE,
      ),
    );
    read.catch(() => undefined);
    memo?.set(key, read);
    return read;
  }

  /**
   * Whether the instance is the default one (seeded at first start). Kept for the life of the process: which
   * instance is the default never changes (at most 10,000 answers are kept; past that they are read again).
   */
  async isDefaultInstance(instanceId: string): Promise<boolean> {
    const known = this.defaultInstances.get(instanceId);
    if (known !== undefined) return known;
    const answer = await isDefaultInstance(this.sql, instanceId);
    if (this.defaultInstances.size >= 10_000) this.defaultInstances.clear();
    this.defaultInstances.set(instanceId, answer);
    return answer;
  }

  async findUserById(userId: string): Promise<User | undefined> {
    return (await findUserById(this.sql, userId)) ?? undefined;
  }

  /**
   * The `supported_locales` of the client's instance (its pages' languages; empty when unknown), on every login,
   * consent and sign-in link page. Kept in `cache` by instance while the cache is trusted: a change of an instance
   * drops everything (`all`), and a client's instance is that of its cached row, dropped with the client. Otherwise
   * (cache off or not trusted, a client without a usable row) read as before, in one statement.
   */
  async supportedLocalesOfClient(clientId: string): Promise<string[]> {
    if (this.stateVersion() === undefined) return supportedLocalesOfClient(this.sql, clientId);
    const client = await this.findClient(clientId);
    if (!client) return supportedLocalesOfClient(this.sql, clientId);
    const instanceId = client.instanceId;
    return this.cache.through(
      `l:${instanceId}`,
      () => ({}),
      () => instanceSupportedLocales(this.sql, instanceId),
      () => true,
    );
  }

  /**
   * A user as the account of a token or a session (findAccount): the columns of its claims and its sign-in. Kept in
   * `cache` like `cachedUser` (tag `user:<id>`): every authorization and token request of a user looks its account
   * up, twice in a returning user's code flow, and a change of the user (blocked, deleted, edited, through the
   * identity API or SQL) is announced by the change feed, which a management write waits for (settle). A write of
   * this process's own (the account pages, a verified e-mail) shows once its notification has arrived.
   */
  findAccountUser(userId: string): Promise<AccountUser | undefined> {
    return this.cache.through(
      `acct:${userId}`,
      () => ({ user: userId }),
      async () => (await findAccountUser(this.sql, userId)) ?? undefined,
      (u) => u !== undefined,
    );
  }

  /**
   * What the `mfa` prompt's check needs of user `userId` signing in through client `clientId` (the effective policy
   * and the enrolled factors, `read` once): kept in `cache`, tagged with the client and the user. The client's,
   * tenant's and instance's policies and the user's authenticators are all announced by the change feed
   * (`clients`: the client; `tenants`, `instances`: everything; `users`, `user_authenticators`: the user), so an
   * enrolment, a removal or a policy change drops it; a returning user's authorization runs no statement for it.
   */
  mfaState<T extends object>(clientId: string, userId: string, read: () => Promise<T>): Promise<T> {
    return this.cache.through(
      `mfa:${clientId}:${userId}`,
      () => ({ client: clientId, user: userId }),
      read,
      () => true,
    );
  }

  /** A user of the instance by e-mail or user name (case-insensitive) or phone number. */
  async findUserByLogin(instanceId: string, login: string): Promise<User | undefined> {
    return (await findUserByLogin(this.sql, instanceId, login)) ?? undefined;
  }

  /**
   * A user as /tokeninfo describes its tokens (exists, blocked, instance, username): kept in `cache`, dropped by
   * the change feed when the user is changed, blocked or deleted.
   */
  cachedUser(userId: string): Promise<User | undefined> {
    return this.cache.through(
      `u:${userId}`,
      () => ({ user: userId }),
      () => this.findUserById(userId),
      (u) => u !== undefined,
    );
  }

  /**
   * Whether the grant `grantId` still exists (an access token of a revoked grant is inactive), `find` reading it
   * from the store. A live grant is kept in `cache` until its expiry at most, dropped by the change feed when its
   * user changes (a grant revoked through the identity API, a new password, a blocked or deleted user announce the
   * user) or its client changes, and by `forgetGrant` when this process deletes it.
   */
  async liveGrant(
    grantId: string,
    find: (
      id: string,
    ) => Promise<{ accountId?: unknown; clientId?: unknown; exp?: unknown } | undefined | void>,
  ): Promise<boolean> {
    const key = `g:${grantId}`;
    if (this.cache.get<boolean>(key)) return true;
    const snapshot = this.cache.snapshot();
    const grant = await find(grantId);
    if (!grant) return false;
    this.cache.store(
      key,
      true,
      {
        user: typeof grant.accountId === 'string' ? grant.accountId : undefined,
        client: typeof grant.clientId === 'string' ? grant.clientId : undefined,
      },
      snapshot,
      typeof grant.exp === 'number' ? grant.exp * 1000 : Infinity,
    );
    return true;
  }

  /** A grant this process deleted (revocation, logout, refresh token reuse): not live from now on. */
  forgetGrant(grantId: string): void {
    this.cache.delete(`g:${grantId}`);
  }

  private async readClient(clientId: string): Promise<OidcClientRecord | undefined> {
    try {
      return (await findClientForOidc(this.sql, clientId, this.box)) ?? undefined;
    } catch (err) {
      if ((err as Error).name !== 'SecretBoxError') throw err;
      this.clientSecretError(clientId, err);
      return undefined;
    }
  }

  /**
   * The client and its access to `identifier` in one statement (clientAndResourceAccess of @gatehouse/identity-data,
   * which owns the token server's reads of clients and resources); kept in `cache` when both exist (the client's
   * record also under its own key).
   */
  private async readClientAndAccess(clientId: string, identifier: string): Promise<Joined> {
    const key = `a:${accessKey(clientId, identifier)}`;
    const cached = this.cache.get<Joined>(key);
    if (cached) return cached;
    const snapshot = this.cache.snapshot();
    const joined = await clientAndResourceAccess(
      this.sql,
      clientId,
      identifier,
      this.box,
      this.clientSecretError,
    );
    if (joined.client) {
      // The joined read also answers the next request's look-up of the client alone.
      this.cache.store(`c:${clientId}`, joined.client, { client: clientId }, snapshot);
      if (joined.access) this.cache.store(key, joined, { client: clientId }, snapshot);
    }
    return joined;
  }
}
