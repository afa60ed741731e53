import { handleIntrospection } from '../tokeninfo/tokeninfo.handler.js';
import type { Endpoint } from './context.js';
import { readParams } from './provider.js';

/** POST /token/introspection (RFC 7662): ours, not oidc-provider's (see handleIntrospection). */
export const introspectionEndpoint: Endpoint = async (ctx, req, res) => {
  const params = await readParams(req, res);
  if (params === undefined) return;
  return handleIntrospection(ctx.tokenInfo, req, res, params, ctx.issuer);
};
