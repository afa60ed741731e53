import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeJwt } from 'jose';
import type Provider from 'oidc-provider';
import { looksLikeJwt, type TokenInfoService } from '../tokeninfo/tokeninfo.service.js';
import { applyFields } from './fields.js';
import { sendOAuthError } from './oauth-errors.js';
import type { OidcData } from './oidc-data.js';
import { CLAIMS, userClaims } from './provider.js';
import { one, type Params } from './request-body.js';

export interface ApiUserinfoDeps {
  provider(): Provider;
  tokenInfo: TokenInfoService;
  data: OidcData;
  /** The issuer: the realm of WWW-Authenticate. */
  realm: string;
}

/**
 * /userinfo for an access token issued for an API (with `audience` / `resource`), which oidc-provider's userinfo
 * refuses ("token audience prevents accessing the userinfo endpoint"; and it cannot find a JWT access token at all).
 * Document 2 says userinfo works whenever `openid` was granted, and Auth0 serves it for such tokens (it adds its
 * userinfo audience to them), so a relying party that logged in for an API needs no second token.
 *
 * The token is checked as /tokeninfo checks it (signature, `iss`, the one audience, expiry, the client still
 * authorized on the API, the grant not revoked, the user there and not blocked): anything else is 401
 * invalid_token. The token's `scope` names only the API's scopes (RFC 8707, RFC 9068); the OpenID scopes come from
 * the grant it was issued from (the user's consent to the client, or the password / one-time code login): without
 * `openid` there, or for a client's own token, 403 insufficient_scope (RFC 6750 3.1). Claims by those scopes, as for
 * any other token. Tokens without an audience (and requests that are no plain Bearer request) stay
 * oidc-provider's.
 */
export class ApiUserinfo {
  constructor(private readonly deps: ApiUserinfoDeps) {}

  /**
   * Answers the request when its token is an access token for an API; false (nothing written) when oidc-provider's
   * userinfo should answer. `req` is the request `fields` was remembered for; `body` its parameters (POST).
   */
  async handle(req: IncomingMessage, res: ServerResponse, body: Params = {}): Promise<boolean> {
    const authz = req.headers.authorization ?? '';
    if (!/^bearer /i.test(authz) || one(body, 'access_token') !== undefined) return false;
    const token = authz.slice(7).trim();
    if (!token || token.includes(' ')) return false;

    let grantId: string | undefined;
    if (looksLikeJwt(token)) {
      try {
        const g = decodeJwt(token).grant_id;
        grantId = typeof g === 'string' ? g : undefined;
      } catch {
        // not ours: refused below, as /tokeninfo finds it inactive
      }
    } else {
      const found = await this.deps
        .provider()
        .AccessToken.find(token)
        .catch(() => undefined);
      // no audience (or not found at all): oidc-provider's userinfo answers, as it always did
      if (!found || found.aud === undefined) return false;
      grantId = found.grantId;
    }

    const info = await this.deps.tokenInfo.introspect(token, 'access_token');
    if (!info.active || info.token_type !== 'Bearer') {
      this.refuse(res, 401, 'invalid_token', 'invalid or expired access token');
      return true;
    }
    // a client's own token (sub is the client) has no user and no OpenID scopes
    let granted = new Set<string>();
    if (grantId && info.sub !== info.client_id) {
      const grant = await this.deps.provider().Grant.find(grantId);
      if (!grant) {
        // gone (or expired) since the token was checked: as a revoked token
        this.refuse(res, 401, 'invalid_token', 'invalid or expired access token');
        return true;
      }
      granted = new Set((grant.getOIDCScope() ?? '').split(' ').filter(Boolean));
    }
    if (!granted.has('openid')) {
      this.refuse(res, 403, 'insufficient_scope', 'access token missing openid scope', 'openid');
      return true;
    }
    // `scope` (oidc-provider's userinfo parameter): only these of the granted scopes
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    const asked = (one(body, 'scope') ?? query.get('scope') ?? undefined)?.split(' ').filter(Boolean);
    const missing = asked?.filter((s) => !granted.has(s)) ?? [];
    if (missing.length) {
      this.refuse(res, 403, 'insufficient_scope', 'access token missing requested scope', missing.join(' '));
      return true;
    }
    const user = await this.deps.data.findUserById(info.sub);
    if (!user || user.isBlocked) {
      this.refuse(res, 401, 'invalid_token', 'invalid or expired access token');
      return true;
    }
    const scopes = asked ?? [...granted];
    const allowed = new Set<string>(['sub']);
    for (const s of scopes) for (const c of CLAIMS[s as keyof typeof CLAIMS] ?? []) allowed.add(c);
    const claims = Object.fromEntries(
      Object.entries(userClaims(user)).filter(([k]) => allowed.has(k)),
    ) as Record<string, unknown>;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.end(JSON.stringify(applyFields(req, claims)));
    return true;
  }

  private refuse(
    res: ServerResponse,
    status: number,
    error: string,
    description: string,
    scope?: string,
  ): void {
    const params = [
      `realm="${this.deps.realm}"`,
      `error="${error}"`,
      `error_description="${description}"`,
      ...(scope ? [`scope="${scope}"`] : []),
    ];
    sendOAuthError(res, status, error, description, { 'WWW-Authenticate': `Bearer ${params.join(', ')}` });
  }
}
