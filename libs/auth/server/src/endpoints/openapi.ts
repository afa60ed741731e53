import { applyDecorators, HttpCode } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse } from '@nestjs/swagger';

/**
 * The OpenAPI operations of the token server's endpoints, one per method of a route of the route table
 * (endpoints/routes.ts), which names them; oauth-docs.controller.ts turns them into the documenting controller.
 * `name` is the controller method's (the operation id is derived from it).
 */
export interface OpenApiOperation {
  readonly name: string;
  readonly decorators: readonly MethodDecorator[];
}
const BOTH = ['application/x-www-form-urlencoded', 'application/json'];

const oauthError = {
  type: 'object',
  properties: {
    error: { type: 'string', example: 'invalid_grant' },
    error_description: { type: 'string' },
    code: { type: 'string', example: 'invalid_grant' },
    message: { type: 'string' },
  },
};

const str = (description: string, example?: string) => ({ type: 'string', description, example });

const OAUTH_ERROR_TEXT: Record<number, string> = {
  400: 'OAuth error: invalid_request (a missing, repeated or malformed parameter, a body that is neither form nor JSON)',
  401: 'invalid_client (client authentication failed) or invalid_token',
  413: 'payload_too_large: the body is over the limit',
  415: 'invalid_request: the body is neither application/x-www-form-urlencoded nor application/json',
};

/** OAuth endpoints' errors, in RFC 6749 form and the common form at once (`error` and `code`). */
const OAuthErrors = (...statuses: number[]) =>
  applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: OAUTH_ERROR_TEXT[status] ?? 'OAuth error', schema: oauthError }),
    ),
  );

/** A browser endpoint: it answers an HTML page (errors too: 400 or 404 pages) or a redirect. */
const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' } } },
});
const BrowserResponses = (...statuses: number[]) =>
  applyDecorators(
    ApiResponse({ status: 200, ...html('An HTML page (a form, a confirmation)') }),
    ApiResponse({
      status: 302,
      description: 'A redirect (to the next step, or to the redirect_uri with the result)',
    }),
    ApiResponse({ status: 303, description: 'A redirect after a form was posted' }),
    ...statuses.map((status) => ApiResponse({ status, ...html('An HTML error page (nothing is done)') })),
  );

const tokenRequest = (description: string, properties: Record<string, object>, required: string[] = []) =>
  ApiBody({ description, schema: { type: 'object', required, properties } });

/** POST /token */
export const token: OpenApiOperation = {
  name: 'token',
  decorators: [
    HttpCode(200),
    ApiOperation({
      summary: 'Get a token',
      description: `Grants: \`client_credentials\` (needs \`audience\`), \`password\` (username = e-mail, user name or phone),
\`refresh_token\` (rotating; a reused refresh token revokes its grant), \`authorization_code\` (PKCE S256 required;
after /authorize), \`urn:ietf:params:oauth:grant-type:device_code\` (alias \`device_code\`; after POST /device/code,
with authorization_pending, slow_down, access_denied, expired_token), \`otp\`, and RFC 8693
\`urn:ietf:params:oauth:grant-type:token-exchange\` (alias \`token_exchange\`): \`subject_token\` is an ID token (or a JWT
access token) of an identity provider of the client's tenant (Tenant Identity Providers; a client without a tenant
may use those of every tenant of its instance), \`subject_token_type\` \`urn:ietf:params:oauth:token-type:id_token\`,
\`:jwt\` or \`:access_token\` (or, as document 1 describes it, the provider's kind, e.g. \`google\`; anything else is
400 \`invalid_request\`); its \`iss\` picks the enabled provider, its signature is checked against the provider's JWKS
(its jwks_uri or discovery; cached, fetched again for an unknown \`kid\`), \`aud\` must name the provider's client_id (an
access token may name it in \`azp\`/\`client_id\`), \`exp\` must be in the future; a kind of provider the instance turned
off (\`instance_metadata.identity_providers\` with \`enabled: false\`) is refused. The provider's tenant confines the
exchange (the access token's \`tenant_id\` names it): the user is the one of the User Identity (issuer + \`sub\`) when it
is of that tenant, else, when \`email_verified\` is true, the user of that tenant holding the e-mail (linked now; one
whose own e-mail was never verified is taken over: password cleared, grants, refresh tokens and sessions revoked),
else a new user of that tenant; an identity or e-mail held outside the tenant, or an unverified e-mail already held, is
refused with one generic \`invalid_grant\`; a blocked user or one of another tenant than the client's gets
\`invalid_grant\`, as does any token that fails a check. \`requested_token_type\` may only be the access token type;
\`actor_token\` (delegation) is 400. The answer adds \`issued_token_type\`. Other grant types (\`implicit\` is a response
type of /authorize) answer 400 \`unsupported_grant_type\`. \`audience\` is an alias of RFC 8707
\`resource\` (one per request); without \`scope\` the token carries every scope the client was granted on that API,
with \`scope\` the intersection. Client authentication: Basic, or client_id/client_secret in the body, or client_id
alone for public clients. Password logins: unknown user and wrong password give the same \`invalid_grant\`;
AUTH_LOCKOUT_THRESHOLD consecutive failures lock the account for AUTH_LOCKOUT_SECONDS; a blocked user is refused.
Access tokens for a resource are JWTs signed with its signing_algorithm (HS256 with its secret, RS256/ES256 with
the server keys at /jwks) or opaque for any other value; tokens without an audience are opaque and only good at
/userinfo. JWT access tokens follow RFC 9068: header \`typ: at+jwt\`, claims \`iss\`, \`sub\` (the user; the client itself
for client_credentials), \`aud\`, \`client_id\`, \`iat\`, \`exp\`, \`jti\`, \`scope\` when granted, and \`tenant_id\` where it
applies. \`fields\` (comma-separated) keeps only those attributes of the answer. Parameters are read from the body
only (form or JSON; RFC 6749 2.3.1 keeps credentials out of URLs); only \`fields\` is also read from the query.
\`username\` and \`password\` are required by the password grant only (\`username\` also by \`otp\`).
\`redirect_uri\` may be left out of an authorization_code request only by a client with exactly one callback; a
client with several sends the one of its authorize request.

Second factor (docs/security.md "Second factors"): the \`password\` and \`otp\` grants of a user with an authenticator
app (unless the effective MFA policy is \`off\`) answer 403 \`{"error": "mfa_required", "mfa_token": ...}\` instead of
tokens; the \`mfa_token\` (single use, 5 minutes, this client only) continues with
\`http://auth0.com/oauth/grant-type/mfa-otp\` (\`mfa_token\`, \`otp\`: the app's 6-digit code) or
\`http://auth0.com/oauth/grant-type/mfa-recovery-code\` (\`mfa_token\`, \`recovery_code\`), which issue what the first
request would have issued (its \`scope\` and \`audience\`), ID tokens with \`amr\` [pwd or otp, otp, mfa] and \`acr\`
\`urn:gatehouse:acr:mfa\`. The client needs these grant types in its \`client_metadata.grant_types\` (aliases
\`mfa_otp\`, \`mfa_recovery_code\`). A wrong, reused (a TOTP time step or recovery code already used) or locked second
factor is 400 \`invalid_grant\`; 5 wrong ones in 15 minutes lock the account's second factors for 15 minutes. A user
whose policy is \`required\` and who has no authenticator gets 403 \`mfa_required\` without an \`mfa_token\`: enrolment
needs the browser sign-in (/authorize shows the QR code). Without a second factor ID tokens carry \`amr\` [pwd] (or
[otp]) and \`acr\` \`urn:gatehouse:acr:pwd\`.`,
    }),
    ApiConsumes(...BOTH),
    ApiBody({
      schema: {
        type: 'object',
        required: ['grant_type'],
        properties: {
          grant_type: str('client_credentials | password | refresh_token', 'client_credentials'),
          client_id: str('client id (uuid)'),
          client_secret: str('client secret (or use Basic)'),
          audience: str('API identifier (alias of resource)', 'urn:gatehouse:management'),
          scope: str('space-separated scopes'),
          username: str('password grant: e-mail, user name or phone'),
          password: str('password grant'),
          refresh_token: str('refresh_token grant'),
          subject_token: str('token exchange: the ID token (or JWT access token) of an identity provider'),
          // no example: the body's example is a client_credentials request, which takes no subject token
          subject_token_type: str(
            'token exchange: urn:ietf:params:oauth:token-type:id_token | :jwt | :access_token',
          ),
          requested_token_type: str('token exchange: only urn:ietf:params:oauth:token-type:access_token'),
          mfa_token: str('MFA grants: the mfa_token of a 403 mfa_required answer'),
          otp: str(
            'otp grant: the one-time code sent; mfa-otp grant: the 6-digit code of the authenticator app',
          ),
          recovery_code: str('mfa-recovery-code grant: one of the recovery codes (each works once)'),
        },
      },
    }),
    ApiResponse({
      status: 200,
      description: 'Token response',
      schema: {
        type: 'object',
        properties: {
          access_token: { type: 'string' },
          token_type: { type: 'string', example: 'Bearer' },
          expires_in: { type: 'integer' },
          scope: { type: 'string' },
          refresh_token: { type: 'string' },
          id_token: { type: 'string' },
          issued_token_type: { type: 'string', description: 'token exchange only' },
        },
      },
    }),
    ApiResponse({
      status: 400,
      description:
        'OAuth error (invalid_request, invalid_grant, unsupported_grant_type, invalid_target, access_denied, invalid_scope)',
      schema: oauthError,
    }),
    ApiResponse({ status: 401, description: 'invalid_client', schema: oauthError }),
    ApiResponse({
      status: 403,
      description:
        'mfa_required (password and otp grants): the user needs a second factor; `mfa_token` continues with the ' +
        'mfa-otp or mfa-recovery-code grant (absent when the user must first enrol through the browser)',
      schema: {
        type: 'object',
        required: ['error', 'error_description', 'code', 'message'],
        properties: {
          ...oauthError.properties,
          mfa_token: { type: 'string', description: 'single use, 5 minutes, this client only' },
        },
      },
    }),
    OAuthErrors(413, 415),
  ],
};

/** POST /tokeninfo */
export const tokeninfo: OpenApiOperation = {
  name: 'tokeninfo',
  decorators: [
    HttpCode(200),
    ApiOperation({
      summary: 'Token info (introspection, document 1 shape)',
      description: `For opaque and JWT access tokens and refresh tokens this server issued. The caller authenticates
with \`Authorization: Bearer <active access token>\` (the token itself counts; a refresh token is no credential) or
Basic client credentials. \`token\` is read from the body only (in the query string: 400). A caller sees its own
client's tokens and the tokens for a resource it is authorized on; any other token is \`{"active": false}\`. Dates are
ISO 8601 strings. A JWT is active only with our \`iss\`, one audience, \`exp\`, a lifetime within its resource's, its
resource's algorithm and its client still authorized there; \`scope\` is what the client (and, for a user token of an
RBAC resource or of a system resource, the user) still holds. Inactive once expired, revoked (its grant), its client deleted or its user
blocked or given a new password: \`{"active": false}\`. \`fields\` picks attributes. Extensions: \`instance_id\` (the
instance of the token's client) and \`default_instance\` (whether it is the default instance), for resource servers
that confine their records to an instance (the tree manager); \`acting_tenant_id\` (a user token of the management
API that acts in one tenant: its user's, or the tenant whose admin role gives its scopes).

\`token_type_hint=id_token\`: the token is described as an ID token this server issued, and only to the client it
was issued to: our signature (the keys at /jwks), our \`iss\`, \`aud\` exactly the calling client (an ID token is for
its client: OIDC Core 3.1.3.7), not expired, its user still there and not blocked. Active: \`token_type: "id_token"\`,
\`client_id\` and \`aud\` (the caller), \`sub\`/\`subject\`, \`username\`, \`iss\`, \`exp\`/\`iat\`/\`nbf\` as date-time
strings, the instance extensions, and the token's own claims as signed (e.g. \`email\`, \`name\`, \`nonce\`,
\`auth_time\`, \`acr\`, \`amr\`, \`sid\`, \`at_hash\`), which \`fields\` may also pick. Another client's ID token, an
expired or altered one, or any other token with this hint (an access token included): \`{"active": false}\`.`,
    }),
    ApiConsumes(...BOTH),
    ApiBody({
      schema: {
        type: 'object',
        required: ['token'],
        properties: {
          token: str('the token to describe'),
          token_type_hint: str('access_token | refresh_token | id_token'),
          fields: str('comma-separated attributes to return'),
        },
      },
    }),
    ApiResponse({
      status: 200,
      description: 'Introspection response',
      schema: {
        type: 'object',
        properties: {
          active: { type: 'boolean' },
          token_type: { type: 'string', example: 'Bearer', description: 'Bearer | refresh_token | id_token' },
          client_id: { type: 'string', format: 'uuid' },
          scope: { type: 'string' },
          username: { type: 'string' },
          exp: { type: 'string', format: 'date-time' },
          iat: { type: 'string', format: 'date-time' },
          nbf: { type: 'string', format: 'date-time' },
          subject: { type: 'string' },
          sub: { type: 'string' },
          jti: { type: 'string' },
          aud: { type: 'string' },
          iss: { type: 'string' },
          tenant_id: { type: 'string' },
          acting_tenant_id: {
            type: 'string',
            format: 'uuid',
            description:
              'a user token of the management API confined to one tenant: the management API reaches that tenant only (extension)',
          },
          instance_id: {
            type: 'string',
            format: 'uuid',
            description: "the instance of the token's client (extension; every active answer has it)",
          },
          default_instance: {
            type: 'boolean',
            description: 'whether that instance is the default one (extension; every active answer has it)',
          },
        },
      },
    }),
    ApiResponse({ status: 401, description: 'invalid_client / invalid_token', schema: oauthError }),
    OAuthErrors(400, 413, 415),
  ],
};

/** POST /token/introspection */
export const introspection: OpenApiOperation = {
  name: 'introspection',
  decorators: [
    HttpCode(200),
    ApiOperation({
      summary: 'RFC 7662 token introspection',
      description:
        'Client-authenticated (Basic or client_secret_post; a public client by client_id, its own tokens only). The ' +
        'same checks as /tokeninfo, for opaque and JWT access tokens and refresh tokens, answered in RFC 7662 form ' +
        '(NumericDate times), with the extensions `tenant_id`, `instance_id` and `default_instance` of /tokeninfo. ' +
        'Another client\'s token is {"active": false} unless the caller is authorized on its audience.',
    }),
    ApiConsumes(...BOTH),
    tokenRequest(
      'RFC 7662 request',
      { token: str('the token'), token_type_hint: str('access_token | refresh_token') },
      ['token'],
    ),
    ApiResponse({
      status: 200,
      description: 'RFC 7662 answer: `{"active": false}` or the token\'s attributes',
    }),
    OAuthErrors(400, 401, 413, 415),
  ],
};

/** POST /revoke */
export const revoke: OpenApiOperation = {
  name: 'revoke',
  decorators: [
    HttpCode(200),
    ApiOperation({
      summary: 'Revoke a token (RFC 7009)',
      description:
        "Body `client_id`, `token` (+ secret). Revoking a refresh token or an opaque access token revokes its grant and the grant's other tokens. 200 with an empty body, also for an unknown token. A JWT access token (one issued for an API) is 400 `unsupported_token_type` (RFC 7009 2.2.1): it is checked without this server, so it cannot be revoked alone; revoke its refresh token or the user's grant, after which /tokeninfo, /userinfo and introspection refuse it.",
    }),
    ApiConsumes(...BOTH),
    tokenRequest(
      'RFC 7009 request',
      {
        token: str('the refresh token'),
        client_id: str('client id'),
        client_secret: str('client secret (or Basic)'),
      },
      ['token'],
    ),
    ApiResponse({ status: 200, description: 'Empty body, also for an unknown token' }),
    OAuthErrors(400, 401, 413, 415),
  ],
};

/** GET /userinfo */
export const userinfo: OpenApiOperation = {
  name: 'userinfo',
  decorators: [
    ApiOperation({
      summary: 'OpenID Connect userinfo',
      description:
        'Any access token of this server whose grant has `openid`: one without an audience, and one issued for an API ' +
        '(`audience` / `resource`, JWT or opaque), as Auth0 serves userinfo for such tokens, so a relying party that ' +
        "signed in for an API needs no second token. An API token's `scope` names only that API's scopes (RFC 8707, RFC " +
        '9068); its OpenID scopes are those of the grant it was issued from (the consent, or the password / one-time code ' +
        'login that asked for them). Claims by scope: profile, email, address, phone. Such a token is checked as /tokeninfo ' +
        'checks it (signature, issuer, audience, expiry, client still authorized, grant not revoked, user not blocked). ' +
        'POST works too. `fields` (query or body) keeps only those claims. Claim names are OpenID Connect Core 5.1 ' +
        "ones (`phone_number`, `birthdate`; `updated_at` is seconds since the epoch), as document 1's claims-by-scope " +
        'list uses them. 401 invalid_token for a missing, bad, expired ' +
        'or revoked token, 403 insufficient_scope (RFC 6750) for a valid token without `openid` (a client token ' +
        'included), each with `WWW-Authenticate: Bearer`.',
    }),
    ApiResponse({ status: 200, description: "The claims of the token's scopes" }),
    ApiResponse({ status: 403, description: 'insufficient_scope: no `openid` granted', schema: oauthError }),
    OAuthErrors(400, 401),
  ],
};

/** POST /userinfo */
export const userinfoPost: OpenApiOperation = {
  name: 'userinfoPost',
  decorators: [
    HttpCode(200),
    ApiOperation({ summary: 'OpenID Connect userinfo (POST)', description: 'As GET /userinfo.' }),
    ApiConsumes(...BOTH),
    ApiResponse({ status: 200, description: "The claims of the token's scopes" }),
    ApiResponse({ status: 403, description: 'insufficient_scope: no `openid` granted', schema: oauthError }),
    OAuthErrors(400, 401, 413, 415),
  ],
};

/** GET /jwks */
export const jwks: OpenApiOperation = {
  name: 'jwks',
  decorators: [
    ApiOperation({
      summary: 'Public signing keys (JWKS); a rotated key stays here until its tokens expired',
    }),
  ],
};

/** GET /.well-known/openid-configuration */
export const discovery: OpenApiOperation = {
  name: 'discovery',
  decorators: [
    ApiOperation({
      summary: 'OpenID Connect discovery (also lists tokeninfo_endpoint)',
      description:
        'Lists exactly what is served: grant types (with `password`, `otp`, the MFA grants, device code and token ' +
        'exchange; `implicit` ' +
        "is the authorization endpoint's), response types `code`, `id_token`, `id_token token`, response modes, " +
        'client authentication at the token, introspection and revocation endpoints, ID tokens signed RS256, the ' +
        'OpenID scopes and claims (`acr`, `amr` among them). `acr_values_supported`: `urn:gatehouse:acr:pwd` (one ' +
        'factor) and `urn:gatehouse:acr:mfa` (a second factor was used; asked for by `acr_values` at /authorize, ' +
        'it makes a one-factor session give the second factor, or enrol one). ' +
        'Authorization responses carry `iss` (RFC 9207), errors included, but for those with an ID token.',
    }),
  ],
};

/** GET /.well-known/oauth-authorization-server */
export const oauthMetadata: OpenApiOperation = {
  name: 'oauthMetadata',
  decorators: [
    ApiOperation({
      summary: 'RFC 8414 authorization server metadata (the same document as OpenID discovery)',
    }),
  ],
};

/** GET /authorize */
export const authorize: OpenApiOperation = {
  name: 'authorize',
  decorators: [
    ApiOperation({
      summary: 'Authorization endpoint (code + PKCE S256, implicit)',
      description:
        'Starts the browser flow: login, consent (skipped for first-party clients of resources that skip it), then a ' +
        'redirect to the client with a code or tokens. An unknown client or redirect_uri is an HTML error page (never a ' +
        'redirect); other errors go back to the redirect_uri as RFC 6749 errors, with `state` and `iss` (RFC 9207). ' +
        'Response types: `code`, and OpenID Connect implicit `id_token` / `id_token token`; `token` alone is ' +
        '`unsupported_response_type` (RFC 9700 advises against an access token in a fragment with nothing binding it ' +
        'to the request). GET only: a POSTed request (OIDC Core ' +
        'allows both) would need SameSite=None session cookies, which give up their CSRF protection; POST is 405.',
    }),
    BrowserResponses(400, 404),
  ],
};

/** POST /device/code */
export const deviceCode: OpenApiOperation = {
  name: 'deviceCode',
  decorators: [
    HttpCode(200),
    ApiOperation({
      summary: 'Device authorization (RFC 8628)',
      description:
        '`client_id`, `scope`, `audience` -> device_code, user_code, verification_uri, verification_uri_complete, ' +
        "expires_in (AUTH_DEVICE_CODE_TTL_SEC), interval. The user approves at GET /device. The device's tokens are " +
        "not bound to the approving browser's session: signing out there leaves the device signed in (end them at " +
        "/revoke, or revoke the user's grant in the identity API). `fields` (body or query, comma-separated) keeps " +
        'only those attributes of the answer, as at /token; an unknown name is 400 invalid_request naming it.',
    }),
    ApiConsumes(...BOTH),
    tokenRequest(
      'Device authorization request',
      {
        client_id: str('client id'),
        scope: str('space-separated scopes'),
        audience: str('API identifier'),
        fields: str(
          'comma-separated: device_code, user_code, verification_uri, verification_uri_complete, expires_in, interval',
        ),
      },
      ['client_id'],
    ),
    ApiResponse({ status: 200, description: 'Device code response' }),
    OAuthErrors(400, 401, 413, 415),
  ],
};

/** GET /session/end */
export const endSession: OpenApiOperation = {
  name: 'endSession',
  decorators: [
    ApiOperation({
      summary: 'RP-initiated logout (OpenID Connect)',
      description:
        'A confirmation page (no JavaScript) whose form posts to `/session/end/confirm`; `post_logout_redirect_uri` must ' +
        "be one of the client's client_metadata.urls.logout_urls (with `id_token_hint` or `client_id`), else an error " +
        'page; after the confirmation the session ends and the browser goes there (or to a signed-out page). GET only ' +
        '(as /authorize: a POSTed logout would need SameSite=None cookies); another method is 405.',
    }),
    BrowserResponses(400),
  ],
};

/** GET /device */
export const device: OpenApiOperation = {
  name: 'device',
  decorators: [
    ApiOperation({ summary: 'Device verification page (field user_code)' }),
    BrowserResponses(400),
  ],
};

/** POST /device */
export const devicePost: OpenApiOperation = {
  name: 'devicePost',
  decorators: [
    ApiOperation({ summary: 'Device verification page (form post)' }),
    ApiConsumes('application/x-www-form-urlencoded'),
    BrowserResponses(400, 413, 415),
  ],
};

/** POST /passwordless/start */
export const passwordlessStart: OpenApiOperation = {
  name: 'passwordlessStart',
  decorators: [
    HttpCode(200),
    ApiOperation({
      summary: 'Get a one-time code or link (document 2)',
      description:
        "Document 2's shape: `client_id`, `client_secret`, `username` (e-mail or E.164 phone) and an `options` object " +
        '`{send_type, redirect_url, response_type, scope}` (a form sends `options.send_type`, ...). Each option is also ' +
        'accepted at the top level (`redirect_uri` for redirect_url); given at both places with different values: 400 ' +
        'naming it. `send_type` `code` (default) or `link` (e-mail only). `response_type` `authorization_code` ' +
        "(document 2's sample value) or its OAuth name `code`, anything else 400 unsupported_response_type. " +
        "`redirect_url`, when given, must be one of the client's callbacks (client_metadata.urls.callbacks), else 400. " +
        'A code is redeemed with `grant_type=otp` (`username`, `otp`, `scope` and `audience` at /token). A link asks for ' +
        "an authorization code at `redirect_url` (as Auth0's passwordless link): its owner confirms it " +
        '(GET/POST /passwordless/verify), consents where the client needs it, and the browser lands at `redirect_url` ' +
        'with `code`, `state` (top-level `state`, if given) and `iss`; the client redeems the code at /token ' +
        '(grant_type=authorization_code, redirect_uri = redirect_url). `scope` (default `openid`), and top-level ' +
        '`audience`, `nonce`, `state`, `code_challenge` go with the link. PKCE: with `code_challenge` (S256) the code ' +
        'needs its verifier; a public client must send one; a confidential client may leave it out (the request ' +
        'document 2 shows has none) and redeems the code with its secret. Answer `{"send_type", "channel", ' +
        '"expires_in"}` whether or not the account exists (no account oracle). The message is queued and sent by the delivery outbox after the answer (retried with back-off while the mail server or SMS gateway is down), so the answer does not wait for, nor tell about, delivery. At most one message a minute and ' +
        '5 an hour go to one account and to one address (AUTH_OTP_SEND_INTERVAL_SEC, AUTH_OTP_SENDS_PER_HOUR): a ' +
        'request over the limit, or for an account locked after too many wrong codes, gets the same 200 and sends ' +
        'nothing. AUTH_OTP_MAX_FAILURES (10) wrong codes of one account within AUTH_OTP_FAILURE_WINDOW_SEC (15 min), ' +
        'across its codes, lock its one-time codes for AUTH_OTP_LOCK_SECONDS (15 min), each further lock twice as ' +
        'long (at most a day); while locked even the right code is invalid_grant.',
    }),
    ApiConsumes(...BOTH),
    ApiBody({
      description: "Document 2's get code or link request",
      schema: {
        type: 'object',
        required: ['client_id', 'username'],
        properties: {
          client_id: str('client id'),
          client_secret: str('client secret (or Basic credentials); none for a public client'),
          username: str('e-mail address or E.164 phone number'),
          options: {
            type: 'object',
            properties: {
              send_type: str('code (default) | link'),
              redirect_url: str("where a link's authorization code goes: one of the client's callbacks"),
              response_type: str('authorization_code (or code)'),
              scope: str('space-separated scopes of the link (default openid)'),
            },
          },
          state: str("returned with a link's code"),
          audience: str("API identifier of a link's tokens"),
          code_challenge: str('PKCE S256 challenge of a link (required for a public client)'),
        },
      },
    }),
    ApiResponse({
      status: 200,
      description: '{"send_type": "code" | "link", "channel": "email" | "sms", "expires_in"}',
    }),
    OAuthErrors(400, 401, 413, 415),
    ApiResponse({ status: 503, description: 'The database is unavailable', schema: oauthError }),
  ],
};

/** GET /passwordless/verify */
export const passwordlessVerify: OpenApiOperation = {
  name: 'passwordlessVerify',
  decorators: [
    ApiOperation({
      summary: 'A passwordless e-mail link: a page asking "Continue as j***@example.com?"',
      description:
        "`token` (the link's), `ui_locales`. Shows the masked account and a button posting `token` and `csrf` (its " +
        'SameSite=Strict cookie set here); uses nothing up and signs nobody in (login CSRF, mail scanners). An ' +
        'unknown, used or expired link: 400 page.',
    }),
    BrowserResponses(400),
  ],
};

/** POST /passwordless/verify */
export const passwordlessVerifyPost: OpenApiOperation = {
  name: 'passwordlessVerifyPost',
  decorators: [
    ApiOperation({
      summary: 'A passwordless e-mail link confirmed: signs in and continues the kept authorization request',
      description:
        'Form fields `token` and `csrf` (matching the cookie the page set). Uses the link up and answers 303 to ' +
        '`/authorize` with a two-minute single-use login ticket (cookie). A missing or wrong CSRF token: 403 page; an ' +
        'unknown, used or expired link: 400 page.',
    }),
    ApiConsumes('application/x-www-form-urlencoded'),
    BrowserResponses(400, 403, 413, 415),
  ],
};

/** POST /signup */
export const signup: OpenApiOperation = {
  name: 'signup',
  decorators: [
    ApiOperation({
      summary: 'Public sign-up',
      description:
        'For a client whose client_metadata.oauth.allow_signup is true: `client_id`, `email` or `phone`, `password` ' +
        "(the instance's password_validators), optional profile -> 201 user (no secrets); an e-mail gets a verification " +
        'link, queued in the delivery outbox and sent after the answer. Sign-ups are limited per source address ' +
        '(SIGNUP_MAX_PER_ADDRESS_PER_HOUR) and per instance (SIGNUP_MAX_PER_INSTANCE_PER_MINUTE): over a limit, 429 ' +
        '`too_many_requests` with Retry-After.',
    }),
    ApiConsumes(...BOTH),
    ApiResponse({ status: 201, description: 'The new user' }),
    OAuthErrors(400, 401, 413, 415),
    ApiResponse({ status: 403, description: 'Sign-up is not allowed for this client', schema: oauthError }),
    ApiResponse({ status: 409, description: 'The e-mail or phone is taken', schema: oauthError }),
    ApiResponse({
      status: 429,
      description: 'Too many sign-ups from this address or in this instance (Retry-After)',
      schema: oauthError,
    }),
  ],
};

/** GET /email-verification */
export const emailVerification: OpenApiOperation = {
  name: 'emailVerification',
  decorators: [ApiOperation({ summary: 'E-mail verification link of a sign-up' }), BrowserResponses(400)],
};

/** GET /tickets/password-change */
export const ticketPasswordPage: OpenApiOperation = {
  name: 'ticketPasswordPage',
  decorators: [
    ApiOperation({
      summary: 'Password change ticket page (HTML)',
      description:
        'The link of a password-change ticket or an invitation (made by the management API: `?ticket=...`, ' +
        '`ui_locales` optional): a form with field `password` and a submit button; English or Mongolian by ' +
        '`ui_locales` or Accept-Language. A used, expired or unknown ticket: an error page (400).',
    }),
    BrowserResponses(400),
  ],
};

/** POST /tickets/password-change */
export const ticketPassword: OpenApiOperation = {
  name: 'ticketPassword',
  decorators: [
    ApiOperation({
      summary: 'Set the password of a ticket (HTML form post)',
      description:
        "Form fields `ticket`, `csrf` (matching the page's cookie, else 403), `password` (checked against the " +
        "instance's password_validators: the form again, 400, the ticket still usable). Success uses the ticket up " +
        "(single use), sets the password (argon2id), clears a login lock, revokes the user's grants and tokens, ends " +
        'its other open password-change tickets, marks the e-mail verified for an invitation; then 303 to the ' +
        "ticket's result_url or a success page. A used, expired or unknown ticket: an error page (400).",
    }),
    ApiConsumes('application/x-www-form-urlencoded'),
    BrowserResponses(400, 403, 413, 415),
  ],
};

/** GET /tickets/email-verification */
export const ticketEmailPage: OpenApiOperation = {
  name: 'ticketEmailPage',
  decorators: [
    ApiOperation({
      summary: 'E-mail verification ticket page (HTML)',
      description:
        'The link of an e-mail verification ticket (`?ticket=...`): a page asking to confirm with a button (a ' +
        'mail scanner fetching the link does not use it up). A used, expired or unknown ticket: an error page (400).',
    }),
    BrowserResponses(400),
  ],
};

/** POST /tickets/email-verification */
export const ticketEmail: OpenApiOperation = {
  name: 'ticketEmail',
  decorators: [
    ApiOperation({
      summary: 'Verify the e-mail of a ticket (HTML form post)',
      description:
        "Form fields `ticket`, `csrf`. Uses the ticket up and marks the user's e-mail verified, then 303 to the " +
        "ticket's result_url or a success page. A used, expired or unknown ticket: an error page (400); CSRF: 403.",
    }),
    ApiConsumes('application/x-www-form-urlencoded'),
    BrowserResponses(400, 403, 413, 415),
  ],
};

/** GET /account */
export const accountPage: OpenApiOperation = {
  name: 'accountPage',
  decorators: [
    ApiOperation({
      summary: 'Account page of the signed-in person (HTML)',
      description:
        "The signed-in person's own account, found by the sign-in session's cookie: profile (name, nickname, " +
        'picture URL, locale), e-mail, password change, authenticator app and recovery codes, passkeys; English or Mongolian ' +
        "by `ui_locales`, Accept-Language and the instance's supported_locales. Signed out: 302 to an authorization " +
        'request of the first-party client whose callbacks list `<issuer>/account` (`client_id` chooses among ' +
        'several), which comes back here; none: an error page (404).',
    }),
    BrowserResponses(400, 404),
  ],
};

/** GET /assets/passkeys.js */
export const passkeyScript: OpenApiOperation = {
  name: 'passkeyScript',
  decorators: [
    ApiOperation({
      summary: 'The passkey script of the sign-in and account pages (JavaScript)',
      description:
        'The only script the pages run (allowed by their CSP nonce): the WebAuthn ceremonies of the "Sign in ' +
        'with a passkey" button, the passkey on the two-step page and "Add a passkey" on the account page. It ' +
        "asks the page's own origin for the options, calls the browser's WebAuthn API and posts its answer " +
        'with the form. Everything else on the pages works without it.',
    }),
    ApiResponse({ status: 200, description: 'The script', content: { 'text/javascript': {} } }),
  ],
};

/** POST /account */
export const accountPost: OpenApiOperation = {
  name: 'accountPost',
  decorators: [
    ApiOperation({
      summary: "Change the signed-in person's account (HTML form post)",
      description:
        "Form fields `csrf` (matching the page's cookie, else 403) and `action`: `profile` (`name`, `nickname`, " +
        '`picture`, `locale`), `email` (`new_email`, `current_password` unless signed in within 5 minutes: set ' +
        'unverified, a verification link to it and a notice to the old address), `password` (`current_password`, ' +
        '`new_password`: the current one checked with the ' +
        "login's lockout, the instance's password_validators; other sessions, grants and tokens end; a notice " +
        'e-mail), `remove_app` and `regenerate_codes` (a session signed in with the app, and `current_password` ' +
        'unless signed in within 5 minutes; removal sends a notice), `enrol_start` (the same password rule) and ' +
        '`enrol_confirm` (`otp`), `end_session` (`session`), `end_all_sessions`, `revoke_app` (`client`). ' +
        'Passkeys: `passkey_options` (`current_password` unless signed in within 5 minutes, and a session signed ' +
        'in with a second factor when the person has one; answers JSON `{publicKey}`, the WebAuthn creation ' +
        "options, or `{error}`), `passkey_register` (`credential`: the browser's answer as JSON, `name`), " +
        '`rename_passkey` (`passkey`, `name`), `remove_passkey` (`passkey`; the removal rule of the app, a notice ' +
        'e-mail, an `mfa.removed` event). ' +
        'Success: 303 back to the page, or the recovery codes shown once; bad input: the page again with its ' +
        'error (400), nothing written. Signed out: 403.',
    }),
    ApiConsumes('application/x-www-form-urlencoded'),
    BrowserResponses(400, 401, 403, 413, 415),
  ],
};
