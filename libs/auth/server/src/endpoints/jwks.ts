import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EndpointContext } from './context.js';

/**
 * GET /jwks, before the request memo: the answer oidc-provider gave for the current key set, replayed (JwksReplay);
 * false when the request is not a plain one (then served as any GET of oidc-provider's).
 */
export function replayJwks(ctx: EndpointContext, req: IncomingMessage, res: ServerResponse): boolean {
  return ctx.jwks.serve(req, res, ctx.oidc.keys, ctx.oidc.callback);
}
