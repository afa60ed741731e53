import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Sql } from '@gatehouse/db';
import { sendOAuthError } from '../oidc/oauth-errors.js';
import type { OidcClientRecord, OidcData } from '../oidc/oidc-data.js';
import { BodyError, one, parseParams, readBody, type Params } from '../oidc/request-body.js';
import { userMaySignInThrough } from '../oidc/sign-in-policy.js';
import type { Delivery } from '@gatehouse/delivery';
import { basicElseBodyCredentials, PASSWORDLESS_BASIC, secretAuthenticates } from '../client-auth/index.js';
import { cookieValue, sameSecret } from '../interaction/cookies.js';
import { originOf, pageHeaders, pickLocale, type Locale } from '../interaction/pages.js';
import { CODE_TTL_SEC, type OneTimeCodes } from './one-time-codes.js';
import { linkConfirmPage, linkMessagePage, maskEmail } from './link-pages.js';
import { LINK_PKCE_PARAM, type LinkPkceWaiver } from './link-pkce.js';
import { sourceOf, type AuthEvents, type EventSource } from '../events/auth-events.js';

export const PASSWORDLESS_START_PATH = '/passwordless/start';
export const PASSWORDLESS_VERIFY_PATH = '/passwordless/verify';
export const LINK_LOGIN_COOKIE = 'gh.pl';
/** The CSRF cookie of the link's confirmation page (double submit, SameSite=Strict). */
const LINK_CSRF_COOKIE = 'gh.pl.csrf';
const SIGNIN_LINK = 'signin-link';
const LINK_LOGIN = 'link-login';
export const OTP_GRANT = 'otp';

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const PHONE = /^\+[1-9][\d\s\-.()]{4,24}$/;

/**
 * Document 2's `options` (send_type, redirect_url, response_type, scope), each also accepted at the top level (the
 * form before document 2's shape was read, kept as an alias; `redirect_uri` is OAuth's name of redirect_url).
 */
const OPTIONS = {
  send_type: ['send_type'],
  redirect_url: ['redirect_url', 'redirect_uri'],
  response_type: ['response_type'],
  scope: ['scope'],
} as const;
type OptionName = keyof typeof OPTIONS;

/**
 * The value of option `name`: `options.<name>` (a JSON `options` object, or a form's `options.<name>` or
 * `options[<name>]`), else its top-level alias. Given at both places with different values it is an error message
 * naming the field.
 */
function option(params: Params, name: OptionName): { value?: string; error?: string } {
  const inOptions = one(params, `options.${name}`) ?? one(params, `options[${name}]`);
  const aliases = OPTIONS[name].filter((a) => one(params, a) !== undefined);
  const top = aliases.length ? one(params, aliases[0]) : undefined;
  if (inOptions !== undefined && top !== undefined && inOptions !== top) {
    return {
      error: `options.${name} and ${aliases[0]} disagree: give ${name} once (in options) or the same value at both places`,
    };
  }
  return { value: inOptions ?? top };
}

/**
 * `response_type` of document 2's request: its sample value `authorization_code` and OAuth's `code` both ask for an
 * authorization code at redirect_url (a link), or leave the one-time code flow as it is (a code, redeemed with
 * grant_type=otp). Anything else is refused.
 */
const CODE_RESPONSE_TYPES: ReadonlySet<string> = new Set(['authorization_code', 'code']);

/**
 * POST /passwordless/start (document 2, "get code or link"; its `options` object: send_type, redirect_url,
 * response_type, scope, each also read at the top level): a 6-digit one-time code sent by e-mail (a username
 * with @) or SMS (an E.164 phone number), then `grant_type=otp` with `username` and `otp` at /token. The client
 * authenticates as at /token and must have `otp` in its grant_types. An unknown, blocked or other tenant's user
 * gets the same 200 and no message (no account oracle). The message is queued in the code's transaction and sent
 * by the delivery outbox after the answer (retried while the mail server or SMS gateway is down). At most one message a minute and 5 an hour go to one account and to one address
 * (OneTimeCodes.mayBeSent); a request over the limit gets the same 200 and sends nothing.
 */
export class PasswordlessStart {
  constructor(
    private readonly deps: {
      data: OidcData;
      sql: Sql;
      codes: OneTimeCodes;
      delivery: Delivery;
      issuer: string;
      /** Signs the PKCE waiver of links asked for without a code_challenge. */
      pkceWaiver: LinkPkceWaiver;
      events?: AuthEvents;
    },
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> {
    const { id: clientId, secret } = basicElseBodyCredentials(
      req.headers.authorization,
      params,
      PASSWORDLESS_BASIC,
    );
    const client = clientId ? await this.deps.data.findClient(clientId) : undefined;
    if (!client || !(client.isPublic || secretAuthenticates(client, secret))) {
      return sendOAuthError(res, 401, 'invalid_client', 'client authentication failed');
    }
    if (!client.grantTypes.includes(OTP_GRANT)) {
      return sendOAuthError(
        res,
        400,
        'unauthorized_client',
        "the client may not use passwordless sign-in: its grant_types lack 'otp'",
      );
    }
    const username = (one(params, 'username') ?? '').trim();
    if (!username)
      return sendOAuthError(res, 400, 'invalid_request', "missing required parameter 'username'");
    const opts = {} as Record<OptionName, string | undefined>;
    for (const name of Object.keys(OPTIONS) as OptionName[]) {
      const { value, error } = option(params, name);
      if (error) return sendOAuthError(res, 400, 'invalid_request', error);
      opts[name] = value;
    }
    if (opts.response_type !== undefined && !CODE_RESPONSE_TYPES.has(opts.response_type)) {
      return sendOAuthError(
        res,
        400,
        'unsupported_response_type',
        "options.response_type must be 'authorization_code' (or 'code')",
      );
    }
    // where the link's authorization code goes; a code needs none, but one that is given must be a callback too
    if (
      opts.redirect_url !== undefined &&
      !PasswordlessStart.callbacksOf(client).includes(opts.redirect_url)
    ) {
      return sendOAuthError(
        res,
        400,
        'invalid_request',
        "options.redirect_url must be one of the client's callback URLs",
      );
    }
    const sendType = opts.send_type ?? 'code';
    if (sendType === 'link') return this.startLink(res, client, username, params, opts);
    if (sendType !== 'code') {
      return sendOAuthError(res, 400, 'invalid_request', "options.send_type must be 'code' or 'link'");
    }
    const channel = PasswordlessStart.channelOf(username);
    if (!channel) {
      return sendOAuthError(
        res,
        400,
        'invalid_request',
        'username must be an e-mail address or an E.164 phone number (+ and digits)',
      );
    }
    await this.sendCode(client, username, channel, opts.scope, sourceOf(req));
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-store');
    res.end(JSON.stringify({ send_type: 'code', channel, expires_in: CODE_TTL_SEC }));
  }

  /** The client's registered callback URLs (client_metadata.urls.callbacks). */
  static callbacksOf(client: OidcClientRecord): unknown[] {
    const callbacks = (client.clientMetadata.urls as { callbacks?: unknown } | undefined)?.callbacks;
    return Array.isArray(callbacks) ? callbacks : [];
  }

  /**
   * Sends a new code to the user of `username` at `client`, when there is one who may sign in there (otherwise
   * nothing, and no sign of it). The message is queued in the transaction that stores the code.
   */
  async sendCode(
    client: OidcClientRecord,
    username: string,
    channel: 'email' | 'sms',
    scope?: string,
    source?: EventSource,
  ): Promise<void> {
    const user = await this.deps.data.findUserByLogin(client.instanceId, username);
    const reachable =
      user &&
      !user.isBlocked &&
      userMaySignInThrough(user, client) &&
      (channel === 'email' ? !!user.userEmail : !!user.phoneNumber);
    if (!user || !reachable) return;
    const destination = channel === 'email' ? user.userEmail! : user.phoneNumber!;
    if (!(await this.deps.codes.mayBeSent({ userId: user.id, channel, destination }))) return;
    await this.deps.sql.transaction(async (tx) => {
      const code = await this.deps.codes.issue(tx, {
        instanceId: client.instanceId,
        userId: user.id,
        clientId: client.id,
        channel,
        scope,
      });
      const minutes = Math.round(CODE_TTL_SEC / 60);
      if (channel === 'email') {
        await this.deps.delivery.email(
          user.userEmail!,
          `Your sign-in code for ${client.clientName}`,
          `Your sign-in code is ${code}. It works once, for ${minutes} minutes. If you did not ask for it, ignore this message.`,
          { tx, kind: 'otp' },
        );
      } else {
        await this.deps.delivery.sms(user.phoneNumber!, `${code} is your sign-in code (${minutes} min).`, {
          tx,
          kind: 'otp',
        });
      }
    });
    this.deps.events?.record({
      type: 'otp.issued',
      instanceId: client.instanceId,
      tenantId: user.tenantId,
      actor: { type: 'anonymous', viaClientId: client.id },
      userId: user.id,
      clientId: client.id,
      ip: source?.ip ?? null,
      userAgent: source?.userAgent ?? null,
      details: { channel },
    });
  }

  /**
   * send_type=link: an e-mail with a link that signs the user in through /authorize and ends at `redirect_url` (one
   * of the client's callbacks) with an authorization code and `state`, which the client redeems at /token. PKCE
   * (`code_challenge`, S256) when the client sends it; a public client must, a confidential one may leave it out
   * (document 2's request has none): it redeems the code with its secret (LinkPkceWaiver).
   */
  private async startLink(
    res: ServerResponse,
    client: OidcClientRecord,
    username: string,
    params: Params,
    opts: Record<OptionName, string | undefined>,
  ) {
    if (PasswordlessStart.channelOf(username) !== 'email') {
      return sendOAuthError(
        res,
        400,
        'invalid_request',
        'a link goes by e-mail: username must be an e-mail address',
      );
    }
    const redirect = opts.redirect_url;
    if (!redirect) {
      return sendOAuthError(
        res,
        400,
        'invalid_request',
        "a link needs options.redirect_url, one of the client's callback URLs",
      );
    }
    const challenge = one(params, 'code_challenge');
    const method = one(params, 'code_challenge_method') ?? 'S256';
    if (challenge && method !== 'S256') {
      return sendOAuthError(res, 400, 'invalid_request', 'code_challenge_method must be S256');
    }
    if (!challenge && client.isPublic) {
      return sendOAuthError(
        res,
        400,
        'invalid_request',
        'a link for a public client needs PKCE: code_challenge with code_challenge_method S256',
      );
    }
    const request: Record<string, string> = {
      redirect_uri: redirect,
      response_type: 'code',
      scope: opts.scope ?? 'openid',
      ...(challenge ? { code_challenge: challenge, code_challenge_method: 'S256' } : {}),
    };
    for (const k of ['state', 'nonce', 'resource', 'audience'] as const) {
      const v = one(params, k);
      if (v) request[k === 'audience' ? 'resource' : k] = v;
    }
    const user = await this.deps.data.findUserByLogin(client.instanceId, username);
    if (
      user &&
      !user.isBlocked &&
      userMaySignInThrough(user, client) &&
      user.userEmail &&
      (await this.deps.codes.mayBeSent({ userId: user.id, channel: 'email', destination: user.userEmail }))
    ) {
      await this.deps.sql.transaction(async (tx) => {
        const token = await this.deps.codes.issueLink(tx, {
          instanceId: client.instanceId,
          userId: user.id,
          clientId: client.id,
          purpose: SIGNIN_LINK,
          ttlSec: CODE_TTL_SEC,
          params: request,
        });
        await this.deps.delivery.email(
          user.userEmail!,
          `Your sign-in link for ${client.clientName}`,
          `Open this link to sign in (it works once, for ${Math.round(CODE_TTL_SEC / 60)} minutes):\n` +
            `${this.deps.issuer}${PASSWORDLESS_VERIFY_PATH}?token=${token}`,
          { tx, kind: 'signin-link' },
        );
      });
      this.deps.events?.record({
        type: 'otp.issued',
        instanceId: client.instanceId,
        tenantId: user.tenantId,
        actor: { type: 'anonymous', viaClientId: client.id },
        userId: user.id,
        clientId: client.id,
        details: { channel: 'email', send_type: 'link' },
      });
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-store');
    res.end(JSON.stringify({ send_type: 'link', channel: 'email', expires_in: CODE_TTL_SEC }));
  }

  /**
   * /passwordless/verify, the link of the e-mail. GET shows a page asking the person to continue as the link's
   * account (its address masked) and uses nothing up: opening the link (a mail scanner, a link someone else
   * planted) signs nobody in. Its button POSTs the link's token with a CSRF token matched against a SameSite=Strict
   * cookie (double submit, as the ticket pages): only that POST uses the link up and continues its authorization
   * request at /authorize, with a two-minute, single-use ticket in a cookie that the login interaction of that
   * request accepts for the user. An unknown, used or expired link: 400 page; a POST whose CSRF token does not
   * match: 403 page.
   */
  async linkPage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    const acceptLanguage = req.headers['accept-language'];
    const asked = query.get('ui_locales') ?? undefined;
    if (req.method !== 'POST') {
      const token = query.get('token') ?? '';
      const link = await this.deps.codes.findLink(token, SIGNIN_LINK);
      const [user, client] = link
        ? await Promise.all([
            this.deps.data.findUserById(link.user_id),
            this.deps.data.findClient(link.client_id),
          ])
        : [undefined, undefined];
      if (!link || !user?.userEmail || !client) {
        return this.linkMessage(res, pickLocale(asked, acceptLanguage), 400, 'invalid');
      }
      const locale = pickLocale(
        asked,
        acceptLanguage,
        await this.deps.data.supportedLocalesOfClient(client.id),
      );
      const csrf = cookieValue(req, LINK_CSRF_COOKIE) ?? randomBytes(24).toString('base64url');
      res.setHeader('Set-Cookie', this.csrfCookie(csrf));
      const nonce = randomBytes(16).toString('base64');
      // the form's answer redirects on to the client's callback when no consent is asked: form-action allows it
      pageHeaders(res, nonce, originOf(link.params?.redirect_uri ?? ''));
      res.statusCode = 200;
      res.end(
        linkConfirmPage({
          locale,
          nonce,
          // the answer speaks the language of the page
          action: `${PASSWORDLESS_VERIFY_PATH}?ui_locales=${locale}`,
          csrf,
          token,
          who: maskEmail(user.userEmail),
          clientName: client.clientName,
        }),
      );
      return;
    }
    const locale = pickLocale(asked, acceptLanguage);
    let params: Params;
    try {
      params = parseParams(req, await readBody(req));
    } catch (err) {
      if (err instanceof BodyError) return this.linkMessage(res, locale, err.status, 'invalid');
      throw err;
    }
    if (!sameSecret(cookieValue(req, LINK_CSRF_COOKIE), one(params, 'csrf'))) {
      return this.linkMessage(res, locale, 403, 'csrf');
    }
    const next = await this.useLink(one(params, 'token') ?? '');
    if (!next) return this.linkMessage(res, locale, 400, 'invalid');
    res.statusCode = 303;
    res.setHeader('Set-Cookie', [next.cookie, this.csrfCookie('', 0)]);
    res.setHeader('Location', next.location);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.end();
  }

  private csrfCookie(csrf: string, maxAge = CODE_TTL_SEC): string {
    return `${LINK_CSRF_COOKIE}=${csrf}; Path=${PASSWORDLESS_VERIFY_PATH}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
  }

  private linkMessage(
    res: ServerResponse,
    locale: Locale,
    status: number,
    message: 'invalid' | 'csrf',
  ): void {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = status;
    res.end(linkMessagePage({ locale, nonce, message }));
  }

  /**
   * Uses up the link and gives where its authorization request continues, with the link-login ticket's cookie;
   * undefined for an unknown, used or expired link.
   */
  private async useLink(token: string): Promise<{ location: string; cookie: string } | undefined> {
    const link = await this.deps.codes.redeem(token, SIGNIN_LINK);
    if (!link?.params) return undefined;
    const client = await this.deps.data.findClient(link.client_id);
    if (!client) return undefined;
    const ticket = await this.deps.sql.transaction((tx) =>
      this.deps.codes.issueLink(tx, {
        instanceId: client.instanceId,
        userId: link.user_id,
        clientId: client.id,
        purpose: LINK_LOGIN,
        ttlSec: 120,
      }),
    );
    const url = new URL(`${this.deps.issuer}/authorize`);
    url.searchParams.set('client_id', client.id);
    for (const [k, v] of Object.entries(link.params)) url.searchParams.set(k, v);
    if (!link.params.code_challenge) {
      const waiver = this.deps.pkceWaiver.sign(client.id, link.params.redirect_uri ?? '', link.params.state);
      url.searchParams.set(LINK_PKCE_PARAM, waiver);
    }
    return {
      location: url.toString(),
      cookie: `${LINK_LOGIN_COOKIE}=${ticket}; Path=/interaction; HttpOnly; SameSite=Lax; Max-Age=120`,
    };
  }

  /** The user a link-login ticket (cookie) is for, at this client; the ticket is used up. */
  async linkLogin(ticket: string | undefined, clientId: string): Promise<string | undefined> {
    if (!ticket) return undefined;
    const r = await this.deps.codes.redeem(ticket, LINK_LOGIN);
    return r && r.client_id === clientId ? r.user_id : undefined;
  }

  /** The channel of a username: e-mail (with @) or SMS (E.164), or undefined. */
  static channelOf(username: string): 'email' | 'sms' | undefined {
    return EMAIL.test(username) ? 'email' : PHONE.test(username) ? 'sms' : undefined;
  }
}
