import type { Endpoint } from './context.js';
import { queryWithFields, readParams, replayToProvider } from './provider.js';

/** GET /userinfo: ours for access tokens issued for an API (ApiUserinfo), oidc-provider's for the others. */
export const userinfoGet: Endpoint = async (ctx, req, res, path) => {
  if (queryWithFields(req, res, path) === undefined) return;
  if (await ctx.apiUserinfo.handle(req, res)) return;
  ctx.oidc.callback(req, res);
};

/** POST /userinfo: as GET, the token in the body. */
export const userinfoPost: Endpoint = async (ctx, req, res, path) => {
  const params = await readParams(req, res);
  if (params === undefined) return;
  const replay = replayToProvider(ctx, req, res, path, params);
  if (replay === undefined) return;
  if (await ctx.apiUserinfo.handle(replay, res, params)) return;
  ctx.oidc.callback(replay, res);
};
