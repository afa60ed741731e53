import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { OidcData } from '../oidc/oidc-data.js';
import type { FastClientCredentials } from '../oidc/client-credentials.fast.js';
import type { ApiUserinfo } from '../oidc/api-userinfo.js';
import type { TokenInfoService } from '../tokeninfo/tokeninfo.service.js';
import type { TokenInfoAnswers } from '../tokeninfo/tokeninfo.handler.js';
import type { InteractionHandler } from '../interaction/interaction.handler.js';
import type { PasswordlessStart } from '../passwordless/passwordless.js';
import type { LinkPkceWaiver } from '../passwordless/link-pkce.js';
import type { Signup } from '../signup/signup.js';
import type { TicketPages } from '../tickets/tickets.js';
import type { AccountPages } from '../account/account.js';
import type { KeySet } from '../keys/signing-keys.js';
import type { DevicePollThrottle } from './device-throttle.js';
import type { JwksReplay } from './jwks-replay.js';

/** A node request handler (oidc-provider's `callback()`). */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** oidc-provider as currently built: it is built again whenever the published signing keys change. */
export interface CurrentProvider {
  /** oidc-provider's request handler for the current key set. */
  readonly callback: Handler;
  /** The current key set (the identity of the object changes with the keys). */
  readonly keys: KeySet;
}

/** What the endpoints serve with: the services the composition root built, and oidc-provider. */
export interface EndpointContext {
  readonly issuer: string;
  readonly log: Logger;
  readonly data: OidcData;
  readonly oidc: CurrentProvider;
  readonly tokenInfo: TokenInfoService;
  /** /tokeninfo answers about active tokens, reused while nothing they depend on changed. */
  readonly tokenInfoAnswers: TokenInfoAnswers;
  /** Plain client_credentials requests, answered without oidc-provider's pipeline (same answer). */
  readonly fastClientCredentials: FastClientCredentials;
  /** /userinfo for access tokens issued for an API (oidc-provider answers for the others). */
  readonly apiUserinfo: ApiUserinfo;
  /** The PKCE waiver of sign-in links asked for without a code_challenge (checked at /authorize). */
  readonly linkPkce: LinkPkceWaiver;
  readonly passwordless: PasswordlessStart;
  readonly signup: Signup;
  /** The pages of tickets (password change, invitation, e-mail verification) made by the management API. */
  readonly tickets: TicketPages;
  /** The signed-in person's own account pages (`/account`). */
  readonly account: AccountPages;
  /** The login and consent pages of the authorization endpoint. */
  readonly interactions: InteractionHandler;
  readonly deviceThrottle: DevicePollThrottle;
  readonly jwks: JwksReplay;
}

/**
 * Serves one allowed method of a route (the router answered OPTIONS and other methods). Always an async function:
 * whatever it throws becomes a rejection, answered by the router as a 500 or 503.
 */
export type Endpoint = (
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) => Promise<void>;
