import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '@gatehouse/http';

const NOT_HERE = 'served by the token server middleware mounted before Nest routes';
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

/**
 * OpenAPI description of the token server's endpoints. The requests never reach these methods: the raw handlers
 * (oidc-provider and /tokeninfo) mounted in front of Nest answer them; this controller only documents them and
 * lets the route table know their methods.
 */
@ApiTags('OAuth 2.0 / OpenID Connect')
@Public()
@Controller()
export class OAuthDocsController {
  @Post('token')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Get a token',
    description: `Grants: \`client_credentials\` (needs \`audience\`), \`password\` (username = e-mail, user name or phone),
\`refresh_token\` (rotating; a reused refresh token revokes its grant), \`authorization_code\` (PKCE S256 required;
after /authorize), \`urn:ietf:params:oauth:grant-type:device_code\` (alias \`device_code\`; after POST /device/code,
with authorization_pending, slow_down, access_denied, expired_token). Other grant types (\`implicit\` is a response
type of /authorize, \`otp\`, \`token_exchange\` for now) answer 400 \`unsupported_grant_type\`. \`audience\` is an alias of RFC 8707
\`resource\` (one per request); without \`scope\` the token carries every scope the client was granted on that API,
with \`scope\` the intersection. Client authentication: Basic, or client_id/client_secret in the body, or client_id
alone for public clients. Password logins: unknown user and wrong password give the same \`invalid_grant\`;
AUTH_LOCKOUT_THRESHOLD consecutive failures lock the account for AUTH_LOCKOUT_SECONDS; a blocked user is refused.
Access tokens for a resource are JWTs signed with its signing_algorithm (HS256 with its secret, RS256/ES256 with
the server keys at /jwks) or opaque for any other value; tokens without an audience are opaque and only good at
/userinfo. \`fields\` (comma-separated) keeps only those attributes of the answer.`,
  })
  @ApiConsumes(...BOTH)
  @ApiBody({
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
      },
    },
  })
  @ApiResponse({
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
      },
    },
  })
  @ApiResponse({
    status: 400,
    description:
      'OAuth error (invalid_request, invalid_grant, unsupported_grant_type, invalid_target, access_denied, invalid_scope)',
    schema: oauthError,
  })
  @ApiResponse({ status: 401, description: 'invalid_client', schema: oauthError })
  token(): never {
    throw new Error(NOT_HERE);
  }

  @Post('tokeninfo')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Token info (introspection, document 1 shape)',
    description: `For opaque and JWT access tokens and refresh tokens this server issued. The caller authenticates
with \`Authorization: Bearer <active access token>\` (the token itself counts; a refresh token is no credential) or
Basic client credentials. \`token\` is read from the body only (in the query string: 400). A caller sees its own
client's tokens and the tokens for a resource it is authorized on; any other token is \`{"active": false}\`. Dates are
ISO 8601 strings. A JWT is active only with our \`iss\`, one audience, \`exp\`, a lifetime within its resource's, its
resource's algorithm and its client still authorized there; \`scope\` is what the client (and, for a user token of an
RBAC resource, the user) still holds. Inactive once expired, revoked (its grant), its client deleted or its user
blocked or given a new password: \`{"active": false}\`. \`fields\` picks attributes.`,
  })
  @ApiConsumes(...BOTH)
  @ApiBody({
    schema: {
      type: 'object',
      required: ['token'],
      properties: {
        token: str('the token to describe'),
        token_type_hint: str('access_token | refresh_token | id_token'),
        fields: str('comma-separated attributes to return'),
      },
    },
  })
  @ApiResponse({
    status: 200,
    description: 'Introspection response',
    schema: {
      type: 'object',
      properties: {
        active: { type: 'boolean' },
        token_type: { type: 'string', example: 'Bearer' },
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
      },
    },
  })
  @ApiResponse({ status: 401, description: 'invalid_client / invalid_token', schema: oauthError })
  tokeninfo(): never {
    throw new Error(NOT_HERE);
  }

  @Post('token/introspection')
  @HttpCode(200)
  @ApiOperation({
    summary: 'RFC 7662 token introspection',
    description:
      'Client-authenticated (Basic or client_secret_post; a public client by client_id, its own tokens only). The ' +
      'same checks as /tokeninfo, for opaque and JWT access tokens and refresh tokens, answered in RFC 7662 form ' +
      '(NumericDate times). Another client\'s token is {"active": false} unless the caller is authorized on its audience.',
  })
  @ApiConsumes(...BOTH)
  introspection(): never {
    throw new Error(NOT_HERE);
  }

  @Post('revoke')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke a token (RFC 7009)',
    description:
      "Body `client_id`, `token` (+ secret). Revoking a refresh token revokes its grant and the grant's access tokens. 200 with an empty body, also for an unknown token.",
  })
  @ApiConsumes(...BOTH)
  revoke(): never {
    throw new Error(NOT_HERE);
  }

  @Get('userinfo')
  @ApiOperation({
    summary: 'OpenID Connect userinfo',
    description:
      'Bearer access token with `openid` and no audience (password grant without audience). Claims by scope: profile, email, address, phone. POST works too. `fields` (query or body) keeps only those claims.',
  })
  userinfo(): never {
    throw new Error(NOT_HERE);
  }

  @Get('jwks')
  @ApiOperation({ summary: 'Public signing keys (JWKS); a rotated key stays here until its tokens expired' })
  jwks(): never {
    throw new Error(NOT_HERE);
  }

  @Get('.well-known/openid-configuration')
  @ApiOperation({ summary: 'OpenID Connect discovery (also lists tokeninfo_endpoint)' })
  discovery(): never {
    throw new Error(NOT_HERE);
  }

  @Get('tickets/password-change')
  @ApiOperation({
    summary: 'Password change ticket page (HTML)',
    description:
      'The link of a password-change ticket or an invitation (made by the management API: `?ticket=...`, ' +
      '`ui_locales` optional): a form with field `password` and a submit button; English or Mongolian by ' +
      '`ui_locales` or Accept-Language. A used, expired or unknown ticket: an error page (400).',
  })
  ticketPasswordPage(): never {
    throw new Error(NOT_HERE);
  }

  @Post('tickets/password-change')
  @ApiOperation({
    summary: 'Set the password of a ticket (HTML form post)',
    description:
      "Form fields `ticket`, `csrf` (matching the page's cookie, else 403), `password` (checked against the " +
      "instance's password_validators: the form again, 400, the ticket still usable). Success uses the ticket up " +
      "(single use), sets the password (argon2id), clears a login lock, revokes the user's grants and tokens, ends " +
      'its other open password-change tickets, marks the e-mail verified for an invitation; then 303 to the ' +
      "ticket's result_url or a success page. A used, expired or unknown ticket: an error page (400).",
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  ticketPassword(): never {
    throw new Error(NOT_HERE);
  }

  @Get('tickets/email-verification')
  @ApiOperation({
    summary: 'E-mail verification ticket page (HTML)',
    description:
      'The link of an e-mail verification ticket (`?ticket=...`): a page asking to confirm with a button (a ' +
      'mail scanner fetching the link does not use it up). A used, expired or unknown ticket: an error page (400).',
  })
  ticketEmailPage(): never {
    throw new Error(NOT_HERE);
  }

  @Post('tickets/email-verification')
  @ApiOperation({
    summary: 'Verify the e-mail of a ticket (HTML form post)',
    description:
      "Form fields `ticket`, `csrf`. Uses the ticket up and marks the user's e-mail verified, then 303 to the " +
      "ticket's result_url or a success page. A used, expired or unknown ticket: an error page (400); CSRF: 403.",
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  ticketEmail(): never {
    throw new Error(NOT_HERE);
  }
}
