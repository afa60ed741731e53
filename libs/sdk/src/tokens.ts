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
  /** The API the access token is for, when the SDK knows it (set by whoever stored the tokens). */
  audience?: string;
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
  /**
   * The APIs the user's grant covers besides the one of the held tokens (the `resource` values of the authorization
   * request, e.g. both `urn:gatehouse:management` and `urn:gatehouse:tree`). `token()` asked for one of them answers
   * an access token for it, got by a refresh with `resource` and kept apart. Only list APIs the grant holds: the token
   * server consumes the refresh token before it checks the resource, so a refresh for another one loses the session.
   */
  audiences?: string[];
}

/**
 * A user's tokens, in memory only: the access token for requests (`token`), renewed with the refresh token
 * (`refresh_token` grant) shortly before it expires. Refresh tokens rotate: each refresh stores the new one, refreshes
 * run one after another, and callers asking while one runs share it (a second use of the same refresh token would be
 * a reuse, which revokes the grant). A refresh refused with `invalid_grant` (the grant revoked, the user blocked, a
 * reused token) clears the tokens.
 */
export class RefreshingTokens {
  private tokens: Tokens | undefined;
  /** Access tokens of the other `audiences`, by audience. */
  private readonly others = new Map<string, Tokens>();
  /** The refresh waiting or running per audience ('' for the held tokens' own). */
  private readonly pending = new Map<string, Promise<Tokens>>();
  /** Refreshes run in this order, each with the refresh token the one before left. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Bumped by set() and clear() (and a refused refresh): a refresh begun before is not stored. */
  private generation = 0;

  constructor(private readonly o: RefreshingTokensOptions) {}

  /** The tokens now held (undefined when none). */
  get current(): Tokens | undefined {
    return this.tokens;
  }

  /**
   * Stores tokens (a token response of /token). `audience`: the API its access token is for, when `audiences` lists
   * others (then requests for those get tokens of their own).
   */
  set(t: Tokens): void {
    this.generation++;
    this.pending.clear();
    this.others.clear();
    this.tokens = withExpiry(t);
    this.o.onChange?.(this.tokens);
  }

  /** Forgets the tokens (sign-out). A refresh still running is not stored. */
  clear(): void {
    this.generation++;
    this.pending.clear();
    this.others.clear();
    this.tokens = undefined;
    this.o.onChange?.(undefined);
  }

  /**
   * The authorization code grant (after /authorize with PKCE): exchanges the code and stores the tokens. `audience`
   * picks the API of the first access token (one of the authorization request's `resource` values).
   */
  async authorizationCode(o: {
    code: string;
    codeVerifier: string;
    redirectUri: string;
    audience?: string;
  }): Promise<Tokens> {
    const t = await tokenRequest(
      this.o.authUrl,
      {
        grant_type: 'authorization_code',
        code: o.code,
        code_verifier: o.codeVerifier,
        redirect_uri: o.redirectUri,
        resource: o.audience,
      },
      this.o,
      this.o.fetch,
    );
    this.set({ ...t, ...(o.audience ? { audience: o.audience } : {}) });
    return this.tokens ?? t;
  }

  /**
   * Sign-out of this client: revokes the refresh token at the token server (which ends the grant and its access
   * tokens) and forgets the tokens. The tokens are forgotten even when the token server cannot be reached.
   */
  async revoke(): Promise<void> {
    const refreshToken = this.tokens?.refresh_token;
    this.clear();
    if (!refreshToken) return;
    const body = new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token' });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (this.o.clientSecret !== undefined)
      headers.authorization = basic(this.o.clientId, this.o.clientSecret);
    else body.set('client_id', this.o.clientId);
    const fetchFn = this.o.fetch ?? globalThis.fetch;
    const res = await fetchFn(`${this.o.authUrl.replace(/\/+$/, '')}/revoke`, {
      method: 'POST',
      headers,
      body,
    });
    const text = await res.text();
    if (!res.ok) {
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* the text is the message */
      }
      throw new GatehouseError(res.status, toApiError(res.status, parsed, res.statusText), res);
    }
  }

  /**
   * The access token for a request, refreshed first when it is about to expire and a refresh token is held; for an
   * API of `audiences` other than the held tokens' own, that API's access token.
   */
  readonly token: TokenSource = async (request?: TokenRequest) => {
    const t = this.tokens;
    if (!t) return undefined;
    const key = this.keyOf(request?.audience);
    if (key === '') {
      if (fresh(t) || !t.refresh_token) return t.access_token;
      return (await this.refresh()).access_token;
    }
    const other = this.others.get(key);
    if (other && fresh(other)) return other.access_token;
    if (!t.refresh_token) return t.access_token;
    return (await this.refresh(key)).access_token;
  };

  /**
   * Refreshes now (for `audience`, one of `audiences`; default the held tokens' own API): one request however many
   * callers ask at once. Rejects when no refresh token is held.
   */
  refresh(audience?: string): Promise<Tokens> {
    const key = this.keyOf(audience);
    const waiting = this.pending.get(key);
    if (waiting) return waiting;
    const generation = this.generation;
    const p = this.queue.then(() => this.exchange(key, generation));
    this.queue = p.then(
      () => undefined,
      () => undefined,
    );
    this.pending.set(key, p);
    const done = () => {
      if (this.pending.get(key) === p) this.pending.delete(key);
    };
    p.then(done, done);
    return p;
  }

  /** '' for the held tokens' own API (no audience asked, none known, or that one), else the audience. */
  private keyOf(audience: string | undefined): string {
    if (audience === undefined || audience === this.tokens?.audience) return '';
    if (this.tokens?.audience === undefined || !this.o.audiences?.includes(audience)) return '';
    return audience;
  }

  private async exchange(key: string, generation: number): Promise<Tokens> {
    const held = this.tokens;
    if (generation !== this.generation || !held?.refresh_token) {
      throw new GatehouseError(400, {
        code: 'invalid_grant',
        message: held ? 'no refresh token is held' : 'the tokens were cleared',
      });
    }
    try {
      const t = await tokenRequest(
        this.o.authUrl,
        { grant_type: 'refresh_token', refresh_token: held.refresh_token, resource: key || undefined },
        this.o,
        this.o.fetch,
      );
      // cleared (signed out) or replaced meanwhile: keep nothing
      if (generation !== this.generation) return withExpiry(t);
      // rotation: the answer carries the new refresh token; keep the old one only if none came
      const refreshToken = t.refresh_token ?? held.refresh_token;
      let answer: Tokens;
      if (key === '') {
        answer = withExpiry({ ...t, refresh_token: refreshToken, ...audienceOf(held) });
        this.tokens = answer;
      } else {
        answer = withExpiry({ ...t, audience: key });
        this.others.set(key, answer);
        this.tokens = { ...held, refresh_token: refreshToken };
      }
      this.o.onChange?.(this.tokens);
      return answer;
    } catch (err) {
      // refused for good (revoked grant, reused or expired refresh token, blocked user): forget the tokens
      if (
        generation === this.generation &&
        err instanceof GatehouseError &&
        err.body.code === 'invalid_grant'
      ) {
        this.generation++;
        this.pending.clear();
        this.others.clear();
        this.tokens = undefined;
        this.o.onChange?.(undefined);
      }
      throw err;
    }
  }
}

function audienceOf(t: Tokens): { audience?: string } {
  return t.audience !== undefined ? { audience: t.audience } : {};
}
