import type { Endpoint } from './context.js';
import { readParams } from './provider.js';

/** POST /passwordless/start (document 2): a one-time code or a sign-in link sent (PasswordlessStart). */
export const passwordlessStartEndpoint: Endpoint = async (ctx, req, res) => {
  const params = await readParams(req, res);
  if (params === undefined) return;
  return ctx.passwordless.handle(req, res, params);
};
