import type { Endpoint } from './context.js';
import { queryWithFields } from './provider.js';

/** GET /authorize: oidc-provider's, after the PKCE waiver of a sign-in link is checked (LinkPkceWaiver). */
export const authorizeEndpoint: Endpoint = async (ctx, req, res, path) => {
  const query = queryWithFields(req, res, path);
  if (query === undefined) return;
  ctx.linkPkce.check(req, query);
  ctx.oidc.callback(req, res);
};
