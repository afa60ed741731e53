import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendOAuthError } from '../oidc/oauth-errors.js';
import type { OidcClientRecord } from '../oidc/oidc-data.js';
import { one, type Params } from '../oidc/request-body.js';
import { TOKENINFO_FIELDS, type TokenInfo, type TokenInfoService } from './tokeninfo.service.js';

const FIELD_SET: ReadonlySet<string> = new Set(TOKENINFO_FIELDS);

function basicCredentials(header: string): { id: string; secret: string } | undefined {
  const b64 = header.slice(6).trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return undefined;
  const decoded = Buffer.from(b64, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0) return undefined;
  try {
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, '%20'));
    return { id: dec(decoded.slice(0, i)), secret: dec(decoded.slice(i + 1)) };
  } catch {
    return undefined;
  }
}

/**
 * POST /tokeninfo (document 1 "Token info"): body or query `token`, `token_type_hint`, `fields`. The caller
 * authenticates with `Authorization: Bearer <an active access token>` (the token being asked about counts) or
 * `Basic` client credentials (or client_id/client_secret in the body). 200 with the token's description, or
 * `{"active": false}`.
 */
export async function handleTokenInfo(
  service: TokenInfoService,
  req: IncomingMessage,
  res: ServerResponse,
  body: Params,
  realm: string,
): Promise<void> {
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const param = (name: string) => one(body, name) ?? query.get(name) ?? undefined;
  const token = param('token');
  const hint = param('token_type_hint');
  const fieldsRaw = param('fields');

  let fields: string[] | undefined;
  if (fieldsRaw) {
    fields = fieldsRaw
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean);
    const unknown = fields.filter((f) => !FIELD_SET.has(f));
    if (unknown.length) {
      return sendOAuthError(res, 400, 'invalid_request', `unknown field(s) in fields: ${unknown.join(', ')}`);
    }
  }
  if (!token) return sendOAuthError(res, 400, 'invalid_request', "missing required parameter 'token'");

  const authz = req.headers.authorization ?? '';
  let result: TokenInfo | undefined;
  let caller: OidcClientRecord | undefined;
  if (/^bearer /i.test(authz)) {
    const bearer = authz.slice(7).trim();
    const caller = await service.introspect(bearer);
    if (bearer === token) {
      // The token authenticates itself by possession; an inactive one is simply reported inactive.
      result = caller;
    } else if (!caller.active) {
      return sendOAuthError(res, 401, 'invalid_token', 'the bearer token is not active', {
        'WWW-Authenticate': `Bearer realm="${realm}", error="invalid_token"`,
      });
    }
  } else {
    let creds: { id: string; secret: string } | undefined;
    if (/^basic /i.test(authz)) creds = basicCredentials(authz);
    else if (!authz) {
      const id = one(body, 'client_id');
      const secret = one(body, 'client_secret');
      if (id && secret) creds = { id, secret };
    }
    if (!creds) {
      const given = Boolean(authz);
      return sendOAuthError(
        res,
        401,
        given ? 'invalid_request' : 'invalid_client',
        given
          ? 'the Authorization header must be Bearer <token> or Basic <client credentials>'
          : 'authenticate with a Bearer token or Basic client credentials',
        { 'WWW-Authenticate': `Bearer realm="${realm}", Basic realm="${realm}"` },
      );
    }
    caller = await service.authenticateClient(creds.id, creds.secret);
    if (!caller) {
      return sendOAuthError(res, 401, 'invalid_client', 'client authentication failed', {
        'WWW-Authenticate': `Basic realm="${realm}", error="invalid_client"`,
      });
    }
  }

  result ??= await service.introspect(token, hint, caller);
  let out: Record<string, unknown> = result as unknown as Record<string, unknown>;
  if (fields && result.active) {
    out = Object.fromEntries(fields.filter((f) => f in out).map((f) => [f, out[f]]));
  }
  const json = JSON.stringify(out);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.end(json);
}
