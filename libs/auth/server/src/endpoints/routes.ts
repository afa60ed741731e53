import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROUTES } from '../oidc/provider.js';
import { INTERACTION_PATH, PASSKEY_SCRIPT_PATH } from '../interaction/pages.js';
import { PASSWORDLESS_START_PATH, PASSWORDLESS_VERIFY_PATH } from '../passwordless/passwordless.js';
import { EMAIL_VERIFICATION_PATH, SIGNUP_PATH } from '../signup/signup.js';
import { TICKET_EMAIL_PATH, TICKET_PASSWORD_PATH } from '../tickets/tickets.js';
import type { Endpoint, EndpointContext } from './context.js';
import * as doc from './openapi.js';
import type { OpenApiOperation } from './openapi.js';
import { authorizeEndpoint } from './authorize.js';
import { introspectionEndpoint } from './introspection.js';
import { replayJwks } from './jwks.js';
import {
  accountPage,
  emailVerificationPage,
  passkeyScriptFile,
  passwordlessLinkPage,
  ticketPage,
} from './pages.js';
import { ACCOUNT_PATH } from '../account/account.js';
import { passwordlessStartEndpoint } from './passwordless-start.js';
import { deviceAuthorization, providerGet, providerPost } from './provider.js';
import { signupEndpoint } from './signup.js';
import { tokenEndpoint } from './token.js';
import { TOKENINFO_PATH, tokenInfoEndpoint } from './tokeninfo.js';
import { userinfoGet, userinfoPost } from './userinfo.js';

/**
 * The token server's route table: every path it serves, with its methods, the endpoint serving each and its
 * OpenAPI operation. Everything else is derived from it: the fast lane's claims and dispatch (endpoints/router.ts),
 * the foundation's route specs (rate-limit keys, metrics labels, 405 answers), the paths whose errors take the OAuth
 * shape and where no body parser runs (auth.service-definition.ts), and the OpenAPI document (oauth-docs.controller.ts).
 * The order is the OpenAPI document's.
 */

/** One method of an endpoint route: what serves it and its OpenAPI operation. */
export interface EndpointMethod {
  readonly serve: Endpoint;
  readonly doc: OpenApiOperation;
}

/**
 * A route of the foundation's (`kind: 'endpoint'`): served on the fast lane; each method is a route spec
 * (`'POST /token'`: rate-limit key, metrics label); another method is 405 with `Allow` (HEAD included: only the
 * methods listed are served), OPTIONS goes to oidc-provider (CORS); errors carry `error`/`error_description`;
 * no body parser runs in front of it. Its endpoint runs within a request memo unless `hot`.
 */
export interface EndpointRoute {
  readonly kind: 'endpoint';
  readonly path: string;
  /** The methods served, in the order of the `Allow` header. */
  readonly methods: Readonly<Record<string, EndpointMethod>>;
  /**
   * Served without a per-request memo: the hot paths, which read through the state cache (/token up to the point
   * where oidc-provider takes the request).
   */
  readonly hot?: boolean;
  /** OPTIONS is a 405 as any other method (no CORS preflight: not oidc-provider's endpoint). */
  readonly noPreflight?: boolean;
  /** Tried first for a GET, before the request memo: true when it answered (the JWKS replay). */
  readonly replay?: (ctx: EndpointContext, req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * A step of RP-initiated logout (`kind: 'logout'`): oidc-provider's on the fast lane, which reads its own form
 * bodies; HEAD is served as GET and OPTIONS passes, any other method not listed is 405 with `Allow`. Not among the
 * foundation's route specs (the documented GET /session/end is known to it through the OpenAPI controller).
 */
export interface LogoutRoute {
  readonly kind: 'logout';
  readonly path: string;
  readonly methods: Readonly<Record<string, { readonly doc?: OpenApiOperation }>>;
}

export type TokenServerRoute = EndpointRoute | LogoutRoute;

/**
 * Paths the fast lane claims below a prefix (any method, or `method` only), served as they are: `interaction`
 * by the login and consent pages, `provider` by oidc-provider within a request memo. A path of the route table
 * is served by its route, never as part of a subtree. `ownBodies`: no body parser may run in front of the
 * subtree's root and what is below it, even where the lane does not claim a request.
 */
export interface Subtree {
  readonly prefix: string;
  readonly method?: 'GET';
  readonly kind: 'interaction' | 'provider';
  readonly ownBodies: boolean;
}

const post = (serve: Endpoint, op: OpenApiOperation) => ({ POST: { serve, doc: op } });
const get = (serve: Endpoint, op: OpenApiOperation) => ({ GET: { serve, doc: op } });

export const ROUTE_TABLE: readonly TokenServerRoute[] = [
  { kind: 'endpoint', path: ROUTES.token, methods: post(tokenEndpoint, doc.token), hot: true },
  {
    kind: 'endpoint',
    path: TOKENINFO_PATH,
    methods: post(tokenInfoEndpoint, doc.tokeninfo),
    hot: true,
    noPreflight: true,
  },
  { kind: 'endpoint', path: ROUTES.introspection, methods: post(introspectionEndpoint, doc.introspection) },
  { kind: 'endpoint', path: ROUTES.revocation, methods: post(providerPost, doc.revoke) },
  {
    kind: 'endpoint',
    path: ROUTES.userinfo,
    methods: { ...get(userinfoGet, doc.userinfo), ...post(userinfoPost, doc.userinfoPost) },
  },
  { kind: 'endpoint', path: ROUTES.jwks, methods: get(providerGet, doc.jwks), replay: replayJwks },
  { kind: 'endpoint', path: '/.well-known/openid-configuration', methods: get(providerGet, doc.discovery) },
  {
    kind: 'endpoint',
    path: '/.well-known/oauth-authorization-server',
    methods: get(providerGet, doc.oauthMetadata),
  },
  // GET only: oidc-provider serves a POSTed authorization request only with SameSite=None session cookies
  // (`enableHttpPostMethods`), which would give up the cookies' CSRF protection; POST is 405 with `Allow: GET`.
  { kind: 'endpoint', path: ROUTES.authorization, methods: get(authorizeEndpoint, doc.authorize) },
  { kind: 'endpoint', path: ROUTES.device_authorization, methods: post(deviceAuthorization, doc.deviceCode) },
  // GET only, as /authorize: oidc-provider serves a POSTed logout request only with SameSite=None cookies.
  { kind: 'logout', path: ROUTES.end_session, methods: { GET: { doc: doc.endSession } } },
  {
    kind: 'endpoint',
    path: ROUTES.code_verification,
    methods: { ...get(providerGet, doc.device), ...post(providerPost, doc.devicePost) },
  },
  {
    kind: 'endpoint',
    path: PASSWORDLESS_START_PATH,
    methods: post(passwordlessStartEndpoint, doc.passwordlessStart),
  },
  {
    kind: 'endpoint',
    path: PASSWORDLESS_VERIFY_PATH,
    methods: {
      ...get(passwordlessLinkPage, doc.passwordlessVerify),
      ...post(passwordlessLinkPage, doc.passwordlessVerifyPost),
    },
  },
  { kind: 'endpoint', path: SIGNUP_PATH, methods: post(signupEndpoint, doc.signup) },
  {
    kind: 'endpoint',
    path: EMAIL_VERIFICATION_PATH,
    methods: get(emailVerificationPage, doc.emailVerification),
  },
  {
    kind: 'endpoint',
    path: TICKET_PASSWORD_PATH,
    methods: { ...get(ticketPage, doc.ticketPasswordPage), ...post(ticketPage, doc.ticketPassword) },
  },
  {
    kind: 'endpoint',
    path: TICKET_EMAIL_PATH,
    methods: { ...get(ticketPage, doc.ticketEmailPage), ...post(ticketPage, doc.ticketEmail) },
  },
  {
    kind: 'endpoint',
    path: ACCOUNT_PATH,
    methods: { ...get(accountPage, doc.accountPage), ...post(accountPage, doc.accountPost) },
    noPreflight: true,
  },
  {
    kind: 'endpoint',
    path: PASSKEY_SCRIPT_PATH,
    methods: get(passkeyScriptFile, doc.passkeyScript),
    noPreflight: true,
  },
  { kind: 'logout', path: `${ROUTES.end_session}/confirm`, methods: { POST: {} } },
  { kind: 'logout', path: `${ROUTES.end_session}/success`, methods: { GET: {} } },
];

export const SUBTREES: readonly Subtree[] = [
  { prefix: `${INTERACTION_PATH}/`, kind: 'interaction', ownBodies: true },
  // the authorization endpoint resumes there after an interaction (`/authorize/<uid>`)
  { prefix: `${ROUTES.authorization}/`, method: 'GET', kind: 'provider', ownBodies: false },
  { prefix: `${ROUTES.end_session}/`, kind: 'provider', ownBodies: true },
  { prefix: `${ROUTES.code_verification}/`, kind: 'provider', ownBodies: true },
];

const endpointRoutes = ROUTE_TABLE.filter((r): r is EndpointRoute => r.kind === 'endpoint');
const methodsByPath = (routes: readonly TokenServerRoute[]) =>
  Object.fromEntries(routes.map((r) => [r.path, Object.keys(r.methods)]));

/** The endpoint routes' paths and methods. */
export const TOKEN_SERVER_ROUTES: Readonly<Record<string, readonly string[]>> = methodsByPath(endpointRoutes);

/** The RP-initiated logout paths oidc-provider serves, with their methods. */
export const LOGOUT_ROUTES: Readonly<Record<string, readonly string[]>> = methodsByPath(
  ROUTE_TABLE.filter((r) => r.kind === 'logout'),
);

/** The foundation's route specs of the endpoint routes (`'POST /token'`): rate-limit keys, metrics labels, 405. */
export const ROUTE_SPECS: readonly string[] = endpointRoutes.flatMap((r) =>
  Object.keys(r.methods).map((m) => `${m} ${r.path}`),
);

/** Paths whose errors the foundation answers in the OAuth shape too. */
export const OAUTH_ERROR_PATHS: readonly string[] = endpointRoutes.map((r) => r.path);

/** Path prefixes where no body parser may run: the endpoints and the subtrees that read their own bodies. */
export const BODY_PARSER_EXCLUDED_PATHS: readonly string[] = [
  ...OAUTH_ERROR_PATHS,
  ...SUBTREES.filter((s) => s.ownBodies).map((s) => s.prefix.slice(0, -1)),
];
