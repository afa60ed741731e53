import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendOAuthError } from '../oidc/oauth-errors.js';
import { BodyError, one, parseParams, readBody, replayAsForm, type Params } from '../oidc/request-body.js';
import { normalizeTokenParams } from '../oidc/token-params.js';
import { rememberFields } from '../oidc/fields.js';
import type { Endpoint, EndpointContext } from './context.js';

/**
 * The endpoints oidc-provider answers, and the steps in front of it that they share: `fields` picked from the query
 * (GET) or the body (POST), and bodies (JSON or form alike) read here and replayed to oidc-provider as a form.
 */

/**
 * The query of a GET, with its `fields` remembered for oidc-provider's answer; undefined when `fields` names
 * something unknown (answered 400 here).
 */
export function queryWithFields(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): URLSearchParams | undefined {
  // parsed once for every reader (an authorization request's query is long)
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const fieldsError = rememberFields(req, path, query.get('fields') ?? undefined);
  if (fieldsError) {
    sendOAuthError(res, 400, 'invalid_request', fieldsError);
    return undefined;
  }
  return query;
}

/** The parameters of a POST body (token parameters normalised when `token`); undefined when answered 4xx here. */
export async function readParams(
  req: IncomingMessage,
  res: ServerResponse,
  token = false,
): Promise<Params | undefined> {
  try {
    const params = parseParams(req, await readBody(req));
    return token ? normalizeTokenParams(params) : params;
  } catch (err) {
    if (err instanceof BodyError) {
      sendOAuthError(res, err.status, err.error, err.message);
      return undefined;
    }
    throw err;
  }
}

/**
 * The request oidc-provider is handed for a POST: `params` replayed as a form body, with the memo of `req` and the
 * `fields` of the body (or else the query) remembered; undefined when `fields` names something unknown (400 here).
 */
export function replayToProvider(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  params: Params,
): IncomingMessage | undefined {
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const replay = replayAsForm(req, params);
  ctx.data.carryRequestMemo(req, replay);
  const fieldsError = rememberFields(replay, path, one(params, 'fields') ?? query.get('fields') ?? undefined);
  if (fieldsError) {
    sendOAuthError(res, 400, 'invalid_request', fieldsError);
    return undefined;
  }
  return replay;
}

/** A GET oidc-provider answers (discovery, JWKS, the device page). */
export const providerGet: Endpoint = async (ctx, req, res, path) => {
  if (queryWithFields(req, res, path) === undefined) return;
  ctx.oidc.callback(req, res);
};

/** A POST oidc-provider answers (revocation, the device page's form). */
export const providerPost: Endpoint = async (ctx, req, res, path) => {
  const params = await readParams(req, res);
  if (params === undefined) return;
  const replay = replayToProvider(ctx, req, res, path, params);
  if (replay !== undefined) ctx.oidc.callback(replay, res);
};

/** POST /device/code (RFC 8628 device authorization): token parameters, answered by oidc-provider. */
export const deviceAuthorization: Endpoint = async (ctx, req, res, path) => {
  const params = await readParams(req, res, true);
  if (params === undefined) return;
  const replay = replayToProvider(ctx, req, res, path, params);
  if (replay !== undefined) ctx.oidc.callback(replay, res);
};

/**
 * What oidc-provider serves under a path of its own (`/authorize/<uid>` resuming after an interaction, the steps of
 * logout, `/device/...`): handed over as it is, its reads memoised for the request.
 */
export function providerRequest(ctx: EndpointContext, req: IncomingMessage, res: ServerResponse): void {
  ctx.data.withRequestMemo(req, () => ctx.oidc.callback(req, res));
}
