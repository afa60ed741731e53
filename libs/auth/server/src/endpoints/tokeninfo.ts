import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeJwt } from 'jose';
import { sendOAuthError } from '../oidc/oauth-errors.js';
import { BodyError, one, parseParams, readBody } from '../oidc/request-body.js';
import { looksLikeJwt } from '../tokeninfo/tokeninfo.service.js';
import { handleTokenInfo, sendJsonText } from '../tokeninfo/tokeninfo.handler.js';
import type { Endpoint, EndpointContext } from './context.js';

export const TOKENINFO_PATH = '/tokeninfo';

/** A JWT whose claims name no grant (a client's own token): its /tokeninfo answer may be reused (answer). */
function isGrantlessJwt(token: string): boolean {
  if (!looksLikeJwt(token)) return false;
  try {
    return decodeJwt(token).grant_id === undefined;
  } catch {
    return false;
  }
}

/** POST /tokeninfo, a hot path (served without a request memo): the body read once, as it came. */
export const tokenInfoEndpoint: Endpoint = async (ctx, req, res) => {
  try {
    const raw = await readBody(req);
    return await answer(ctx, req, res, raw);
  } catch (err) {
    if (err instanceof BodyError) return sendOAuthError(res, err.status, err.error, err.message);
    throw err;
  }
};

/**
 * An answer given before for the very same request while nothing it was computed from changed
 * (TokenInfoAnswers), else computed.
 */
async function answer(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  raw: Buffer,
): Promise<void> {
  const key = ctx.tokenInfoAnswers.key(req, raw);
  // (what is stored is only ever the answer about JWTs: see below)
  const version = ctx.data.stateVersion();
  const keys = ctx.oidc.keys;
  const known = ctx.tokenInfoAnswers.get(key, version, keys);
  if (known !== undefined) return sendJsonText(res, known);
  const params = parseParams(req, raw);
  const computed = await handleTokenInfo(ctx.tokenInfo, req, res, params, ctx.issuer);
  // Only JWTs without a grant (the token asked about, and a Bearer caller's own token): everything that decides
  // their answer is in the state cache or the key set. An opaque token's row may be revoked or consumed, and a
  // grant may run out before the token, without a change of either.
  const bearer = /^bearer /i.test(req.headers.authorization ?? '')
    ? (req.headers.authorization ?? '').slice(7).trim()
    : undefined;
  const token = one(params, 'token') ?? '';
  if (computed && isGrantlessJwt(token) && (bearer === undefined || isGrantlessJwt(bearer))) {
    ctx.tokenInfoAnswers.set(key, computed.json, computed.until, version, keys);
  }
}
