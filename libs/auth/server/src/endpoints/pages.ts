import { randomBytes } from 'node:crypto';
import { continueUrlOf, messagePage, pageHeaders, pickLocale } from '../interaction/pages.js';
import type { Endpoint } from './context.js';
import { servePasskeyScript } from '../mfa/passkey-script.js';

/**
 * The HTML pages outside oidc-provider's own: they read their own query and form bodies (TicketPages,
 * PasswordlessStart.linkPage, InteractionHandler).
 */

/** GET /email-verification?token=...: the link of the sign-up e-mail, answered with a page. */
export const emailVerificationPage: Endpoint = async (ctx, req, res) => {
  const token = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('token') ?? '';
  const verified = await ctx.signup.verify(token);
  const client = verified ? await ctx.data.findClient(verified.clientId) : undefined;
  const nonce = randomBytes(16).toString('base64');
  pageHeaders(res, nonce);
  res.statusCode = verified ? 200 : 400;
  res.end(
    messagePage({
      locale: pickLocale(undefined, req.headers['accept-language']),
      nonce,
      message: verified ? 'verified' : 'verifyFailed',
      continueHref: client ? continueUrlOf(client.clientMetadata) : undefined,
    }),
  );
};

/** GET and POST /passwordless/verify: the page of a sign-in link, and its confirmation. */
export const passwordlessLinkPage: Endpoint = async (ctx, req, res) => ctx.passwordless.linkPage(req, res);

/** GET and POST of the ticket pages (password change or invitation, e-mail verification). */
export const ticketPage: Endpoint = async (ctx, req, res, path) => ctx.tickets.handle(req, res, path);

/** GET and POST /account: the signed-in person's own account (profile, password, authenticators). */
export const accountPage: Endpoint = async (ctx, req, res) => ctx.account.handle(req, res);

/** GET /assets/passkeys.js: the pages' one script (the WebAuthn ceremonies). */
export const passkeyScriptFile: Endpoint = async (_ctx, req, res) => servePasskeyScript(req, res);

/** `/interaction/<uid>/...`: the login and consent pages of the authorization endpoint, any method. */
export const interactionPage: Endpoint = async (ctx, req, res, path) =>
  ctx.interactions.handle(req, res, path);
