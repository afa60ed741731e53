import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastLane } from '@gatehouse/http';
import { isStoreUnavailable, sendOAuthError } from '../oidc/oauth-errors.js';
import type { Endpoint, EndpointContext } from './context.js';
import { interactionPage } from './pages.js';
import { providerRequest } from './provider.js';
import { ROUTE_TABLE, SUBTREES, type EndpointRoute, type Subtree } from './routes.js';

/** A route of the table as the router serves it: the endpoint of each method looked up in a Map. */
interface CompiledRoute {
  readonly route: EndpointRoute | undefined;
  /** The endpoint of each method of an endpoint route (empty for logout steps). */
  readonly endpoints: ReadonlyMap<string, Endpoint>;
  readonly methods: readonly string[];
}

function compile(): Map<string, CompiledRoute> {
  const byPath = new Map<string, CompiledRoute>();
  for (const r of ROUTE_TABLE) {
    const endpoints = new Map<string, Endpoint>();
    if (r.kind === 'endpoint') for (const [m, e] of Object.entries(r.methods)) endpoints.set(m, e.serve);
    byPath.set(r.path, {
      route: r.kind === 'endpoint' ? r : undefined,
      endpoints,
      methods: Object.keys(r.methods),
    });
  }
  return byPath;
}

/** The subtree `method path` falls in, if any (`path` being none of the table's). */
function subtreeOf(method: string, path: string): Subtree | undefined {
  for (const s of SUBTREES) {
    if (path.startsWith(s.prefix) && (s.method === undefined || s.method === method)) return s;
  }
  return undefined;
}

/**
 * The token server's requests on the foundation's fast lane: a path of the route table found in one Map lookup
 * and served by its endpoint, else one of the subtrees (interaction pages, oidc-provider's own paths).
 */
export class TokenServerRouter {
  private readonly routes = compile();

  constructor(private readonly ctx: EndpointContext) {}

  /** Whether the token server serves `method path` (path without the query): exactly what {@link serve} answers. */
  claims(method: string, path: string): boolean {
    return this.routes.has(path) || subtreeOf(method, path) !== undefined;
  }

  /** The foundation's fast lane: the token server on node's request, without Express (see createHttpApp). */
  lane(): FastLane {
    return {
      matches: (method, path) => this.claims(method, path),
      handle: (req, res, next) => this.serve(req, res, next),
    };
  }

  /** Serves what {@link claims}; passes anything else on to `next`. */
  serve(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void {
    const path = (req.url ?? '/').split('?')[0];
    const compiled = this.routes.get(path);
    if (compiled !== undefined) {
      if (compiled.route === undefined) return this.logout(req, res, path, compiled.methods);
      return this.endpoint(compiled, compiled.route, req, res, path);
    }
    const subtree = subtreeOf(req.method ?? 'GET', path);
    if (subtree === undefined) return next();
    if (subtree.kind === 'interaction') {
      interactionPage(this.ctx, req, res, path).catch((err: unknown) => this.fail(res, err));
    } else {
      providerRequest(this.ctx, req, res);
    }
  }

  private endpoint(
    compiled: CompiledRoute,
    route: EndpointRoute,
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
  ): void {
    const ctx = this.ctx;
    if (route.replay !== undefined && req.method === 'GET' && route.replay(ctx, req, res)) return;
    (route.hot
      ? this.dispatch(compiled, route, req, res, path)
      : ctx.data.withRequestMemo(req, () => this.dispatch(compiled, route, req, res, path))
    ).catch((err: unknown) => this.fail(res, err));
  }

  /** The method's endpoint, else (OPTIONS, another method) {@link refuse}. Neither throws: both are async. */
  private dispatch(
    compiled: CompiledRoute,
    route: EndpointRoute,
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
  ): Promise<void> {
    const endpoint = compiled.endpoints.get(req.method ?? 'GET');
    if (endpoint !== undefined) return endpoint(this.ctx, req, res, path);
    return this.refuse(compiled, route, req, res, path);
  }

  /** OPTIONS goes to oidc-provider (CORS) unless the route takes no preflight; any other method is 405. */
  private async refuse(
    compiled: CompiledRoute,
    route: EndpointRoute,
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS' && !route.noPreflight) return this.ctx.oidc.callback(req, res);
    sendOAuthError(res, 405, 'method_not_allowed', `${method} is not allowed on ${path}`, {
      Allow: compiled.methods.join(', '),
    });
  }

  /**
   * RP-initiated logout answers GET (its confirm step POST, its success step GET); any other method is a 405
   * like on every known path (oidc-provider itself answered 404; found by tools/reliability/fuzz.mjs).
   */
  private logout(req: IncomingMessage, res: ServerResponse, path: string, methods: readonly string[]): void {
    const method = req.method ?? 'GET';
    const allowed = methods.includes(method === 'HEAD' ? 'GET' : method) || method === 'OPTIONS';
    if (!allowed) {
      sendOAuthError(res, 405, 'method_not_allowed', `${req.method} is not allowed on ${path}`, {
        Allow: methods.join(', '),
      });
      return;
    }
    providerRequest(this.ctx, req, res);
  }

  private fail(res: ServerResponse, err: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (isStoreUnavailable(err)) {
      this.ctx.log.warn({ err: (err as Error).message }, 'token server: data store unavailable');
      sendOAuthError(res, 503, 'temporarily_unavailable', 'a data store of the token server is unavailable', {
        'Retry-After': '5',
      });
      return;
    }
    this.ctx.log.error({ err }, 'token server error');
    sendOAuthError(res, 500, 'server_error', 'internal error');
  }
}
