import { handleSignup } from '../signup/signup.js';
import type { Endpoint } from './context.js';
import { readParams } from './provider.js';

/** POST /signup: a public sign-up (Signup). */
export const signupEndpoint: Endpoint = async (ctx, req, res) => {
  const params = await readParams(req, res);
  if (params === undefined) return;
  return handleSignup(ctx.signup, ctx.data, res, req, params);
};
