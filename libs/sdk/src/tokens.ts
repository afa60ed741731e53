import type { TokenRequest, TokenSource } from './client.js';
import { GatehouseError, toApiError } from './errors.js';

/** A token response of the token server's /token, with when its access token expires. */
export interface Tokens {
  access_token: string;
  token_type?: string;
  /** Lifetime of the access token in seconds, as the token server answered it. */
  expires_in?: number;
  /** Epoch milliseconds when the access token expires (set from `expires_in` when the tokens are stored). */
  expires_at?: number;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
}

/**
 * A token is renewed this long before it expires: 30 s, or a tenth of a shorter lifetime, so that a request
 * started with it does not reach the API after it expired.
 */
function margin(lifetimeMs: number): number {
  return Math.min(30_000, lifetimeMs / 10);
}

function basic(id: string, secret: string): string {
  // RFC 6749 2.3.1: form-encode each part, then base64 (btoa: the browser and Node alike)
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${btoa(`${enc(id)}:${enc(secret)}`)}`;
}

/** POSTs a token request (form-encoded, as RFC 6749 has it) and answers the tokens, or throws a GatehouseError. */
async function tokenRequest(
  authUrl: string,
  params: Record<string, string | undefined>,
  client: { clientId: string; clientSecret?: string },
  fetchFn: typeof fetch = globalThis.fetch,
): Promise<Tokens> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) body.set(k, v);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (client.clientSecret !== undefined) headers.authorization = basic(client.clientId, client.clientSecret);
  else body.set('client_id', client.clientId); // a public client names itself
  const res = await fetchFn(`${authUrl.replace(/\/+$/, '')}/token`, { method: 'POST', headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: the text is the message */
  }
  if (!res.ok) throw new GatehouseError(res.status, toApiError(res.status, parsed, res.statusText), res);
  const t = parsed as Tokens | undefined;
  if (!t || typeof t.access_token !== 'string') {
    throw new GatehouseError(res.status, toApiError(502, 'the token server answered no access_token'), res);
  }
  return withExpiry(t);
}

function withExpiry(t: Tokens): Tokens {
  if (t.expires_at !== undefined || typeof t.expires_in !== 'number') return t;
  return { ...t, expires_at: Date.now() + t.expires_in * 1000 };
}

function fresh(t: Tokens | undefined): boolean {
  if (!t) return false;
  if (t.expires_at === undefined) return true;
  const lifetime = (t.expires_in ?? 3600) * 1000;
  return Date.now() < t.expires_at - margin(lifetime);
}

export interface ClientCredentialsOptions {
  authUrl: string;
  clientId: string;
  clientSecret: string;
  /**
   * The API of the tokens. Unset: the audience of the service asking (createGatehouse tells the source:
   * `urn:gatehouse:management` for identity, `urn:gatehouse:tree` for tree), one cached token per audience.
   */
  audience?: string;
  /** Space-separated scopes; unset: every scope the client was granted on the API. */
  scope?: string;
  fetch?: typeof fetch;
}

/**
 * Access tokens of a confidential client (`client_credentials` grant, Basic authentication), each kept until
 * shortly before it expires; callers asking at the same time share one token request.
 */
export function clientCredentials(o: ClientCredentialsOptions): TokenSource {
  const cache = new Map<string, Tokens>();
  const pending = new Map<string, Promise<Tokens>>();
  return async (request?: TokenRequest) => {
    const audience = o.audience ?? request?.audience;
    // the token server's own endpoints (userinfo, tokeninfo) are not asked with a client_credentials token
    if (audience === undefined) return undefined;
    const cached = cache.get(audience);
    if (cached && fresh(cached)) return cached.access_token;
    let p = pending.get(audience);
    if (!p) {
      p = tokenRequest(
        o.authUrl,
        { grant_type: 'client_credentials', audience, scope: o.scope },
        o,
        o.fetch,
      ).finally(() => pending.delete(audience));
      pending.set(audience, p);
    }
    const t = await p;
    cache.set(audience, t);
    return t.access_token;
  };
}

export interface RefreshingTokensOptions {
  authUrl: string;
  clientId: string;
  /** A confidential client's secret (Basic authentication); a public client (the console) has none. */
  clientSecret?: string;
  fetch?: typeof fetch;
  /** Told of every change: new tokens (set or refreshed), or undefined when they are cleared or refused. */
  onChange?: (t: Tokens | undefined) => void;
}

/**
 * A user's tokens, in memory only: the access token for requests (`token`), renewed with the refresh token
 * (`refresh_token` grant) shortly before it expires. Refresh tokens rotate: each refresh stores the new one, and
 * callers asking while a refresh runs share it (a second refresh with the same refresh token would be a reuse,
 * which revokes the grant). A refused refresh (the grant revoked, the user blocked) clears the tokens.
 */
export class RefreshingTokens {
  private tokens: Tokens | undefined;
  private refreshing: Promise<Tokens> | undefined;
  /** Bumped by every refresh, set() and clear(): a refresh answered after either is not stored. */
  private generation = 0;

  constructor(private readonly o: RefreshingTokensOptions) {}

  /** The tokens now held (undefined when none). */
  get current(): Tokens | undefined {
    return this.tokens;
  }

  /** Stores tokens (a token response of /token, e.g. after the authorization code grant). */
  set(t: Tokens): void {
    this.generation++;
    this.refreshing = undefined;
    this.tokens = withExpiry(t);
    this.o.onChange?.(this.tokens);
  }

  /** Forgets the tokens (sign-out). A refresh still running is not stored. */
  clear(): void {
    this.generation++;
    this.tokens = undefined;
    this.refreshing = undefined;
    this.o.onChange?.(undefined);
  }

  /** The access token, refreshed first when it is about to expire and a refresh token is held. */
  readonly token: TokenSource = async () => {
    const t = this.tokens;
    if (!t) return undefined;
    if (fresh(t) || !t.refresh_token) return t.access_token;
    return (await this.refresh()).access_token;
  };

  /** Refreshes now (one request however many callers ask at once); throws when no refresh token is held. */
  refresh(): Promise<Tokens> {
    if (this.refreshing) return this.refreshing;
    const held = this.tokens;
    if (!held?.refresh_token) {
      return Promise.reject(
        new GatehouseError(400, { code: 'invalid_grant', message: 'no refresh token is held' }),
      );
    }
    const run: Promise<Tokens> = this.exchange(held, held.refresh_token).finally(() => {
      if (this.refreshing === run) this.refreshing = undefined;
    });
    this.refreshing = run;
    return run;
  }

  private async exchange(held: Tokens, refreshToken: string): Promise<Tokens> {
    const generation = ++this.generation;
    try {
      const t = await tokenRequest(
        this.o.authUrl,
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        this.o,
        this.o.fetch,
      );
      // cleared (signed out) or replaced meanwhile: keep nothing
      if (generation !== this.generation) return t;
      // rotation: the answer carries the new refresh token; keep the old one only if none came
      const next = withExpiry({ ...t, refresh_token: t.refresh_token ?? held.refresh_token });
      this.set(next);
      return next;
    } catch (err) {
      // refused (revoked grant, reused or expired refresh token, blocked user): the tokens are no good any more
      if (
        generation === this.generation &&
        err instanceof GatehouseError &&
        err.status >= 400 &&
        err.status < 500
      ) {
        this.tokens = undefined;
        this.o.onChange?.(undefined);
      }
      throw err;
    }
  }
}
