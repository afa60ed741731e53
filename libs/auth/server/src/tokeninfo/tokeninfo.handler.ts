import type { IncomingMessage, ServerResponse } from 'node:http';
import { basicOrPostCredentials, TOKENINFO_BASIC } from '../client-auth/index.js';
import { sendOAuthError } from '../oidc/oauth-errors.js';
import type { OidcClientRecord } from '../oidc/oidc-data.js';
import { one, type Params } from '../oidc/request-body.js';
import {
  ID_TOKEN_CLAIMS,
  INACTIVE,
  TOKENINFO_FIELDS,
  type TokenInfo,
  type TokenInfoService,
} from './tokeninfo.service.js';

/** What `fields` may name: document 1's fields, and the claims an ID token's answer adds (token_type_hint=id_token). */
const FIELD_SET: ReadonlySet<string> = new Set<string>([...TOKENINFO_FIELDS, ...ID_TOKEN_CLAIMS]);

/**
 * What a caller may learn about a token: its own client's tokens, and the tokens for a resource it is authorized on
 * (a resource server checking tokens meant for it) issued to a client of its own instance. Anything else is answered `{"active": false}`, as RFC 7662
 * section 4 lets a server answer a caller it does not trust with the token.
 */
async function visibleTo(
  service: TokenInfoService,
  info: TokenInfo,
  callerClientId: string,
): Promise<TokenInfo> {
  if (!info.active || info.client_id === callerClientId) return info;
  const aud = typeof info.aud === 'string' ? info.aud : undefined;
  if (aud && (await service.isAuthorizedOn(callerClientId, aud, info.client_id))) return info;
  return INACTIVE;
}

/** The fields `fields` names, or the error message naming those it may not name. */
function fieldList(raw: string): string[] | string {
  const fields = raw
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  const unknown = fields.filter((f) => !FIELD_SET.has(f));
  return unknown.length ? `unknown field(s) in fields: ${unknown.join(', ')}` : fields;
}

/** 400 when the query string names a parameter that belongs in the body (a token must never sit in a URL). */
function queryTokenError(req: IncomingMessage): string | undefined {
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  for (const name of ['token', 'token_type_hint', 'client_secret']) {
    if (query.has(name)) return `${name} must be sent in the request body, never in the URL`;
  }
  return undefined;
}

/**
 * POST /tokeninfo (document 1 "Token info"): body `token`, `token_type_hint`, `fields` (also in the query). The
 * caller authenticates with `Authorization: Bearer <an active access token>` (the token being asked about counts;
 * a refresh token is no credential) or `Basic` client credentials (or client_id/client_secret in the body). 200 with
 * the token's description, or `{"active": false}`, also for a token the caller may not see (another client's, for a
 * resource the caller is not authorized on).
 */
export async function handleTokenInfo(
  service: TokenInfoService,
  req: IncomingMessage,
  res: ServerResponse,
  body: Params,
  realm: string,
): Promise<{ json: string; until: number } | void> {
  const inUrl = queryTokenError(req);
  if (inUrl) return sendOAuthError(res, 400, 'invalid_request', inUrl);
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const token = one(body, 'token');
  const hint = one(body, 'token_type_hint');
  const fieldsRaw = one(body, 'fields') ?? query.get('fields') ?? undefined;

  const fields = fieldsRaw ? fieldList(fieldsRaw) : undefined;
  if (typeof fields === 'string') return sendOAuthError(res, 400, 'invalid_request', fields);
  if (!token) return sendOAuthError(res, 400, 'invalid_request', "missing required parameter 'token'");

  const authz = req.headers.authorization ?? '';
  let caller: OidcClientRecord | undefined;
  let callerClientId: string;
  /** When the caller's credential stops counting (its bearer token's or its secret's expiry), if it does. */
  let callerUntil: number | undefined;
  if (/^bearer /i.test(authz)) {
    const bearer = authz.slice(7).trim();
    const described = await service.introspect(bearer);
    // Only an active access token authenticates a caller; a refresh token is a credential for /token alone.
    const isAccessToken = described.active && described.token_type === 'Bearer';
    // A token asking about itself authenticates by possession: one that is not an active access token is simply
    // reported inactive (what a resource server checking its caller's token needs to know).
    if (bearer === token) {
      if (!isAccessToken) return void sendJson(res, INACTIVE);
      return { json: sendJson(res, pick(described, fields)), until: untilOf(described.exp) };
    }
    if (!isAccessToken) {
      return sendOAuthError(res, 401, 'invalid_token', 'the bearer token is not an active access token', {
        'WWW-Authenticate': `Bearer realm="${realm}", error="invalid_token"`,
      });
    }
    callerClientId = described.client_id;
    callerUntil = described.exp ? Date.parse(described.exp) : undefined;
  } else {
    const creds = basicOrPostCredentials(authz, body, TOKENINFO_BASIC);
    if (!creds) {
      const given = Boolean(authz);
      return sendOAuthError(
        res,
        401,
        given ? 'invalid_request' : 'invalid_client',
        given
          ? 'the Authorization header must be Bearer <token> or Basic <client credentials>'
          : 'authenticate with a Bearer token, Basic client credentials, or client_id and client_secret in the body',
        { 'WWW-Authenticate': `Bearer realm="${realm}", Basic realm="${realm}"` },
      );
    }
    caller = await service.authenticateClient(creds.id, creds.secret);
    if (!caller) {
      return sendOAuthError(res, 401, 'invalid_client', 'client authentication failed', {
        'WWW-Authenticate': `Basic realm="${realm}", error="invalid_client"`,
      });
    }
    callerClientId = caller.id;
    callerUntil = caller.clientSecretExpiresAt ? new Date(caller.clientSecretExpiresAt).getTime() : undefined;
  }

  // An ID token is described only to the client it was issued to (its `aud`), whatever else the caller may see.
  const result =
    hint === 'id_token'
      ? await service.introspectIdToken(token, callerClientId)
      : await visibleTo(service, await service.introspect(token, hint, caller), callerClientId);
  const json = sendJson(res, pick(result, fields));
  return result.active ? { json, until: Math.min(untilOf(result.exp), callerUntil ?? Infinity) } : undefined;
}

/** Only the `fields` asked for, of an active token's description. */
function pick(info: TokenInfo, fields: string[] | undefined): unknown {
  if (!fields || !info.active) return info;
  const all = info as unknown as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => f in all).map((f) => [f, all[f]]));
}

/** Epoch ms of an ISO time (NaN when there is none: such an answer is not kept). */
const untilOf = (iso: string | undefined) => (iso ? Date.parse(iso) : NaN);

/** Answers 200 with `out` as JSON (the JSON is returned). */
function sendJson(res: ServerResponse, out: unknown): string {
  const json = JSON.stringify(out);
  sendJsonText(res, json);
  return json;
}

/** Answers 200 with this JSON text, as /tokeninfo and the introspection endpoint answer. */
export function sendJsonText(res: ServerResponse, json: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.end(json);
}

/**
 * The answers /tokeninfo gave about active tokens, by the exact request (credentials, body, query, content type),
 * reused while nothing they were computed from can have changed: the state cache's version (every change the
 * identity feed announces, and any lapse of its trust, moves it), the key set, and the token's expiry. Bounded.
 */
export class TokenInfoAnswers {
  private readonly answers = new Map<
    string,
    { json: string; expMs: number; version: number; keys: unknown }
  >();

  constructor(private readonly max = 5_000) {}

  /** The key of a request: everything the answer was computed from that the request carries. */
  key(req: IncomingMessage, body: Buffer): string {
    const h = req.headers;
    return `${req.url}\n${h.authorization ?? ''}\n${h['content-type'] ?? ''}\n${body.toString('latin1')}`;
  }

  get(key: string, version: number | undefined, keys: unknown): string | undefined {
    const a = this.answers.get(key);
    if (!a) return undefined;
    if (a.version !== version || a.keys !== keys || Date.now() >= a.expMs) {
      this.answers.delete(key);
      return undefined;
    }
    return a.json;
  }

  /** Keeps an answer until `until` (epoch ms: the token's expiry, or sooner the caller's credential's). */
  set(key: string, json: string, until: number, version: number | undefined, keys: unknown): void {
    const expMs = until;
    if (version === undefined || !Number.isFinite(expMs)) return;
    if (this.answers.size >= this.max) this.answers.delete(this.answers.keys().next().value as string);
    this.answers.set(key, { json, expMs, version, keys });
  }
}

const epoch = (iso: unknown) => (typeof iso === 'string' ? Math.floor(Date.parse(iso) / 1000) : undefined);

/**
 * POST /token/introspection, RFC 7662: the same checks as /tokeninfo for every token this server issues, JWT access
 * tokens included (oidc-provider's own introspection refuses those), answered in RFC 7662's shape (NumericDate
 * times). The caller is a client: Basic or client_secret_post credentials; a public client names itself with
 * `client_id` alone and sees only its own tokens. Another client's token: `{"active": false}` unless the caller is
 * authorized on the token's audience.
 */
export async function handleIntrospection(
  service: TokenInfoService,
  req: IncomingMessage,
  res: ServerResponse,
  body: Params,
  realm: string,
): Promise<void> {
  const inUrl = queryTokenError(req);
  if (inUrl) return sendOAuthError(res, 400, 'invalid_request', inUrl);
  const authz = req.headers.authorization ?? '';
  const creds = basicOrPostCredentials(authz, body, TOKENINFO_BASIC);
  let callerId: string | undefined;
  let caller: OidcClientRecord | undefined;
  if (creds) {
    caller = await service.authenticateClient(creds.id, creds.secret);
    callerId = caller?.id;
  } else {
    const publicId = authz ? undefined : one(body, 'client_id');
    if (publicId) callerId = (await service.publicClient(publicId))?.id;
  }
  if (!callerId) {
    return sendOAuthError(res, 401, 'invalid_client', 'client authentication failed', {
      'WWW-Authenticate': `Basic realm="${realm}", error="invalid_client"`,
    });
  }
  const token = one(body, 'token');
  if (!token) return sendOAuthError(res, 400, 'invalid_request', "missing required parameter 'token'");
  const info = await service.introspect(token, one(body, 'token_type_hint'), caller);
  const seen = caller
    ? await visibleTo(service, info, callerId)
    : info.active && info.client_id === callerId
      ? info
      : INACTIVE;
  if (!seen.active) return void sendJson(res, { active: false });
  sendJson(res, {
    active: true,
    scope: seen.scope || undefined,
    client_id: seen.client_id,
    username: seen.username,
    token_type: seen.token_type,
    exp: epoch(seen.exp),
    iat: epoch(seen.iat),
    nbf: epoch(seen.nbf),
    sub: seen.sub,
    aud: seen.aud,
    iss: seen.iss,
    jti: seen.jti,
    tenant_id: seen.tenant_id,
    acting_tenant_id: seen.acting_tenant_id,
    instance_id: seen.instance_id,
    default_instance: seen.default_instance,
  });
}
