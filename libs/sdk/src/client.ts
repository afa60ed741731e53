import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths as AuthPaths } from './generated/auth.js';
import type { paths as IdentityPaths } from './generated/identity.js';
import type { paths as TreePaths } from './generated/tree.js';

/** The API a service's access tokens are for (their `aud`); the token server needs none. */
export const MANAGEMENT_AUDIENCE = 'urn:gatehouse:management';
export const TREE_AUDIENCE = 'urn:gatehouse:tree';

/** Which service a token is asked for, and the audience its API needs. */
export interface TokenRequest {
  service: 'auth' | 'identity' | 'tree';
  /** `urn:gatehouse:management` for identity, `urn:gatehouse:tree` for tree, undefined for auth. */
  audience?: string;
}

/**
 * Where the bearer token of a request comes from, asked before every request: a fixed token, a user's tokens
 * ({@link RefreshingTokens}), a client's ({@link clientCredentials}). `undefined`: the request goes without one.
 * A source may use the {@link TokenRequest} it is given to answer a token of the right audience.
 */
export type TokenSource = (request?: TokenRequest) => string | undefined | Promise<string | undefined>;

export interface GatehouseOptions {
  /** The token server, e.g. `http://localhost:3000`. */
  authUrl: string;
  /** The management API, e.g. `http://localhost:3001`. */
  identityUrl: string;
  /** The tree manager API, e.g. `http://localhost:3002`. */
  treeUrl: string;
  /** The bearer token of every request (unless a request sets its own Authorization header). */
  token?: TokenSource;
  /** A token source per service, in place of `token` for that service. */
  tokens?: Partial<Record<TokenRequest['service'], TokenSource>>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Headers of every request (e.g. `Accept-Language`, `tenant_id`). */
  headers?: Record<string, string>;
}

/** Typed clients of the three services (openapi-fetch: `GET`, `POST`, `PATCH`, ... by path, typed from the documents). */
export interface Gatehouse {
  auth: Client<AuthPaths>;
  identity: Client<IdentityPaths>;
  tree: Client<TreePaths>;
}

const AUDIENCES: Record<TokenRequest['service'], string | undefined> = {
  auth: undefined,
  identity: MANAGEMENT_AUDIENCE,
  tree: TREE_AUDIENCE,
};

/** Adds `Authorization: Bearer <token>` to every request that has no Authorization header of its own. */
export function bearerMiddleware(source: TokenSource, request: TokenRequest): Middleware {
  return {
    async onRequest({ request: req }) {
      if (req.headers.has('authorization')) return undefined;
      const token = await source(request);
      if (!token) return undefined;
      req.headers.set('authorization', `Bearer ${token}`);
      return req;
    },
  };
}

function client<P extends object>(
  service: TokenRequest['service'],
  baseUrl: string,
  o: GatehouseOptions,
): Client<P> {
  const c = createClient<P>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(o.fetch ? { fetch: o.fetch } : {}),
    ...(o.headers ? { headers: o.headers } : {}),
  });
  const source = o.tokens?.[service] ?? o.token;
  if (source) c.use(bearerMiddleware(source, { service, audience: AUDIENCES[service] }));
  return c;
}

/**
 * The typed clients of a Gatehouse deployment. Every call answers `{data, error, response}` (openapi-fetch);
 * `unwrap()` turns that into the data or a thrown {@link GatehouseError}.
 */
export function createGatehouse(o: GatehouseOptions): Gatehouse {
  return {
    auth: client<AuthPaths>('auth', o.authUrl, o),
    identity: client<IdentityPaths>('identity', o.identityUrl, o),
    tree: client<TreePaths>('tree', o.treeUrl, o),
  };
}
