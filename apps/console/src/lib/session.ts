import type { ConsoleConfig } from './config';
import { randomToken, s256 } from './pkce';
import {
  Grants,
  jwtClaims,
  MANAGEMENT_AUDIENCE,
  MANAGEMENT_SCOPES,
  scopesOf,
  TREE_AUDIENCE,
  TREE_SCOPES,
} from './scopes';

/** A token endpoint answer (RFC 6749 5.1). */
export interface TokenResponse {
  access_token: string;
  token_type?: string;
  expires_in?: number;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
}

/** How the session reaches the token server (the SDK's auth client: /token and /revoke). */
export interface TokenTransport {
  token(params: Record<string, string>): Promise<TokenResponse>;
  revoke(params: Record<string, string>): Promise<void>;
}

export type Audience = typeof MANAGEMENT_AUDIENCE | typeof TREE_AUDIENCE;

interface AccessToken {
  value: string;
  /** epoch ms */
  expiresAt: number;
}

/** What the console keeps in sessionStorage between the authorization request and its answer: no token. */
interface PendingSignIn {
  verifier: string;
  state: string;
  returnTo: string;
}

const PENDING_KEY = 'gatehouse.console.signin';
/** A token is refreshed this long before it expires. */
const EARLY_MS = 30_000;

export interface SignedInUser {
  id: string;
  name?: string;
  email?: string;
  tenantId?: string;
}

/**
 * The administrator's session: authorization code with PKCE against the token server, as the public console client;
 * tokens in memory only (a reload signs in again, silently while the token server's session lasts). One access
 * token per API (the grant covers both resources; the refresh token, rotated at every use, gets the second), each
 * refreshed shortly before it expires, one refresh at a time. Sign-out revokes the refresh token (its grant with it)
 * and ends the token server's session at its end-session endpoint.
 */
export class Session {
  private refreshToken: string | undefined;
  private idToken: string | undefined;
  private readonly access = new Map<Audience, AccessToken>();
  private queue: Promise<unknown> = Promise.resolve();
  private listeners = new Set<() => void>();
  grants = Grants.none();
  user: SignedInUser | undefined;

  constructor(
    readonly config: ConsoleConfig,
    private readonly transport: TokenTransport,
    private readonly origin: string,
  ) {}

  get redirectUri(): string {
    return `${this.origin}/callback`;
  }

  get signedIn(): boolean {
    return this.user !== undefined;
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }

  /** The URL of the authorization request; what comes back is kept in sessionStorage for completeSignIn. */
  async authorizationUrl(returnTo: string, locale: string, storage: Storage): Promise<string> {
    const pending: PendingSignIn = { verifier: randomToken(), state: randomToken(16), returnTo };
    storage.setItem(PENDING_KEY, JSON.stringify(pending));
    const url = new URL(`${this.config.authUrl}/authorize`);
    const p = url.searchParams;
    p.set('client_id', this.config.clientId);
    p.set('redirect_uri', this.redirectUri);
    p.set('response_type', 'code');
    p.set(
      'scope',
      ['openid', 'profile', 'email', 'offline_access', ...MANAGEMENT_SCOPES, ...TREE_SCOPES].join(' '),
    );
    p.append('resource', MANAGEMENT_AUDIENCE);
    p.append('resource', TREE_AUDIENCE);
    p.set('code_challenge', await s256(pending.verifier));
    p.set('code_challenge_method', 'S256');
    p.set('state', pending.state);
    p.set('ui_locales', locale);
    return url.toString();
  }

  /**
   * Completes the authorization response at `url` (the callback): checks `state`, exchanges the code (PKCE) for the
   * management token, then the tree token. Returns where the sign-in started.
   */
  async completeSignIn(url: URL, storage: Storage): Promise<string> {
    const raw = storage.getItem(PENDING_KEY);
    storage.removeItem(PENDING_KEY);
    const error = url.searchParams.get('error');
    if (error) throw new Error(url.searchParams.get('error_description') ?? error);
    const pending = raw ? (JSON.parse(raw) as PendingSignIn) : undefined;
    const code = url.searchParams.get('code');
    if (!pending || !code || url.searchParams.get('state') !== pending.state) {
      throw new Error('The sign-in answer does not match a sign-in started here; sign in again.');
    }
    const answer = await this.transport.token({
      grant_type: 'authorization_code',
      client_id: this.config.clientId,
      code,
      redirect_uri: this.redirectUri,
      code_verifier: pending.verifier,
      resource: MANAGEMENT_AUDIENCE,
    });
    this.accept(MANAGEMENT_AUDIENCE, answer);
    this.idToken = answer.id_token;
    const claims = jwtClaims(answer.id_token ?? answer.access_token);
    this.user = {
      id: String(claims.sub ?? ''),
      name: typeof claims.name === 'string' ? claims.name : undefined,
      email: typeof claims.email === 'string' ? claims.email : undefined,
      tenantId:
        typeof jwtClaims(answer.access_token).tenant_id === 'string'
          ? (jwtClaims(answer.access_token).tenant_id as string)
          : undefined,
    };
    await this.refresh(TREE_AUDIENCE).catch(() => undefined);
    this.changed();
    return pending.returnTo || '/';
  }

  private accept(aud: Audience, t: TokenResponse): void {
    this.access.set(aud, { value: t.access_token, expiresAt: Date.now() + (t.expires_in ?? 300) * 1000 });
    if (t.refresh_token) this.refreshToken = t.refresh_token;
    const scopes = scopesOf(t.scope, t.access_token);
    this.grants =
      aud === MANAGEMENT_AUDIENCE
        ? new Grants(scopes, this.grants.tree)
        : new Grants(this.grants.management, scopes);
  }

  /** One refresh for `aud` after any other in flight (a refresh token is good for one use: rotation). */
  private refresh(aud: Audience): Promise<void> {
    const run = this.queue.then(async () => {
      if (!this.refreshToken) throw new Error('signed out');
      const answer = await this.transport.token({
        grant_type: 'refresh_token',
        client_id: this.config.clientId,
        refresh_token: this.refreshToken,
        resource: aud,
      });
      this.accept(aud, answer);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** A valid access token for the API of `aud` (refreshed when about to expire); undefined when signed out. */
  async token(aud: Audience): Promise<string | undefined> {
    const t = this.access.get(aud);
    if (t && t.expiresAt - EARLY_MS > Date.now()) return t.value;
    if (!this.refreshToken) return undefined;
    try {
      await this.refresh(aud);
    } catch {
      this.forget();
      return undefined;
    }
    return this.access.get(aud)?.value;
  }

  private forget(): void {
    this.access.clear();
    this.refreshToken = undefined;
    this.user = undefined;
    this.grants = Grants.none();
    this.changed();
  }

  /** Revokes the refresh token (and with it the grant) and returns the end-session URL to go to. */
  async signOut(): Promise<string> {
    const refresh = this.refreshToken;
    const idToken = this.idToken;
    if (refresh) {
      await this.transport
        .revoke({ client_id: this.config.clientId, token: refresh, token_type_hint: 'refresh_token' })
        .catch(() => undefined);
    }
    this.forget();
    const url = new URL(`${this.config.authUrl}/session/end`);
    url.searchParams.set('client_id', this.config.clientId);
    url.searchParams.set('post_logout_redirect_uri', `${this.origin}/`);
    if (idToken) url.searchParams.set('id_token_hint', idToken);
    return url.toString();
  }
}
