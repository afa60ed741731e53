import type { IncomingMessage, ServerResponse } from 'node:http';
import { findPgError, type Sql } from '@gatehouse/db';
import { clientAddress } from '@gatehouse/http';
import {
  checkPasswordPolicy,
  hashPassword,
  normalizePhone,
  type InstanceSettings,
} from '@gatehouse/identity-data';
import { sendOAuthError } from '../oidc/oauth-errors.js';
import type { OidcClientRecord, OidcData } from '../oidc/oidc-data.js';
import { one, type Params } from '../oidc/request-body.js';
import { displayName, escapeHtml, type Delivery } from '@gatehouse/delivery';
import type { OneTimeCodes } from '../passwordless/one-time-codes.js';
import type { SignupLimits } from './signup-limits.js';
import { sourceOf, type AuthEvents, type EventSource } from '../events/auth-events.js';

export const SIGNUP_PATH = '/signup';
export const EMAIL_VERIFICATION_PATH = '/email-verification';
const VERIFY_PURPOSE = 'email-verification';
const VERIFY_TTL_SEC = 86_400;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** A client lets people sign up when its client_metadata.oauth.allow_signup is true (off by default). */
export const allowsSignup = (c: OidcClientRecord) =>
  ((c.clientMetadata as { oauth?: { allow_signup?: unknown } }).oauth?.allow_signup ?? false) === true;

/** What is wrong with a sign-up, for the page to say in the person's language (the API keeps `message`). */
export interface SignupProblemOf {
  field?: 'email' | 'phone' | 'password';
  problem: 'none' | 'email' | 'phone' | 'password' | 'passwordMissing' | 'tooMany';
}

export class SignupError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    /** Seconds a client should wait (429). */
    readonly retryAfterSec?: number,
    /** The field and the kind of problem (none for a refusal the page shows as an error page). */
    readonly problem?: SignupProblemOf,
  ) {
    super(message);
  }
}

/**
 * The message to the owner of an address someone tried to sign up with again: the sign-up page answers as for a new
 * account (no account oracle), and the owner learns of the attempt and how to get in.
 */
function existingAccountMail(clientName: string) {
  const app = displayName(clientName) || 'Gatehouse';
  const text =
    `Someone, perhaps you, tried to create an account for ${app} with this e-mail address. ` +
    `You already have an account: sign in with it, or choose "Forgot password?" on the sign-in page to set a new ` +
    `password. If it was not you, you can ignore this message: nothing has changed.`;
  return {
    subject: `Your account for ${app}`,
    text,
    html: `<p>${escapeHtml(text)}</p>`,
  };
}

export interface SignupInput {
  email?: string;
  phone?: string;
  password?: string;
  name?: string;
}

/** The e-mail verification message; the client's name is someone else's text: one line, cut, escaped for HTML. */
function verificationMail(clientName: string, url: string) {
  const app = displayName(clientName) || 'Gatehouse';
  return {
    subject: `Verify your e-mail address for ${app}`,
    text: `Open this link to verify your e-mail address for ${app} (it works once, for 24 hours):\n${url}`,
    html:
      `<p>Open this link to verify your e-mail address for ${escapeHtml(app)} (it works once, for 24 hours):</p>` +
      `<p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>`,
  };
}

/**
 * The source address of a request as the rate limits see it: the forwarded one only through the proxies TRUST_PROXY
 * names (the left-most X-Forwarded-For entry is the client's to choose, never believed as such).
 */
export function sourceAddress(req: IncomingMessage): string {
  return clientAddress(req) ?? 'unknown';
}

/**
 * Sign-up (the POST /signup endpoint and the sign-up page share it): a user of the client's instance and tenant with
 * an e-mail or a phone number and a password that meets the instance's rules; with an e-mail, a verification link
 * is queued in the same transaction (the delivery outbox sends it after the answer). Attempts that pass the input
 * checks count against the sign-up limits (per source address, per instance): over them, 429.
 */
export class Signup {
  constructor(
    private readonly deps: {
      sql: Sql;
      codes: OneTimeCodes;
      delivery: Delivery;
      issuer: string;
      limits?: SignupLimits;
      events?: AuthEvents;
    },
  ) {}

  /**
   * Records a sign-up in the audit trail: the new user, or why it was refused (`email_taken`, `rate_limited`,
   * `disabled`, `invalid_input`). Nothing of the input (the password, the address) is recorded.
   */
  recordSignup(
    client: OidcClientRecord,
    source: EventSource,
    outcome: { userId: string } | { error: SignupError | 'email_taken' },
  ): void {
    const userId = 'userId' in outcome ? outcome.userId : null;
    const reason = 'userId' in outcome ? null : signupReason(outcome.error);
    this.deps.events?.record({
      type: userId ? 'signup.success' : 'signup.failure',
      reason,
      instanceId: client.instanceId,
      tenantId: client.tenantId,
      actor: userId
        ? { type: 'user', id: userId, viaClientId: client.id }
        : { type: 'anonymous', viaClientId: client.id },
      userId,
      clientId: client.id,
      ip: source.ip,
      userAgent: source.userAgent,
      details:
        'error' in outcome && typeof outcome.error !== 'string' && outcome.error.problem
          ? { problem: outcome.error.problem }
          : {},
    });
  }

  /**
   * A new user. A taken e-mail or phone number is a 409 for the API (`onTaken: 'error'`, as Auth0's sign-up
   * endpoint); the sign-up page (`'notify'`) answers as for a new account instead, and the owner of a taken e-mail
   * gets a message saying so (undefined is returned).
   */
  async create(
    client: OidcClientRecord,
    input: SignupInput,
    source?: string,
  ): Promise<{ id: string; email: string | null; phone: string | null }>;
  async create(
    client: OidcClientRecord,
    input: SignupInput,
    source: string,
    onTaken: 'notify',
  ): Promise<{ id: string; email: string | null; phone: string | null } | undefined>;
  async create(
    client: OidcClientRecord,
    input: SignupInput,
    source = 'unknown',
    onTaken: 'error' | 'notify' = 'error',
  ): Promise<{ id: string; email: string | null; phone: string | null } | undefined> {
    const { email, phone, password } = await this.checkedInput(client, input);
    // counted on its own (not in the sign-up's transaction): a refused or conflicting attempt counts too
    const retryAfter = await this.deps.limits?.admit(client.instanceId, source);
    if (retryAfter !== undefined) {
      throw new SignupError(429, 'too_many_requests', 'too many sign-ups; try again later', retryAfter, {
        problem: 'tooMany',
      });
    }
    const hash = await hashPassword(password);
    try {
      return await this.deps.sql.transaction(async (tx) => {
        const id = await this.insertUser(tx, client, {
          email,
          phone,
          hash,
          name: input.name?.trim() || null,
        });
        return { id, email: email ?? null, phone: phone ?? null };
      });
    } catch (err) {
      const pg = findPgError(err);
      if (pg?.code === '23505' && onTaken === 'notify') {
        // only the owner of the taken e-mail is told (a taken phone number beside a new e-mail tells that e-mail
        // nothing about an account it does not have)
        if (email && pg.constraint === 'ux_users_email') {
          const mail = existingAccountMail(client.clientName);
          await this.deps.delivery.email(email, mail.subject, mail.text, {
            kind: 'signup-existing',
            html: mail.html,
          });
        }
        return undefined;
      }
      if (pg?.code === '23505')
        throw new SignupError(409, 'conflict', 'an account with this e-mail or phone number exists');
      throw err;
    }
  }

  /** The sign-up's e-mail (lower-cased), phone (E.164) and password, or the 4xx saying what is wrong. */
  private async checkedInput(
    client: OidcClientRecord,
    input: SignupInput,
  ): Promise<{ email?: string; phone?: string; password: string }> {
    if (!allowsSignup(client))
      throw new SignupError(403, 'access_denied', 'this application does not allow sign-up');
    const email = input.email?.trim().toLowerCase() || undefined;
    const phone = input.phone?.trim() ? normalizePhone(input.phone.trim()) : undefined;
    const bad = (message: string, problem: SignupProblemOf) =>
      new SignupError(400, 'invalid_request', message, undefined, problem);
    if (!email && !phone) throw bad('give an email or a phone number', { field: 'email', problem: 'none' });
    if (email && !EMAIL.test(email))
      throw bad('email is not an e-mail address', { field: 'email', problem: 'email' });
    if (phone && !/^\+[1-9]\d{4,14}$/.test(phone)) {
      throw bad('phone must be an E.164 number (+ and 5 to 15 digits)', { field: 'phone', problem: 'phone' });
    }
    const password = input.password ?? '';
    const instance = await this.deps.sql.one<{ settings: InstanceSettings }>(
      `SELECT settings FROM instances WHERE id = $1`,
      [client.instanceId],
    );
    const failures = checkPasswordPolicy(instance?.settings?.password_validators, password);
    if (!password || failures.length) {
      throw bad(`password: ${failures.join('; ') || 'required'}`, {
        field: 'password',
        problem: password ? 'password' : 'passwordMissing',
      });
    }
    return { email, phone, password };
  }

  /** Inserts the user in `tx` and, with an e-mail, queues its verification link in the same transaction. */
  private async insertUser(
    tx: Sql,
    client: OidcClientRecord,
    user: { email?: string; phone?: string; hash: string; name: string | null },
  ): Promise<string> {
    const { id } = (await tx.one<{ id: string }>(
      `INSERT INTO users (instance_id, tenant_id, user_email, phone_number, password_hash, name)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [client.instanceId, client.tenantId, user.email ?? null, user.phone ?? null, user.hash, user.name],
    ))!;
    if (user.email) {
      const token = await this.deps.codes.issueLink(tx, {
        instanceId: client.instanceId,
        userId: id,
        clientId: client.id,
        purpose: VERIFY_PURPOSE,
        ttlSec: VERIFY_TTL_SEC,
      });
      const mail = verificationMail(
        client.clientName,
        `${this.deps.issuer}${EMAIL_VERIFICATION_PATH}?token=${token}`,
      );
      await this.deps.delivery.email(user.email, mail.subject, mail.text, {
        tx,
        kind: 'signup-verification',
        html: mail.html,
      });
    }
    return id;
  }

  /** Deletes the sign-up counters of ended windows. */
  async purgeCounters(): Promise<number> {
    return (await this.deps.limits?.purge()) ?? 0;
  }

  /**
   * The user and client of an e-mail verification link, the user now verified; undefined for an unknown, used or
   * expired link.
   */
  async verify(token: string): Promise<{ userId: string; clientId: string } | undefined> {
    const link = await this.deps.codes.redeem(token, VERIFY_PURPOSE);
    if (!link) return undefined;
    await this.deps.sql.exec(`UPDATE users SET email_verified = true, updated_at = now() WHERE id = $1`, [
      link.user_id,
    ]);
    return { userId: link.user_id, clientId: link.client_id };
  }
}

/** The reason code of a refused sign-up. */
function signupReason(error: SignupError | 'email_taken'): string {
  if (typeof error === 'string') return error;
  switch (error.status) {
    case 409:
      return 'email_taken';
    case 429:
      return 'rate_limited';
    case 403:
      return 'disabled';
    default:
      return 'invalid_input';
  }
}

/** POST /signup (JSON or form): `client_id`, `email` or `phone`, `password`, `name`. 201 with the user. */
export async function handleSignup(
  signup: Signup,
  data: OidcData,
  res: ServerResponse,
  req: IncomingMessage,
  params: Params,
): Promise<void> {
  const clientId = one(params, 'client_id');
  const client = clientId ? await data.findClient(clientId) : undefined;
  if (!client) return sendOAuthError(res, 400, 'invalid_request', 'client_id names no client');
  try {
    const user = await signup.create(
      client,
      {
        email: one(params, 'email'),
        phone: one(params, 'phone') ?? one(params, 'phone_number'),
        password: one(params, 'password'),
        name: one(params, 'name'),
      },
      sourceAddress(req),
    );
    signup.recordSignup(client, sourceOf(req), { userId: user.id });
    res.statusCode = 201;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-store');
    res.end(
      JSON.stringify({
        id: user.id,
        email: user.email,
        phone_number: user.phone,
        email_verified: false,
        phone_verified: false,
      }),
    );
  } catch (err) {
    if (!(err instanceof SignupError)) throw err;
    signup.recordSignup(client, sourceOf(req), { error: err });
    sendOAuthError(
      res,
      err.status,
      err.error,
      err.message,
      err.retryAfterSec !== undefined ? { 'Retry-After': String(err.retryAfterSec) } : {},
    );
  }
}
