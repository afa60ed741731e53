import { basicClientId } from '../client-auth/index.js';
import { sendOAuthError } from '../oidc/oauth-errors.js';
import { BodyError, one, parseParams, readBody, type Params } from '../oidc/request-body.js';
import { normalizeTokenParams } from '../oidc/token-params.js';
import type { Endpoint } from './context.js';
import { DEVICE_POLL_INTERVAL_SEC } from './device-throttle.js';
import { replayToProvider } from './provider.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * POST /token, a hot path (served without a request memo up to oidc-provider): a plain client_credentials request
 * is answered by FastClientCredentials; device code polls are throttled (RFC 8628 slow_down); anything else goes to
 * oidc-provider within one request memo, the client and resource rows prefetched in one statement.
 */
export const tokenEndpoint: Endpoint = async (ctx, req, res, path) => {
  let params: Params;
  try {
    const raw = await readBody(req);
    params = normalizeTokenParams(parseParams(req, raw));
  } catch (err) {
    if (err instanceof BodyError) return sendOAuthError(res, err.status, err.error, err.message);
    throw err;
  }
  if (!(req.url ?? '').includes('?') && (await ctx.fastClientCredentials.tryIssue(req, res, params))) {
    return;
  }
  const replay = replayToProvider(ctx, req, res, path, params);
  if (replay === undefined) return;
  ctx.fastClientCredentials.scopes.carry(req, replay);
  if (one(params, 'grant_type') === DEVICE_GRANT) {
    const code = one(params, 'device_code');
    if (code && (await ctx.deviceThrottle.tooSoon(code))) {
      return sendOAuthError(
        res,
        400,
        'slow_down',
        `poll at most every ${DEVICE_POLL_INTERVAL_SEC} seconds (RFC 8628); wait ${DEVICE_POLL_INTERVAL_SEC} seconds more`,
      );
    }
  }
  // oidc-provider's token endpoint reads the same rows several times: within one request memo.
  const clientId = basicClientId(req.headers.authorization) ?? one(params, 'client_id');
  const resource = params.resource;
  ctx.data.withRequestMemo(replay, () => {
    if (clientId && typeof resource === 'string') ctx.data.prefetchTokenRequest(replay, clientId, resource);
    ctx.oidc.callback(replay, res);
  });
};
