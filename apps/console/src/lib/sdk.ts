// TEMPORARY stand-in for @gatehouse/sdk (libs/sdk, being built on branch h-sdk) with its announced interface:
// createGatehouse({authUrl, identityUrl, treeUrl, token}) -> {auth, identity, tree}; unwrap; GatehouseError.
// Replaced by `export * from '@gatehouse/sdk'` once the SDK is on main.
import createClient, { type Client } from 'openapi-fetch';

export class GatehouseError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const b = body as { message?: string; error_description?: string } | undefined;
    super(b?.message ?? b?.error_description ?? `HTTP ${status}`);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyPaths = any;

export interface GatehouseOptions {
  authUrl: string;
  identityUrl: string;
  treeUrl: string;
  token?: () => string | undefined | Promise<string | undefined>;
  fetch?: typeof fetch;
}

export function createGatehouse(o: GatehouseOptions): {
  auth: Client<AnyPaths>;
  identity: Client<AnyPaths>;
  tree: Client<AnyPaths>;
} {
  const make = (baseUrl: string) => {
    const c = createClient<AnyPaths>({ baseUrl, fetch: o.fetch });
    c.use({
      async onRequest({ request }) {
        const t = await o.token?.();
        if (t && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${t}`);
        return request;
      },
    });
    return c;
  };
  return { auth: make(o.authUrl), identity: make(o.identityUrl), tree: make(o.treeUrl) };
}

export function unwrap<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.error !== undefined || !r.response.ok) throw new GatehouseError(r.response.status, r.error);
  return r.data as T;
}
