import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Sql } from '@gatehouse/db';
import { sendOAuthError } from '../oidc/oauth-errors.js';
import type { OidcClientRecord, OidcData } from '../oidc/oidc-data.js';
import { one, type Params } from '../oidc/request-body.js';
import { userMaySignInThrough } from '../oidc/sign-in-policy.js';
import { DeliveryError, type Delivery } from './delivery.js';
import { CODE_TTL_SEC, type OneTimeCodes } from './one-time-codes.js';

export const PASSWORDLESS_START_PATH = '/passwordless/start';
export const OTP_GRANT = 'otp';

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const PHONE = /^\+[1-9][\d\s\-.()]{4,24}$/;

function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  if (!header?.toLowerCase().startsWith('basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  return { id: decodeURIComponent(decoded.slice(0, i)), secret: decodeURIComponent(decoded.slice(i + 1)) };
}

const same = (a: string | null | undefined, b: string | undefined) =>
  !!a && !!b && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * POST /passwordless/start (document 2, "get code or link"): a 6-digit one-time code sent by e-mail (a username
 * with @) or SMS (an E.164 phone number), then `grant_type=otp` with `username` and `otp` at /token. The client
 * authenticates as at /token and must have `otp` in its grant_types. An unknown, blocked or other tenant's user
 * gets the same 200 and no message (no account oracle). A message that cannot be delivered is a 503 and leaves no
 * code behind.
 */
export class PasswordlessStart {
  constructor(
    private readonly deps: {
      data: OidcData;
      sql: Sql;
      codes: OneTimeCodes;
      delivery: Delivery;
    },
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, params: Params): Promise<void> {
    const basic = basicCredentials(req.headers.authorization);
    const clientId = basic?.id ?? one(params, 'client_id');
    const secret = basic?.secret ?? one(params, 'client_secret');
    const client = clientId ? await this.deps.data.findClient(clientId) : undefined;
    if (!client || (!client.isPublic && !same(client.clientSecret, secret))) {
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
    const sendType = one(params, 'options.send_type') ?? one(params, 'send_type') ?? 'code';
    if (sendType === 'link') {
      return sendOAuthError(res, 400, 'invalid_request', "send_type 'link' is not served yet; use 'code'");
    }
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
    try {
      await this.sendCode(client, username, channel, one(params, 'scope'));
    } catch (err) {
      if (!(err instanceof DeliveryError)) throw err;
      return sendOAuthError(res, 503, 'temporarily_unavailable', `${err.message}; try again later`, {
        'Retry-After': '30',
      });
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-store');
    res.end(JSON.stringify({ send_type: 'code', channel, expires_in: CODE_TTL_SEC }));
  }

  /**
   * Sends a new code to the user of `username` at `client`, when there is one who may sign in there (otherwise
   * nothing, and no sign of it). Throws DeliveryError when the message cannot be sent (no code is left then).
   */
  async sendCode(
    client: OidcClientRecord,
    username: string,
    channel: 'email' | 'sms',
    scope?: string,
  ): Promise<void> {
    const user = await this.deps.data.findUserByLogin(client.instanceId, username);
    const reachable =
      user &&
      !user.isBlocked &&
      userMaySignInThrough(user, client.tenantId) &&
      (channel === 'email' ? !!user.userEmail : !!user.phoneNumber);
    if (!user || !reachable) return;
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
        );
      } else {
        await this.deps.delivery.sms(user.phoneNumber!, `${code} is your sign-in code (${minutes} min).`);
      }
    });
  }

  /** The channel of a username: e-mail (with @) or SMS (E.164), or undefined. */
  static channelOf(username: string): 'email' | 'sms' | undefined {
    return EMAIL.test(username) ? 'email' : PHONE.test(username) ? 'sms' : undefined;
  }
}
