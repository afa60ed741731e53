import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Sql } from '@gatehouse/db';
import {
  checkPasswordPolicy,
  endOpenTickets,
  findLiveTicket,
  hashPassword,
  redeemTicket,
  resetFailedLogins,
  revokeUserTokens,
  TICKET_PATHS,
  type InstanceSettings,
  type TicketKind,
  type TicketRow,
} from '@gatehouse/identity-data';
import {
  failedPasswordRules,
  originOf,
  pageHeaders,
  passwordRuleTexts,
  pickLocale,
  type Locale,
} from '../interaction/pages.js';
import { BodyError, one, parseParams, readBody } from '../oidc/request-body.js';
import {
  requiredText,
  emailTicketPage,
  passwordTicketPage,
  ticketMessagePage,
  type TicketMessage,
} from './ticket-pages.js';
import { cookieMalformed, cookieValue, sameSecret } from '../interaction/cookies.js';

/** The ticket cannot do what it was made for (its e-mail changed since): the transaction is undone. */
class TicketVoid extends Error {}

const sameEmail = (a: string | null, b: string | null) => !!a && !!b && a.toLowerCase() === b.toLowerCase();

/** The ticket pages' paths (the management API builds their links: `<ISSUER><path>?ticket=<token>`). */
export const TICKET_PASSWORD_PATH = TICKET_PATHS.password_change;
export const TICKET_EMAIL_PATH = TICKET_PATHS.email_verification;
const CSRF_COOKIE = 'gh.ticket.csrf';

/**
 * The pages of tickets: `GET <path>?ticket=...` shows the form of a live ticket (password, or a button confirming
 * the e-mail), `POST <path>` (fields `ticket`, `csrf`, and `password`) uses the ticket up in one atomic UPDATE
 * (`used_at IS NULL AND expires_at > now()`) together with what it does, then redirects to the ticket's
 * result_url (303) or shows a success page. A used, expired or unknown ticket: an error page (400); a form whose
 * CSRF token does not match its cookie (double submit, SameSite=Strict): 403. A password the instance's
 * password_validators refuse: the form again (400) naming the rules, the ticket still usable.
 */
export class TicketPages {
  constructor(
    private readonly deps: {
      sql: Sql;
      /** HMAC keys of ticket tokens (box.derive('tickets'), as apps/identity derives them). */
      keys: Buffer[];
      /** A user this process changed (its cached rows and grants go at once; other replicas learn by the feed). */
      forgetUser?: (userId: string) => void;
    },
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const kind: TicketKind = path === TICKET_PASSWORD_PATH ? 'password_change' : 'email_verification';
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    const locale = pickLocale(query.get('ui_locales') ?? undefined, req.headers['accept-language']);
    if (req.method === 'GET') return this.show(req, res, kind, locale, query.get('ticket') ?? '');
    let params;
    try {
      params = parseParams(req, await readBody(req));
    } catch (err) {
      if (err instanceof BodyError) return this.message(res, locale, err.status, 'invalid');
      throw err;
    }
    const ticket = one(params, 'ticket') ?? '';
    // A CSRF cookie we could never have set (bad percent-encoding) is a malformed request, not a forgery: 400.
    if (cookieMalformed(req, CSRF_COOKIE)) return this.message(res, locale, 400, 'csrf');
    if (!sameSecret(cookieValue(req, CSRF_COOKIE), one(params, 'csrf'))) {
      return this.message(res, locale, 403, 'csrf');
    }
    const live = await findLiveTicket(this.deps.sql, this.deps.keys, ticket, kind);
    if (!live) return this.message(res, locale, 400, 'invalid');
    if (kind === 'password_change') {
      return this.setPassword(req, res, locale, live, ticket, one(params, 'password') ?? '');
    }
    const done = await this.voidable(async (tx) => {
      const used = await redeemTicket(tx, this.deps.keys, ticket, kind);
      if (!used) return undefined;
      // only the address the ticket was made for: after a change of e-mail the ticket verifies nothing
      const verified = await tx.exec(
        `UPDATE users SET email_verified = true, updated_at = now()
          WHERE id = $1 AND lower(user_email) = lower($2::text)`,
        [used.user_id, used.user_email],
      );
      if (!verified) throw new TicketVoid();
      return used;
    });
    if (done) this.deps.forgetUser?.(done.user_id);
    return done ? this.finish(res, locale, done, 'emailVerified') : this.message(res, locale, 400, 'invalid');
  }

  private async show(
    req: IncomingMessage,
    res: ServerResponse,
    kind: TicketKind,
    locale: Locale,
    ticket: string,
  ): Promise<void> {
    const live = await findLiveTicket(this.deps.sql, this.deps.keys, ticket, kind);
    const user = live ? await this.userOf(live) : undefined;
    if (!live || !user) return this.message(res, locale, 400, 'invalid');
    if (kind === 'email_verification' && !sameEmail(user.user_email, live.user_email)) {
      return this.message(res, locale, 400, 'invalid');
    }
    const csrf = cookieValue(req, CSRF_COOKIE) ?? randomBytes(24).toString('base64url');
    res.setHeader('Set-Cookie', this.csrfCookie(kind, csrf));
    return this.form(res, locale, live, ticket, csrf, user);
  }

  private async form(
    res: ServerResponse,
    locale: Locale,
    live: TicketRow,
    ticket: string,
    csrf: string,
    user: { user_email: string | null; user_name: string | null; phone_number: string | null },
    extra: { status?: number; errors?: string[] } = {},
  ): Promise<void> {
    const instance = await this.deps.sql.one<{ settings: InstanceSettings }>(
      `SELECT settings FROM instances WHERE id = $1`,
      [live.instance_id],
    );
    const nonce = randomBytes(16).toString('base64');
    // the answer to the form may redirect to result_url: form-action must allow its origin
    pageHeaders(res, nonce, originOf(live.result_url ?? ''));
    res.statusCode = extra.status ?? 200;
    // the answer to the form speaks the language of the page
    const action = `${TICKET_PATHS[live.kind]}?ui_locales=${locale}`;
    res.end(
      live.kind === 'password_change'
        ? passwordTicketPage({
            locale,
            nonce,
            action,
            csrf,
            ticket,
            who: user.user_email ?? user.user_name ?? user.phone_number,
            errors: extra.errors,
            rules: passwordRuleTexts(locale, instance?.settings?.password_validators),
          })
        : emailTicketPage({ locale, nonce, action, csrf, ticket, email: user.user_email ?? '' }),
    );
  }

  private async setPassword(
    req: IncomingMessage,
    res: ServerResponse,
    locale: Locale,
    live: TicketRow,
    ticket: string,
    password: string,
  ): Promise<void> {
    const instance = await this.deps.sql.one<{ settings: InstanceSettings }>(
      `SELECT settings FROM instances WHERE id = $1`,
      [live.instance_id],
    );
    const failures = checkPasswordPolicy(instance?.settings?.password_validators, password);
    if (!password || password.length > 1024 || failures.length) {
      const user = await this.userOf(live);
      if (!user) return this.message(res, locale, 400, 'invalid');
      // the rules failed, in the page's language (a rule's own description where we have no words of ours)
      const failed = failedPasswordRules(locale, instance?.settings?.password_validators, password);
      const errors = failed.length ? failed : [password ? failures.join('; ') : requiredText(locale)];
      return this.form(res, locale, live, ticket, cookieValue(req, CSRF_COOKIE) ?? '', user, {
        status: 400,
        errors,
      });
    }
    const hash = await hashPassword(password);
    const done = await this.deps.sql.transaction(async (tx) => {
      const used = await redeemTicket(tx, this.deps.keys, ticket, 'password_change');
      if (!used) return undefined;
      await tx.exec(
        `UPDATE users SET password_hash = $2, failed_login_count = 0, locked_until = NULL, updated_at = now(),
                email_verified = email_verified OR COALESCE($3 AND lower(user_email) = lower($4::text), false)
          WHERE id = $1`,
        [used.user_id, hash, used.mark_email_verified, used.user_email],
      );
      await resetFailedLogins(tx, used.user_id);
      await endOpenTickets(tx, used.user_id, 'password_change');
      // as PUT /users/:user_id/password: whoever held the old password keeps nothing it obtained with it
      await revokeUserTokens(tx, used.user_id);
      return used;
    });
    if (done) this.deps.forgetUser?.(done.user_id);
    return done ? this.finish(res, locale, done, 'passwordSet') : this.message(res, locale, 400, 'invalid');
  }

  /** `fn` in a transaction; a TicketVoid undoes it (the ticket stays unused) and gives undefined. */
  private async voidable<T>(fn: (tx: Sql) => Promise<T | undefined>): Promise<T | undefined> {
    try {
      return await this.deps.sql.transaction(fn);
    } catch (err) {
      if (err instanceof TicketVoid) return undefined;
      throw err;
    }
  }

  private userOf(t: TicketRow) {
    return this.deps.sql.one<{
      user_email: string | null;
      user_name: string | null;
      phone_number: string | null;
    }>(`SELECT user_email, user_name, phone_number FROM users WHERE id = $1`, [t.user_id]);
  }

  private csrfCookie(kind: TicketKind, csrf: string, maxAge = 3600): string {
    return `${CSRF_COOKIE}=${csrf}; Path=${TICKET_PATHS[kind]}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
  }

  /** Success: to result_url (303), else a page saying so. */
  private finish(res: ServerResponse, locale: Locale, t: TicketRow, message: TicketMessage): void {
    res.setHeader('Set-Cookie', this.csrfCookie(t.kind, '', 0));
    if (t.result_url) {
      res.statusCode = 303;
      res.setHeader('Location', t.result_url);
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.end();
      return;
    }
    this.message(res, locale, 200, message);
  }

  private message(res: ServerResponse, locale: Locale, status: number, message: TicketMessage): void {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = status;
    res.end(ticketMessagePage({ locale, nonce, message }));
  }
}
