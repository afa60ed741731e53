import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import QRCode from 'qrcode';
import type { Sql } from '@gatehouse/db';
import { escapeHtml as mailEscape, maskAddress, type Delivery } from '@gatehouse/delivery';
import {
  accountClientId,
  checkPasswordPolicy,
  endOpenTickets,
  ensureAccountClients,
  ACCOUNT_CLIENT_FLAG,
  hashPassword,
  instanceSupportedLocales,
  issueTicket,
  TICKET_PATHS,
  USER_GRANTS_FROM,
  MAX_PASSWORD_LENGTH,
  normalizePhone,
  type InstanceSettings,
} from '@gatehouse/identity-data';
import { cookieMalformed, cookieValue, sameSecret } from '../interaction/cookies.js';
import {
  accountLabel,
  failedPasswordRules,
  pageHeaders,
  passwordRuleTexts,
  pickLocale,
  type Locale,
} from '../interaction/pages.js';
import { ACR_MFA, type SecondFactors } from '../mfa/second-factors.js';
import { accountBinding, parseCredential, type PasskeyFailure, type Passkeys } from '../mfa/passkeys.js';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { totpUri } from '../mfa/totp.js';
import type { OidcData, User } from '../oidc/oidc-data.js';
import type { LoginAudit, PasswordLogin } from '../oidc/password-login.js';
import { ROUTES } from '../oidc/provider.js';
import { BodyError, one, parseParams, readBody } from '../oidc/request-body.js';
import { sourceAddress } from '../signup/signup.js';
import { EMAIL } from '../tickets/forgot-password.js';
import { sourceOf, type AuthEvents } from '../events/auth-events.js';
import { CODE_TTL_SEC, type OneTimeCodes } from '../passwordless/one-time-codes.js';
import { deviceOf, touchSessionDevice } from './session-devices.js';
import {
  accountCodesPage,
  accountEnrolPage,
  accountErrorPage,
  accountNotice,
  accountErrorText,
  accountPage,
  messageLocale,
  phoneCodeMessage,
  verificationMessage,
  type AccountDone,
  type AccountNoticeKind,
  type AccountError,
  type AccountView,
} from './account-pages.js';

/** The account pages' path. */
export const ACCOUNT_PATH = '/account';
const CSRF_COOKIE = 'gh.account.csrf';
/** The confirmations a redirect back to the page may ask for (`?done=`). */
const DONE: readonly AccountDone[] = [
  'profile',
  'email',
  'password',
  'removed',
  'sessionEnded',
  'othersEnded',
  'revoked',
  'phone',
  'phoneRemoved',
  'passkeyAdded',
  'passkeyRenamed',
  'passkeyRemoved',
];
/** How often a process may ensure the seeded account clients again when none is found (a request can ask). */
const ENSURE_INTERVAL_MS = 10_000;
/** A sign-in this recent stands in for the current password where a change weakens the account. */
export const RECENT_SIGN_IN_SEC = 300;
const MAX_NAME = 200;
const MAX_PICTURE = 2000;
/** E.164 once spaces, dashes, dots and parentheses are dropped (as the management API stores `user_phone`). */
const E164 = /^\+[1-9]\d{4,14}$/;
const LOCALE_TAG = /^[a-z]{2,3}(?:[-_][a-z0-9]{2,8}){0,3}$/i;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The signed-in person of a request: oidc-provider's session (its cookie) and the user it names. */
interface SignedIn {
  user: User;
  sessionId: string;
  /** The session's public uid (the sessions list names it so; its id is the cookie's value). */
  sessionUid: string;
  /** When the session's sign-in happened (epoch seconds). */
  loginTs: number | undefined;
  /** The session's acr: whether its sign-in used a second factor. */
  acr: string | undefined;
}

/**
 * `GET /account` and `POST /account` (field `action`): the signed-in person's own account, found through
 * oidc-provider's session cookie (`provider.Session.get` on a context of the request, so the cookie's signature
 * is checked as at /authorize). Signed out, the browser is sent to sign in through an authorization request of the
 * instance's first-party account client (a client whose callbacks list `<issuer>/account`), which comes back here.
 * Every form carries a CSRF token matched against a SameSite=Strict cookie (double submit); bad input shows the
 * page again with its error box and writes nothing.
 */
export class AccountPages {
  constructor(
    private readonly deps: {
      provider: () => Provider;
      sql: Sql;
      data: OidcData;
      login: PasswordLogin;
      mfa: SecondFactors;
      passkeys: Passkeys;
      delivery: Delivery;
      /** One-time codes: the code proving a new phone number, and the send budget of text messages. */
      codes: OneTimeCodes;
      issuer: string;
      events: AuthEvents;
      /** HMAC keys of ticket tokens (the e-mail verification link of a new address). */
      ticketKeys: Buffer[];
      /** A user this process changed (its cached rows go at once; other replicas learn by the feed). */
      forgetUser?: (userId: string) => void;
    },
  ) {}

  private get accountUrl() {
    return `${this.deps.issuer}${ACCOUNT_PATH}`;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    const ui = query.get('ui_locales') ?? undefined;
    const signedIn = await this.signedIn(req, res);
    const locale = pickLocale(
      ui,
      req.headers['accept-language'],
      signedIn ? await instanceSupportedLocales(this.deps.sql, signedIn.user.instanceId) : undefined,
    );
    if (!signedIn) {
      if (req.method !== 'GET') return this.errorPage(res, locale, 403, 'csrf');
      // back from an authorization request that did not sign in: say so rather than go round again
      if (query.has('error')) return this.errorPage(res, locale, 400, 'signInFailed');
      return this.toSignIn(res, locale, query.get('client_id') ?? undefined);
    }
    // this session was used now, from this browser (the sessions list shows it)
    await touchSessionDevice(this.deps.sql, { uid: signedIn.sessionUid, userId: signedIn.user.id, req });
    if (req.method === 'GET') {
      // back from the sign-in: the code is not needed (its PKCE verifier was never kept), drop it from the URL
      if (query.has('code') || query.has('state')) return this.redirect(res, this.selfHref(ui));
      // "sign in again with the app": the same authorization request, asking for the second factor (step-up)
      if (query.get('step_up') === 'mfa')
        return this.toSignIn(res, locale, query.get('client_id') ?? undefined, true);
      // "sign in again": a new sign-in (prompt=login) makes it recent, for a person who has no password to give
      if (query.get('reauth') === '1')
        return this.toSignIn(res, locale, query.get('client_id') ?? undefined, false, true);
      const done = query.get('done');
      return this.show(req, res, signedIn, locale, ui, {
        done: DONE.includes(done as AccountDone) ? (done as AccountDone) : undefined,
      });
    }
    let params: Record<string, string | string[]>;
    try {
      params = parseParams(req, await readBody(req));
    } catch (err) {
      if (err instanceof BodyError) return this.errorPage(res, locale, err.status, 'badForm');
      throw err;
    }
    if (cookieMalformed(req, CSRF_COOKIE)) return this.errorPage(res, locale, 400, 'csrf');
    if (!sameSecret(cookieValue(req, CSRF_COOKIE), one(params, 'csrf'))) {
      return this.errorPage(res, locale, 403, 'csrf');
    }
    const action = one(params, 'action');
    if (action === 'profile') return this.saveProfile(req, res, signedIn, locale, ui, params);
    if (action === 'email') return this.changeEmail(req, res, signedIn, locale, ui, params);
    if (action === 'password') return this.changePassword(req, res, signedIn, locale, ui, params);
    if (action === 'remove_app') return this.removeApp(req, res, signedIn, locale, ui, params);
    if (action === 'regenerate_codes') return this.regenerateCodes(req, res, signedIn, locale, ui, params);
    if (action === 'enrol_start' || action === 'enrol_confirm')
      return action === 'enrol_confirm'
        ? this.enrol(req, res, signedIn, locale, ui, params)
        : this.enrol(req, res, signedIn, locale, ui, undefined, params);
    if (action === 'end_session' || action === 'revoke_app')
      return this.endOne(req, res, signedIn, locale, ui, action, params);
    if (action === 'end_all_sessions') return this.endAllSessions(res, signedIn, ui);
    if (action === 'end_other_sessions') return this.endOtherSessions(res, signedIn, ui);
    if (action === 'phone_start') return this.startPhone(req, res, signedIn, locale, ui, params);
    if (action === 'phone_confirm') return this.confirmPhone(req, res, signedIn, locale, ui, params);
    if (action === 'phone_cancel') return this.cancelPhone(res, signedIn, ui);
    if (action === 'phone_remove') return this.removePhone(req, res, signedIn, locale, ui, params);
    if (action === 'passkey_options') return this.passkeyOptions(req, res, signedIn, locale, params);
    if (action === 'passkey_register') return this.passkeyRegister(req, res, signedIn, locale, ui, params);
    if (action === 'rename_passkey') return this.renamePasskey(req, res, signedIn, locale, ui, params);
    if (action === 'remove_passkey') return this.removePasskey(req, res, signedIn, locale, ui, params);
    return this.errorPage(res, locale, 400, 'unknownAction');
  }

  /** The session of the request's cookie, when it names a user who exists and is not blocked. */
  private async signedIn(req: IncomingMessage, res: ServerResponse): Promise<SignedIn | undefined> {
    const provider = this.deps.provider() as Provider & {
      createContext(req: IncomingMessage, res: ServerResponse): unknown;
    };
    const session = await provider.Session.get(
      provider.createContext(req, res) as Parameters<Provider['Session']['get']>[0],
    );
    if (!session?.accountId) return undefined;
    const user = await this.deps.data.findUserById(session.accountId);
    if (!user || user.isBlocked) return undefined;
    return {
      user,
      sessionId: session.jti,
      sessionUid: session.uid,
      loginTs: session.loginTs,
      acr: session.acr,
    };
  }

  /** The person's live sessions and grants, for the page (a session by its uid: its id is the cookie's value). */
  private async sessionsAndApps(s: SignedIn): Promise<Pick<AccountView, 'sessions' | 'apps'>> {
    const sessions = await this.deps.sql.rows<{
      uid: string;
      login_ts: string | null;
      current: boolean;
      user_agent: string | null;
      ip: string | null;
      last_seen_at: Date | null;
    }>(
      /* unscoped: the signed-in user's own sessions, with what their browsers were last seen as */
      `SELECT p.uid, p.payload->>'loginTs' AS login_ts, p.id = $2 AS current, d.user_agent, d.ip, d.last_seen_at
         FROM oidc_payloads p
         LEFT JOIN session_devices d ON d.session_uid = p.uid AND d.user_id::text = $1
        WHERE p.model = 'Session' AND p.payload->>'accountId' = $1 AND p.uid IS NOT NULL
          AND (p.expires_at IS NULL OR p.expires_at > now())
        ORDER BY p.id = $2 DESC, coalesce(d.last_seen_at, to_timestamp((p.payload->>'loginTs')::bigint)) DESC
                 NULLS LAST
        LIMIT 50`,
      [s.user.id, s.sessionId],
    );
    const apps = await this.deps.sql.rows<{ client_id: string; client_name: string | null; since: Date }>(
      `SELECT ug.client_id, min(ug.client_name) AS client_name, min(ug.created_at) AS since FROM ${USER_GRANTS_FROM}
        GROUP BY ug.client_id ORDER BY since DESC LIMIT 100`,
      [s.user.id],
    );
    const at = (d: Date) => d.toISOString().slice(0, 16).replace('T', ' ');
    return {
      sessions: sessions.map((r) => ({
        uid: r.uid,
        loginAt: r.login_ts ? at(new Date(Number(r.login_ts) * 1000)) : '?',
        current: r.current,
        ...deviceOf(r.user_agent),
        ip: r.ip,
        lastSeen: r.last_seen_at ? at(new Date(r.last_seen_at)) : null,
      })),
      apps: apps.map((r) => ({
        clientId: r.client_id,
        name: r.client_name ?? r.client_id,
        since: at(new Date(r.since)).slice(0, 10),
      })),
    };
  }

  /** Signs out one other session (`session`: its uid) or revokes an application's grants (`client`), tokens too. */
  private async endOne(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    action: 'end_session' | 'revoke_app',
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const n =
      action === 'end_session'
        ? await this.deps.sql.exec(
            `DELETE FROM oidc_payloads
              WHERE model = 'Session' AND uid = $2 AND payload->>'accountId' = $1 AND id <> $3`,
            [s.user.id, one(params, 'session') ?? '', s.sessionId],
          )
        : await this.deps.sql.exec(
            // the client's grants of the person, with their tokens
            `DELETE FROM oidc_payloads
              WHERE grant_id IN (SELECT id FROM oidc_payloads
                                  WHERE model = 'Grant' AND payload->>'accountId' = $1 AND payload->>'clientId' = $2)
                 OR (model = 'Grant' AND payload->>'accountId' = $1 AND payload->>'clientId' = $2)`,
            [s.user.id, one(params, 'client') ?? ''],
          );
    if (!n) {
      return this.show(req, res, s, locale, ui, {
        status: 400,
        error: { form: action === 'end_session' ? 'sessions' : 'apps', messages: ['notFound'] },
      });
    }
    return this.redirect(res, this.selfHref(ui, action === 'end_session' ? 'sessionEnded' : 'revoked'));
  }

  /** Every session of the person ends, this one too: the page then asks for a sign-in. Grants stay. */
  private async endAllSessions(res: ServerResponse, s: SignedIn, ui: string | undefined): Promise<void> {
    await this.deps.sql.exec(
      `DELETE FROM oidc_payloads WHERE model = 'Session' AND payload->>'accountId' = $1`,
      [s.user.id],
    );
    return this.redirect(res, this.selfHref(ui));
  }

  /** Every other session of the person ends; this one stays (their grants stay, as for one session). */
  private async endOtherSessions(res: ServerResponse, s: SignedIn, ui: string | undefined): Promise<void> {
    await this.deps.sql.exec(
      `DELETE FROM oidc_payloads WHERE model = 'Session' AND payload->>'accountId' = $1 AND id <> $2`,
      [s.user.id, s.sessionId],
    );
    return this.redirect(res, this.selfHref(ui, 'othersEnded'));
  }

  /**
   * An authorization request of the account client, back to this page. Its code is never redeemed: the PKCE
   * verifier is thrown away, the page only needs the session the sign-in leaves.
   */
  private async toSignIn(
    res: ServerResponse,
    locale: Locale,
    asked: string | undefined,
    stepUp = false,
    fresh = false,
  ): Promise<void> {
    const clientId = await this.accountClient(asked);
    if (!clientId) return this.errorPage(res, locale, 404, 'noAccountApp');
    const challenge = createHash('sha256').update(randomBytes(32)).digest('base64url');
    const q = new URLSearchParams({
      client_id: clientId,
      redirect_uri: this.accountUrl,
      response_type: 'code',
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: randomBytes(16).toString('base64url'),
      ui_locales: locale,
      ...(stepUp ? { acr_values: ACR_MFA } : {}),
      ...(fresh ? { prompt: 'login' } : {}),
    });
    return this.redirect(res, `${ROUTES.authorization}?${q.toString()}`, 302);
  }

  /**
   * The first-party client whose callbacks list this page: the one asked for (`?client_id=`), else the default
   * instance's seeded account client (ensureAccountClients, flagged `gatehouse_account`), else the only such client
   * on this server (several instances each with their own: the link must name it). Found none: the seeded clients
   * are ensured again (an instance created, or its client deleted, since this server started), at most every
   * {@link ENSURE_INTERVAL_MS} by this process, and the search is repeated.
   */
  private async accountClient(asked: string | undefined): Promise<string | undefined> {
    const found = await this.findAccountClient(asked);
    if (found || Date.now() - this.lastEnsured < ENSURE_INTERVAL_MS) return found;
    this.lastEnsured = Date.now();
    await ensureAccountClients(this.deps.sql, this.deps.issuer);
    return this.findAccountClient(asked);
  }

  private lastEnsured = 0;

  private async findAccountClient(asked: string | undefined): Promise<string | undefined> {
    const rows = await this.deps.sql.rows<{ id: string; seeded: boolean }>(
      /* unscoped: any instance's first-party account client, the page is the server's */
      `SELECT c.id, (c.client_metadata->>'${ACCOUNT_CLIENT_FLAG}' = 'true' AND i.is_default) IS TRUE AS seeded
         FROM clients c JOIN instances i ON i.id = c.instance_id
        WHERE c.is_first_party AND c.client_metadata->'urls'->'callbacks' ? $1
          AND ($2::text IS NULL OR c.id::text = $2::text)
        ORDER BY 2 DESC, c.created_at, c.id
        LIMIT 2`,
      [this.accountUrl, asked ?? null],
    );
    if (rows[0]?.seeded && !asked) return rows[0].id;
    return rows.length === 1 ? rows[0].id : undefined;
  }

  private selfHref(ui: string | undefined, done?: AccountDone): string {
    const q = new URLSearchParams();
    if (ui) q.set('ui_locales', ui);
    if (done) q.set('done', done);
    const s = q.toString();
    return s ? `${ACCOUNT_PATH}?${s}` : ACCOUNT_PATH;
  }

  private async viewOf(user: User): Promise<Omit<AccountView, 'sessions' | 'apps'>> {
    const factors = await this.deps.sql.rows<{ type: string; confirmed_at: Date; left: number }>(
      /* unscoped: the signed-in user's own rows; never a secret or a code */
      `SELECT type, confirmed_at,
              coalesce((SELECT count(*)::int FROM unnest(code_hashes) h WHERE h NOT LIKE 'used:%'), 0) AS left
         FROM user_authenticators WHERE user_id = $1 AND confirmed_at IS NOT NULL`,
      [user.id],
    );
    const app = factors.find((f) => f.type === 'totp');
    const codes = factors.find((f) => f.type === 'recovery_codes');
    return {
      label: accountLabel(user) ?? user.id,
      name: user.name ?? '',
      nickname: user.nickname ?? '',
      picture: user.picture ?? '',
      locale: user.locale ?? '',
      email: user.userEmail,
      emailVerified: user.emailVerified,
      phone: user.phoneNumber,
      phoneVerified: user.phoneVerified,
      pendingPhone: (await this.deps.codes.pendingPhone(user.id)) ?? null,
      appSince: app ? new Date(app.confirmed_at).toISOString().slice(0, 10) : null,
      recoveryLeft: codes ? codes.left : null,
      hasPassword: !!user.passwordHash,
    };
  }

  private async settingsOf(user: User): Promise<InstanceSettings | undefined> {
    const row = await this.deps.sql.one<{ settings: InstanceSettings }>(
      `SELECT settings FROM instances WHERE id = $1`,
      [user.instanceId],
    );
    return row?.settings;
  }

  private async show(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    extra: {
      status?: number;
      done?: AccountDone;
      error?: Parameters<typeof accountPage>[0]['error'];
      profileInput?: Parameters<typeof accountPage>[0]['profileInput'];
      emailInput?: string;
      phoneInput?: string;
    } = {},
  ): Promise<void> {
    const csrf = this.csrf(req, res);
    const settings = await this.settingsOf(s.user);
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, [], { passkeys: true });
    res.statusCode = extra.status ?? 200;
    res.end(
      accountPage({
        locale,
        nonce,
        action: this.selfHref(ui),
        csrf,
        view: {
          ...(await this.viewOf(s.user)),
          ...(await this.sessionsAndApps(s)),
          passkeys: await this.passkeyList(s.user.id),
          recentSignIn:
            s.loginTs !== undefined &&
            this.deps.mfa.clock().getTime() / 1000 - s.loginTs <= RECENT_SIGN_IN_SEC,
        },
        rules: passwordRuleTexts(locale, settings?.password_validators),
        signOutHref: ROUTES.end_session,
        reauthHref: `${ACCOUNT_PATH}?reauth=1${ui ? `&ui_locales=${encodeURIComponent(ui)}` : ''}`,
        stepUpHref:
          s.acr === ACR_MFA
            ? undefined
            : `${ACCOUNT_PATH}?step_up=mfa${ui ? `&ui_locales=${encodeURIComponent(ui)}` : ''}`,
        ...extra,
      }),
    );
  }

  /** The CSRF token of the page's forms: the cookie's when there is one, else a new one set. */
  private csrf(req: IncomingMessage, res: ServerResponse): string {
    const have = cookieMalformed(req, CSRF_COOKIE) ? undefined : cookieValue(req, CSRF_COOKIE);
    const csrf = have ?? randomBytes(24).toString('base64url');
    res.setHeader(
      'Set-Cookie',
      `${CSRF_COOKIE}=${csrf}; Path=${ACCOUNT_PATH}; HttpOnly; SameSite=Strict; Max-Age=3600`,
    );
    return csrf;
  }

  private async saveProfile(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const input = {
      name: (one(params, 'name') ?? '').trim(),
      nickname: (one(params, 'nickname') ?? '').trim(),
      picture: (one(params, 'picture') ?? '').trim(),
      locale: (one(params, 'locale') ?? '').trim(),
    };
    const errors: AccountError[] = [];
    if (input.name.length > MAX_NAME) errors.push('nameLong');
    if (input.nickname.length > MAX_NAME) errors.push('nicknameLong');
    if (CONTROL.test(input.name) || CONTROL.test(input.nickname)) errors.push('control');
    if (input.picture && !webUrl(input.picture, MAX_PICTURE)) errors.push('picture');
    if (input.locale && !LOCALE_TAG.test(input.locale)) errors.push('locale');
    if (errors.length) {
      return this.show(req, res, s, locale, ui, {
        status: 400,
        error: { form: 'profile', messages: errors },
        profileInput: input,
      });
    }
    await this.deps.sql.exec(
      `UPDATE users SET name = $2, nickname = $3, picture = $4, locale = $5, updated_at = now() WHERE id = $1`,
      [s.user.id, input.name || null, input.nickname || null, input.picture || null, input.locale || null],
    );
    this.deps.forgetUser?.(s.user.id);
    return this.redirect(res, this.selfHref(ui, 'profile'));
  }

  /**
   * A new e-mail address: it weakens the account (password resets go there), so it needs a recent sign-in or the
   * password, and a sign-in with the app when the person has one. The address is changed at once, unverified; a
   * verification ticket (24 hours) goes to the new address and a notice to the old one, in the same transaction.
   */
  private async changeEmail(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const email = (one(params, 'new_email') ?? '').trim();
    const password = one(params, 'current_password') ?? '';
    const fail = this.refusal(req, res, s, locale, ui, 'email', { emailInput: email });
    if (!EMAIL.test(email) || email.length > 254) return fail('emailBad');
    if (s.user.userEmail && s.user.userEmail.toLowerCase() === email.toLowerCase()) return fail('emailSame');
    const refused = await this.mayWeaken(req, s, password);
    if (refused) return fail(refused);
    const taken = await this.deps.sql.one<{ n: number }>(
      /* unscoped: the person's own instance, by the unique index's expression */
      `SELECT 1 AS n FROM users WHERE instance_id = $1 AND lower(user_email) = lower($2) AND id <> $3`,
      [s.user.instanceId, email, s.user.id],
    );
    if (taken) return fail('emailTaken');
    const old = s.user.userEmail;
    try {
      await this.deps.sql.transaction(async (tx) => {
        await tx.exec(
          `UPDATE users SET user_email = $2, email_verified = false, updated_at = now() WHERE id = $1`,
          [s.user.id, email],
        );
        await endOpenTickets(tx, s.user.id, 'email_verification');
        const issued = await issueTicket(tx, this.deps.ticketKeys, {
          instanceId: s.user.instanceId,
          userId: s.user.id,
          kind: 'email_verification',
          ttlSec: 86_400,
          userEmail: email,
          actor: null,
        });
        const link = `${this.deps.issuer}${TICKET_PATHS.email_verification}?ticket=${issued.token}`;
        const { subject, text } = verificationMessage(messageLocale(s.user.locale, locale));
        await this.deps.delivery.email(email, subject, `${text}\n${link}`, {
          tx,
          kind: 'email-verification',
          html: `<p>${mailEscape(text)}</p><p><a href="${mailEscape(link)}">${mailEscape(link)}</a></p>`,
        });
        if (old) await this.notice(tx, { ...s.user, userEmail: old }, 'email-changed', locale);
      });
    } catch (err) {
      // two changes to the same address at once: the unique index decides
      if ((err as { code?: string }).code === '23505') return fail('emailTaken');
      throw err;
    }
    this.deps.forgetUser?.(s.user.id);
    return this.redirect(res, this.selfHref(ui, 'email'));
  }

  /**
   * A new phone number (E.164): like a new e-mail address it weakens the account (a one-time code by text message
   * signs in with it), so it needs a recent sign-in or the password, and a sign-in with the app when the person has
   * one. Nothing is saved yet: a 6-digit code goes to the number by text message (the passwordless send budget:
   * at most one a minute and five an hour to the account and to the number), in the transaction that stores it.
   */
  private async startPhone(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const typed = (one(params, 'new_phone') ?? '').trim();
    const phone = normalizePhone(typed);
    const password = one(params, 'current_password') ?? '';
    const fail = this.refusal(req, res, s, locale, ui, 'phone', { phoneInput: typed });
    if (!E164.test(phone)) return fail('phoneBad');
    if (s.user.phoneNumber === phone && s.user.phoneVerified) return fail('phoneSame');
    const refused = await this.mayWeaken(req, s, password);
    if (refused) return fail(refused);
    if (await this.phoneTaken(s.user, phone)) return fail('phoneTaken');
    if (!(await this.deps.codes.mayBeSent({ userId: s.user.id, channel: 'sms', destination: phone }))) {
      return fail('phoneTooSoon');
    }
    await this.deps.sql.transaction(async (tx) => {
      const code = await this.deps.codes.issuePhoneCode(tx, {
        instanceId: s.user.instanceId,
        userId: s.user.id,
        phone,
      });
      const text = phoneCodeMessage(
        messageLocale(s.user.locale, locale),
        code,
        Math.round(CODE_TTL_SEC / 60),
      );
      await this.deps.delivery.sms(phone, text, { tx, kind: 'phone-verification' });
    });
    return this.redirect(res, this.selfHref(ui));
  }

  /** Another account of the instance holds this number (the unique index's rule). */
  private async phoneTaken(user: User, phone: string): Promise<boolean> {
    const row = await this.deps.sql.one<{ n: number }>(
      /* unscoped: the person's own instance, by the unique index's columns */
      `SELECT 1 AS n FROM users WHERE instance_id = $1 AND phone_number = $2 AND id <> $3`,
      [user.instanceId, phone, user.id],
    );
    return !!row;
  }

  /**
   * The code of the waiting number: right, the number is saved as verified (the old one replaced) and a notice
   * sent, in one transaction; wrong, an attempt is counted (5 per code); none live (expired, tried 5 times), the
   * person asks again. The rules of the start are not asked again: the code was sent only after them.
   */
  private async confirmPhone(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const fail = this.refusal(req, res, s, locale, ui, 'phone');
    const code = (one(params, 'code') ?? '').replace(/\s/g, '');
    let outcome: 'ok' | 'wrong' | 'none' | 'taken';
    try {
      outcome = await this.deps.sql.transaction(async (tx) => {
        const checked = await this.deps.codes.checkPhoneCode(tx, s.user.id, code);
        if (checked.result !== 'ok') return checked.result;
        if (await this.phoneTaken(s.user, checked.phone)) return 'taken';
        await tx.exec(
          `UPDATE users SET phone_number = $2, phone_verified = true, updated_at = now() WHERE id = $1`,
          [s.user.id, checked.phone],
        );
        await this.notice(tx, s.user, 'phone-changed', locale, checked.phone);
        return 'ok';
      });
    } catch (err) {
      // two accounts verifying the same number at once: the unique index decides
      if ((err as { code?: string }).code !== '23505') throw err;
      outcome = 'taken';
    }
    if (outcome === 'taken') return fail('phoneTaken');
    if (outcome === 'wrong') return fail('phoneWrong');
    if (outcome === 'none') return fail('phoneExpired');
    this.deps.forgetUser?.(s.user.id);
    return this.redirect(res, this.selfHref(ui, 'phone'));
  }

  /** The waiting number given up: its code ends, the page asks for a number again. */
  private async cancelPhone(res: ServerResponse, s: SignedIn, ui: string | undefined): Promise<void> {
    await this.deps.codes.endPhoneCodes(this.deps.sql, s.user.id);
    return this.redirect(res, this.selfHref(ui));
  }

  /**
   * The phone number removed: a recent sign-in or the password (the notice goes to the e-mail address; an account
   * whose only login the number is keeps it).
   */
  private async removePhone(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const password = one(params, 'current_password') ?? '';
    const fail = this.refusal(req, res, s, locale, ui, 'phone');
    if (!s.user.phoneNumber) return fail('noPhone');
    if (!s.user.userEmail && !s.user.userName) return fail('phoneOnly');
    const refused = await this.mayWeaken(req, s, password, false);
    if (refused) return fail(refused);
    await this.deps.sql.transaction(async (tx) => {
      await tx.exec(
        `UPDATE users SET phone_number = NULL, phone_verified = false, updated_at = now() WHERE id = $1`,
        [s.user.id],
      );
      await this.deps.codes.endPhoneCodes(tx, s.user.id);
      await this.notice(tx, s.user, 'phone-removed', locale);
    });
    this.deps.forgetUser?.(s.user.id);
    return this.redirect(res, this.selfHref(ui, 'phoneRemoved'));
  }

  private async changePassword(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const current = one(params, 'current_password') ?? '';
    const next = one(params, 'new_password') ?? '';
    const fail = (messages: AccountError[], extra?: string[]) =>
      this.show(req, res, s, locale, ui, { status: 400, error: { form: 'password', messages, extra } });
    if (!s.user.passwordHash) return fail(['noPassword']);
    if (!(await this.deps.login.confirm(s.user, current, sourceAddress(req), this.audit(req, s))))
      return fail(['currentWrong']);
    if (!next) return fail(['newMissing']);
    const validators = (await this.settingsOf(s.user))?.password_validators;
    if (next.length > MAX_PASSWORD_LENGTH || checkPasswordPolicy(validators, next).length) {
      const failed = failedPasswordRules(locale, validators, next);
      return fail(['newWeak'], failed.length ? failed : checkPasswordPolicy(validators, next));
    }
    if (next === current) return fail(['sameAsOld']);
    const hash = await hashPassword(next);
    await this.deps.sql.transaction(async (tx) => {
      await tx.exec(`UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, [
        s.user.id,
        hash,
      ]);
      await endOpenTickets(tx, s.user.id, 'password_change');
      // whoever held the old password keeps nothing it obtained with it: every session but this one, every grant
      // and token (this browser's applications sign in again through its session)
      await tx.exec(
        `DELETE FROM oidc_payloads
          WHERE (payload->>'accountId' = $1 AND NOT (model = 'Session' AND id = $2))
             OR grant_id IN (SELECT id FROM oidc_payloads WHERE model = 'Grant' AND payload->>'accountId' = $1)`,
        [s.user.id, s.sessionId],
      );
      await this.notice(tx, s.user, 'password-changed', locale);
    });
    this.deps.forgetUser?.(s.user.id);
    return this.redirect(res, this.selfHref(ui, 'password'));
  }

  /** A refusal of `form`: the page again, 400, with the error above that form and its input kept; nothing written. */
  private refusal(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    form: 'email' | 'phone',
    input: { emailInput?: string; phoneInput?: string } = {},
  ): (m: AccountError) => Promise<void> {
    return (m) =>
      this.show(req, res, s, locale, ui, { status: 400, error: { form, messages: [m] }, ...input });
  }

  /**
   * The rule of a change that weakens the account (a new e-mail address or phone number, one removed): a sign-in
   * with the app when the person has one (`needApp`), and a recent sign-in or the current password. The refusal, or
   * undefined.
   */
  private async mayWeaken(
    req: IncomingMessage,
    s: SignedIn,
    password: string,
    needApp = true,
  ): Promise<AccountError | undefined> {
    if (needApp && (await this.viewOf(s.user)).appSince && s.acr !== ACR_MFA) return 'needMfa';
    if (!(await this.recentOrPassword(req, s, password))) return password ? 'currentWrong' : 'recent';
    return undefined;
  }

  /** The sign-in is recent (RECENT_SIGN_IN_SEC), or the current password given is right (the login's lockout). */
  private async recentOrPassword(req: IncomingMessage, s: SignedIn, password: string): Promise<boolean> {
    const now = this.deps.mfa.clock().getTime() / 1000;
    if (s.loginTs !== undefined && now - s.loginTs <= RECENT_SIGN_IN_SEC) return true;
    return password
      ? this.deps.login.confirm(s.user, password, sourceAddress(req), this.audit(req, s))
      : false;
  }

  private async removeApp(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const fail = (m: AccountError) =>
      this.show(req, res, s, locale, ui, { status: 400, error: { form: 'factors', messages: [m] } });
    // the app is changed only by a sign-in that used it: a password alone (a client whose policy is off) may not
    if (s.acr !== ACR_MFA) return fail('needMfa');
    if (!(await this.recentOrPassword(req, s, one(params, 'current_password') ?? ''))) {
      return fail(one(params, 'current_password') ? 'currentWrong' : 'recent');
    }
    const removed = await this.deps.sql.transaction(async (tx) => {
      const n = await tx.exec(
        `DELETE FROM user_authenticators WHERE user_id = $1 AND type IN ('totp', 'recovery_codes')`,
        [s.user.id],
      );
      if (n) await this.notice(tx, s.user, 'factor-removed', locale);
      return n;
    });
    if (!removed) return fail('noApp');
    this.event(req, s.user, 'mfa.removed');
    return this.redirect(res, this.selfHref(ui, 'removed'));
  }

  private async regenerateCodes(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const fail = (m: AccountError) =>
      this.show(req, res, s, locale, ui, { status: 400, error: { form: 'factors', messages: [m] } });
    if (s.acr !== ACR_MFA) return fail('needMfa');
    if (!(await this.recentOrPassword(req, s, one(params, 'current_password') ?? ''))) {
      return fail(one(params, 'current_password') ? 'currentWrong' : 'recent');
    }
    const codes = await this.deps.mfa.regenerateRecoveryCodes(s.user);
    if (!codes) return fail('noApp');
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = 200;
    res.end(accountCodesPage({ locale, nonce, codes, backHref: this.selfHref(ui), enrolled: false }));
  }

  /** The QR page (`enrol_start`), or its code confirmed (`enrol_confirm`, params): only without an app. */
  private async enrol(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]> | undefined,
    startParams?: Record<string, string | string[]>,
  ): Promise<void> {
    if ((await this.viewOf(s.user)).appSince) {
      return this.show(req, res, s, locale, ui, {
        status: 400,
        error: { form: 'factors', messages: ['hasApp'] },
      });
    }
    // a session alone may not add an app (whoever holds it would then hold the second factor): the QR page needs a
    // recent sign-in or the password, and a code confirms only an enrolment started so
    const refuse = (m: AccountError) =>
      this.show(req, res, s, locale, ui, { status: 400, error: { form: 'factors', messages: [m] } });
    if (!params) {
      const password = one(startParams ?? {}, 'current_password') ?? '';
      if (!(await this.recentOrPassword(req, s, password)))
        return refuse(password ? 'currentWrong' : 'recent');
    } else if (!(await this.pendingEnrolment(s.user.id))) {
      return refuse('recent');
    }
    const pending = await this.deps.mfa.startEnrolment(s.user);
    if (params) {
      const confirmed = await this.deps.mfa.confirmEnrolment(s.user, pending.id, one(params, 'otp') ?? '');
      if (confirmed !== 'wrong_code') {
        this.event(req, s.user, 'mfa.enrolled');
        const nonce = randomBytes(16).toString('base64');
        pageHeaders(res, nonce);
        res.statusCode = 200;
        res.end(
          accountCodesPage({
            locale,
            nonce,
            codes: confirmed.codes,
            backHref: this.selfHref(ui),
            enrolled: true,
          }),
        );
        return;
      }
    }
    const label = accountLabel(s.user) ?? s.user.id;
    const qrSvg = await QRCode.toString(totpUri(this.deps.mfa.appIssuer, label, pending.secret), {
      type: 'svg',
      margin: 1,
      errorCorrectionLevel: 'M',
    });
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = params ? 401 : 200;
    res.end(
      accountEnrolPage({
        locale,
        nonce,
        action: this.selfHref(ui),
        csrf: this.csrf(req, res),
        qrSvg,
        secret: pending.secret,
        error: params ? 'enrolWrong' : undefined,
      }),
    );
  }

  /**
   * A notice of a change, in the same transaction as the change (the delivery outbox): to the account's e-mail
   * address, else (an account without one) by text message to its verified phone number. In the person's language
   * (messageLocale: their profile's `locale`, else the page's). `phone`: the new number a `phone-changed` notice
   * names (masked).
   */
  private async notice(
    tx: Sql,
    user: User,
    kind: AccountNoticeKind,
    pageLocale: Locale,
    phone?: string,
  ): Promise<void> {
    const n = accountNotice(messageLocale(user.locale, pageLocale), kind, phone ? maskAddress(phone) : '');
    const url = this.accountUrl;
    if (user.userEmail) {
      await this.deps.delivery.email(user.userEmail, n.subject, `${n.what}\n${n.tail}\n${url}`, {
        tx,
        kind,
        html: `<p>${mailEscape(n.what)}</p><p>${mailEscape(n.tail)}</p><p><a href="${mailEscape(url)}">${mailEscape(url)}</a></p>`,
      });
    } else if (user.phoneNumber && user.phoneVerified) {
      await this.deps.delivery.sms(user.phoneNumber, `${n.what} ${n.tail}`, { tx, kind });
    }
  }

  /** How a refused current password on this page is recorded: a sign-in failure of the account client. */
  private audit(req: IncomingMessage, s: SignedIn): LoginAudit {
    return { clientId: accountClientId(s.user.instanceId), method: 'account_page', source: sourceOf(req) };
  }

  /** Whether an enrolment of the user waits for its first code (started within the last 30 minutes). */
  private async pendingEnrolment(userId: string): Promise<boolean> {
    const row = await this.deps.sql.one<{ n: number }>(
      /* unscoped: the signed-in user's own rows */
      `SELECT 1 AS n FROM user_authenticators
        WHERE user_id = $1 AND type = 'totp' AND confirmed_at IS NULL AND created_at > $2 LIMIT 1`,
      [userId, new Date(this.deps.mfa.clock().getTime() - 30 * 60_000)],
    );
    return !!row;
  }

  /** The person's passkeys as the page lists them (dates in UTC, never a key). */
  private async passkeyList(userId: string): Promise<NonNullable<AccountView['passkeys']>> {
    const at = (d: Date) => d.toISOString().slice(0, 16).replace('T', ' ');
    return (await this.deps.passkeys.list(userId)).map((k) => ({
      id: k.id,
      name: k.name,
      createdAt: at(k.createdAt).slice(0, 10),
      lastUsedAt: k.lastUsedAt ? at(k.lastUsedAt) : null,
    }));
  }

  /**
   * `passkey_options` (the page's script): the WebAuthn creation options of a new passkey, JSON, the challenge
   * bound to this session (used once, 5 minutes). Adding a factor follows the app's enrolment rule: a sign-in within
   * 5 minutes or the current password; and a person who already has a second factor needs a session that used it
   * (a password alone must not add a factor its holder controls).
   */
  private async passkeyOptions(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const json = (status: number, body: object) => {
      res.statusCode = status;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.end(JSON.stringify(body));
    };
    const view = await this.viewOf(s.user);
    const hasFactor = !!view.appSince || (await this.deps.passkeys.list(s.user.id)).length > 0;
    if (hasFactor && s.acr !== ACR_MFA)
      return json(403, { error: accountErrorText(locale, 'passkeyNeedMfa') });
    const password = one(params, 'current_password') ?? '';
    if (!(await this.recentOrPassword(req, s, password))) {
      return json(403, { error: accountErrorText(locale, password ? 'currentWrong' : 'recent') });
    }
    const options = await this.deps.passkeys.registrationOptions(
      {
        id: s.user.id,
        instanceId: s.user.instanceId,
        label: accountLabel(s.user) ?? s.user.id,
        name: s.user.name,
      },
      accountBinding(s.sessionId),
    );
    return json(200, { publicKey: options });
  }

  /** `passkey_register`: the browser's answer to this session's creation options (`credential`), named `name`. */
  private async passkeyRegister(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const fail = (m: AccountError) =>
      this.show(req, res, s, locale, ui, { status: 400, error: { form: 'passkeys', messages: [m] } });
    const name = (one(params, 'name') ?? '').trim();
    if (name.length > 100 || CONTROL.test(name)) return fail('passkeyName');
    const response = parseCredential<RegistrationResponseJSON>(one(params, 'credential'));
    if (!response) return fail('passkeyFailed');
    const added = await this.deps.passkeys.register(s.user, accountBinding(s.sessionId), response, name);
    if (typeof added === 'string') return fail(passkeyAccountError(added));
    this.event(req, s.user, 'mfa.enrolled', 'webauthn');
    return this.redirect(res, this.selfHref(ui, 'passkeyAdded'));
  }

  private async renamePasskey(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const fail = (m: AccountError) =>
      this.show(req, res, s, locale, ui, { status: 400, error: { form: 'passkeys', messages: [m] } });
    const name = (one(params, 'name') ?? '').trim();
    if (!name || name.length > 100 || CONTROL.test(name)) return fail('passkeyName');
    if (!(await this.deps.passkeys.rename(s.user.id, one(params, 'passkey') ?? '', name)))
      return fail('passkeyNotFound');
    return this.redirect(res, this.selfHref(ui, 'passkeyRenamed'));
  }

  /**
   * `remove_passkey` (`passkey`): the app's removal rule (a session that used a second factor, a sign-in within 5
   * minutes or the password), a notice e-mail through the outbox in the same transaction, an `mfa.removed` event.
   */
  private async removePasskey(
    req: IncomingMessage,
    res: ServerResponse,
    s: SignedIn,
    locale: Locale,
    ui: string | undefined,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const fail = (m: AccountError) =>
      this.show(req, res, s, locale, ui, { status: 400, error: { form: 'passkeys', messages: [m] } });
    if (s.acr !== ACR_MFA) return fail('passkeyNeedMfa');
    if (!(await this.recentOrPassword(req, s, one(params, 'current_password') ?? ''))) {
      return fail(one(params, 'current_password') ? 'currentWrong' : 'recent');
    }
    const removed = await this.deps.sql.transaction(async (tx) => {
      const name = await this.deps.passkeys.remove(tx, s.user.id, one(params, 'passkey') ?? '');
      if (name !== undefined && s.user.userEmail) {
        const what = `The passkey “${name}” was removed from your account from the account page.`;
        const tail = 'If it was not you, reset your password now and contact your administrator.';
        await this.deps.delivery.email(
          s.user.userEmail,
          'A passkey was removed',
          `${what}\n${tail}\n${this.accountUrl}`,
          {
            tx,
            kind: 'passkey-removed',
            html: `<p>${mailEscape(what)}</p><p>${mailEscape(tail)}</p><p><a href="${mailEscape(this.accountUrl)}">${mailEscape(this.accountUrl)}</a></p>`,
          },
        );
      }
      return name;
    });
    if (removed === undefined) return fail('passkeyNotFound');
    this.event(req, s.user, 'mfa.removed', 'webauthn');
    return this.redirect(res, this.selfHref(ui, 'passkeyRemoved'));
  }

  /** `mfa.enrolled` or `mfa.removed` of the person themself on the account page. */
  private event(
    req: IncomingMessage,
    user: User,
    type: 'mfa.enrolled' | 'mfa.removed',
    authenticatorType: 'totp' | 'webauthn' = 'totp',
  ): void {
    const source = sourceOf(req);
    this.deps.events.record({
      type,
      instanceId: user.instanceId,
      tenantId: user.tenantId,
      actor: { type: 'user', id: user.id },
      userId: user.id,
      ip: source.ip,
      userAgent: source.userAgent,
      details: { method: 'account_page', authenticator_type: authenticatorType },
    });
  }

  private redirect(res: ServerResponse, location: string, status = 303): void {
    res.statusCode = status;
    res.setHeader('Location', location);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.end();
  }

  private errorPage(res: ServerResponse, locale: Locale, status: number, error: AccountError): void {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = status;
    res.end(accountErrorPage({ locale, nonce, error }));
  }
}

/** The account page's error for a refused passkey registration. */
function passkeyAccountError(reason: PasskeyFailure): AccountError {
  if (reason === 'duplicate') return 'passkeyDuplicate';
  if (reason === 'too_many') return 'passkeyTooMany';
  return 'passkeyFailed';
}

function webUrl(v: string, max: number): boolean {
  if (v.length > max) return false;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}
