import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Sql } from '@gatehouse/db';
import { BodyError, one, parseParams, readBody } from '../oidc/request-body.js';
import { LoginError, type PasswordLogin } from '../oidc/password-login.js';
import type { OidcData } from '../oidc/oidc-data.js';
import type { InstanceSettings, SigninFailureReason } from '@gatehouse/identity-data';
import {
  accountLabel,
  consentPage,
  errorPage,
  forgotPage,
  INTERACTION_PATH,
  loginPage,
  pageErrorText,
  pageHeaders,
  passwordRuleTexts,
  type PageError,
  pickLocale,
  otpPage,
  signupPage,
  mfaPage,
  enrolPage,
  recoveryCodesPage,
  type MfaError,
  type PasskeyError,
  type ConsentScope,
  type LoginPageInput,
  type Locale,
  type SignupField,
  type SignupProblem,
} from './pages.js';
import { ROUTES, userRbacScopes } from '../oidc/provider.js';
import { EMAIL, type ForgotPassword } from '../tickets/forgot-password.js';
import type { OneTimeCodes } from '../passwordless/one-time-codes.js';
import { LINK_LOGIN_COOKIE, OTP_GRANT, PasswordlessStart } from '../passwordless/passwordless.js';
import { userMaySignInThrough } from '../oidc/sign-in-policy.js';
import { allowsSignup, SignupError, sourceAddress, type Signup } from '../signup/signup.js';
import { cookieValue, sameSecret } from './cookies.js';
import { sourceOf, type AuthEvents } from '../events/auth-events.js';
import {
  authContext,
  mfaNeed,
  type FactorCheck,
  type FactorKind,
  type FirstFactor,
  type SecondFactors,
} from '../mfa/second-factors.js';
import { totpUri } from '../mfa/totp.js';
import {
  parseCredential,
  passkeyContext,
  usedPasskey,
  type PasskeyFailure,
  type Passkeys,
} from '../mfa/passkeys.js';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { asksForMfa } from '../oidc/config/interactions.js';
import QRCode from 'qrcode';

const CSRF_COOKIE = 'gh.csrf';

interface InteractionDeps {
  provider: () => Provider;
  login: PasswordLogin;
  data: OidcData;
  sql: Sql;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  signup: Signup;
  passwordless: PasswordlessStart;
  codes: OneTimeCodes;
  forgot: ForgotPassword;
  events: AuthEvents;
  mfa: SecondFactors;
  passkeys: Passkeys;
}

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/** What a page says for a refused passkey. */
function passkeyErrorOf(reason: PasskeyFailure): PasskeyError {
  if (reason === 'locked') return 'locked';
  if (reason === 'unknown_credential') return 'unknown';
  return 'failed';
}

/** What the second-step page says for a refused factor. */
function mfaErrorOf(checked: Exclude<FactorCheck, 'ok'>, kind: FactorKind): MfaError {
  if (checked === 'locked') return 'locked';
  if (checked === 'reused_code') return kind === 'totp' ? 'reused' : 'recoveryReused';
  return 'wrong';
}

/**
 * The interaction pages of the authorization endpoint (oidc-provider's interaction API): `GET /interaction/:uid`
 * shows what the provider's prompt asks for (login or consent), `POST /interaction/:uid/login` signs the user in
 * (the password grant's rules: lockout per account and address, blocked users, tenants), `POST
 * /interaction/:uid/consent` records the decision as a grant (`allow`) or ends the request with `access_denied`
 * (`deny`). Every form carries a CSRF token matched against a SameSite=Strict cookie (double submit).
 */
export class InteractionHandler {
  constructor(private readonly deps: InteractionDeps) {}

  /** Paths under INTERACTION_PATH; true when handled. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const [, , uid, action] = path.split('/');
    if (!uid || !/^[\w-]{1,64}$/.test(uid) || path.split('/').length > 4) {
      return this.error(res, this.fallbackLocale(req), 404, 'notFound');
    }
    const method = req.method ?? 'GET';
    if (!action && method === 'GET') return this.show(req, res, uid);
    if (action === 'signup' && method === 'GET') return this.signupForm(req, res, uid);
    if (action === 'signup' && method === 'POST') return this.submit(req, res, uid, 'signup');
    if (action === 'otp' && method === 'GET') return this.otpForm(req, res, uid);
    if (action === 'otp' && method === 'POST') return this.submit(req, res, uid, 'otp');
    if (action === 'forgot' && method === 'GET') return this.forgotForm(req, res, uid);
    if (action === 'forgot' && method === 'POST') return this.submit(req, res, uid, 'forgot');
    if (action === 'recovery' && method === 'GET') return this.recoveryForm(req, res, uid);
    if ((action === 'mfa' || action === 'enrol') && method === 'POST')
      return this.submit(req, res, uid, action);
    if ((action === 'passkey' || action === 'passkey-options') && method === 'POST')
      return this.submit(req, res, uid, action);
    if ((action === 'login' || action === 'consent' || action === 'switch') && method === 'POST')
      return this.submit(req, res, uid, action);
    res.setHeader(
      'Allow',
      action === 'signup' || action === 'otp' || action === 'forgot'
        ? 'GET, POST'
        : action === 'recovery'
          ? 'GET'
          : action
            ? 'POST'
            : 'GET',
    );
    return this.error(res, this.fallbackLocale(req), 405, 'method');
  }

  /** The language of a page shown before the interaction (and its client's languages) is known. */
  private fallbackLocale(req: IncomingMessage): Locale {
    return pickLocale(undefined, req.headers['accept-language']);
  }

  private async details(req: IncomingMessage, res: ServerResponse) {
    try {
      return await this.deps.provider().interactionDetails(req, res);
    } catch {
      return undefined;
    }
  }

  /** The page language: ui_locales, then Accept-Language, among the client's instance's supported_locales. */
  private async localeOf(req: IncomingMessage, params: Record<string, unknown> | undefined): Promise<Locale> {
    const ui = typeof params?.ui_locales === 'string' ? params.ui_locales : undefined;
    const supported = await this.deps.data.supportedLocalesOfClient(String(params?.client_id ?? ''));
    return pickLocale(ui, req.headers['accept-language'], supported);
  }

  private async show(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const details = await this.details(req, res);
    if (!details || details.uid !== uid) {
      return this.error(res, this.fallbackLocale(req), 400, 'expired');
    }
    const locale = await this.localeOf(req, details.params);
    const csrf = randomBytes(24).toString('base64url');
    this.setCsrf(res, uid, csrf);
    if (details.prompt.name === 'login') {
      // a passwordless link's ticket (cookie) signs its user in at its client, once
      const linked = await this.deps.passwordless.linkLogin(
        cookieValue(req, LINK_LOGIN_COOKIE),
        String(details.params.client_id),
      );
      const user = linked ? await this.deps.data.findUserById(linked) : undefined;
      if (user && !user.isBlocked) {
        this.deps.events.signin({
          instanceId: user.instanceId,
          tenantId: user.tenantId,
          userId: user.id,
          clientId: String(details.params.client_id),
          method: 'link',
          source: sourceOf(req),
        });
        res.setHeader(
          'Set-Cookie',
          `${LINK_LOGIN_COOKIE}=; Path=/interaction; HttpOnly; SameSite=Lax; Max-Age=0`,
        );
        await this.finishLogin(req, res, user.id, 'otp');
        return;
      }
      return this.loginForm(req, res, details, locale, csrf);
    }
    if (details.prompt.name === 'mfa') return this.mfaStep(req, res, details, locale, csrf);
    if (details.prompt.name === 'consent') return this.consentForm(res, details, locale, csrf);
    return this.error(res, locale, 400, 'cannotContinue');
  }

  /** The interaction `uid` waiting for a login, or an error page (undefined). */
  private async loginStep(req: IncomingMessage, res: ServerResponse, uid: string) {
    const details = await this.details(req, res);
    if (!details || details.uid !== uid || details.prompt.name !== 'login') {
      this.error(res, this.fallbackLocale(req), 400, 'expired');
      return undefined;
    }
    return { details, locale: await this.localeOf(req, details.params) };
  }

  /** The CSRF cookie of an interaction's forms (double submit: the forms carry the same value). */
  private setCsrf(res: ServerResponse, uid: string, csrf: string): void {
    res.setHeader(
      'Set-Cookie',
      `${CSRF_COOKIE}=${csrf}; Path=${INTERACTION_PATH}/${uid}; HttpOnly; SameSite=Strict; Max-Age=3600`,
    );
  }

  /**
   * Ends the login prompt for `accountId` signed in with its first factor (`amr` pwd or otp, the one-factor acr;
   * the provider redirects back to the authorization request, whose `mfa` prompt asks for a second factor when
   * this sign-in needs one).
   */
  private async finishLogin(
    req: IncomingMessage,
    res: ServerResponse,
    accountId: string,
    first: FirstFactor | { amr: string[]; acr: string },
  ): Promise<void> {
    const context = typeof first === 'string' ? authContext([first], false) : first;
    await this.deps
      .provider()
      .interactionFinished(
        req,
        res,
        { login: { accountId, remember: true, ...context } },
        { mergeWithLastSubmission: false },
      );
  }

  /** The login result of a sign-in completed by a second factor: the session's first factor, plus otp and mfa. */
  private mfaLogin(details: Details) {
    const session = details.session as { accountId?: string; amr?: string[] } | undefined;
    return {
      login: {
        accountId: String(session?.accountId),
        remember: true,
        ...authContext(session?.amr?.length ? session.amr : ['pwd'], true),
      },
    };
  }

  /** What the `mfa` prompt of this interaction needs now: the second factor, an enrolment, or nothing. */
  private async mfaNeedOf(details: Details) {
    return (await this.mfaFactorsOf(details)).need;
  }

  /**
   * The `mfa` prompt's need, and the factors the page may offer: the app (and its recovery codes), a passkey
   * (not when the session's own sign-in used one: the same key is not its second factor). A sign-in whose only
   * second factor is the passkey it already used enrols an app.
   */
  private async mfaFactorsOf(details: Details) {
    const accountId = details.session?.accountId;
    if (!accountId) return { need: undefined, app: false, passkey: false };
    const state = await this.deps.mfa.state(String(details.params.client_id), accountId);
    let need = mfaNeed(state, asksForMfa(details.params));
    const amr = (details.session as { amr?: string[] } | undefined)?.amr;
    const passkey = !!state.passkeys && !usedPasskey(amr);
    if (need === 'verify' && !state.totp && !passkey) need = 'enrol';
    return { need, app: state.totp, passkey };
  }

  /** The `mfa` prompt: the second-factor form, or the enrolment page; nothing needed any more: on. */
  private async mfaStep(
    req: IncomingMessage,
    res: ServerResponse,
    details: Details,
    locale: Locale,
    csrf: string,
  ): Promise<void> {
    const need = await this.mfaNeedOf(details);
    if (need === 'verify') return this.renderMfa(res, details, locale, csrf, false);
    if (need === 'enrol') return this.renderEnrol(res, details, locale, csrf);
    // the session's sign-in as it is (its own acr and amr)
    const session = details.session as { accountId?: string; acr?: string; amr?: string[] } | undefined;
    await this.deps.provider().interactionFinished(
      req,
      res,
      {
        login: {
          accountId: String(session?.accountId),
          remember: true,
          acr: session?.acr,
          amr: session?.amr,
        },
      },
      { mergeWithLastSubmission: false },
    );
  }

  /** GET /interaction/:uid/recovery: the second step with a recovery code. */
  private async recoveryForm(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const details = await this.details(req, res);
    if (!details || details.uid !== uid || details.prompt.name !== 'mfa') {
      return this.error(res, this.fallbackLocale(req), 400, 'expired');
    }
    const locale = await this.localeOf(req, details.params);
    if ((await this.mfaNeedOf(details)) !== 'verify') return this.error(res, locale, 400, 'cannotContinue');
    const csrf = cookieValue(req, CSRF_COOKIE) ?? randomBytes(24).toString('base64url');
    this.setCsrf(res, uid, csrf);
    await this.renderMfa(res, details, locale, csrf, true);
  }

  private async renderMfa(
    res: ServerResponse,
    details: Details,
    locale: Locale,
    csrf: string,
    recovery: boolean,
    extra: { status?: number; error?: MfaError; passkeyError?: PasskeyError } = {},
  ): Promise<void> {
    const { app, passkey } = await this.mfaFactorsOf(details);
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params), { passkeys: passkey && !recovery });
    res.statusCode = extra.status ?? 200;
    res.end(
      mfaPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/mfa`,
        csrf,
        recovery,
        switchHref: recovery
          ? `${INTERACTION_PATH}/${details.uid}`
          : `${INTERACTION_PATH}/${details.uid}/recovery`,
        error: extra.error,
        app,
        passkey: passkey
          ? {
              action: `${INTERACTION_PATH}/${details.uid}/passkey`,
              optionsUrl: `${INTERACTION_PATH}/${details.uid}/passkey-options`,
              error: extra.passkeyError,
            }
          : undefined,
      }),
    );
  }

  private async renderEnrol(
    res: ServerResponse,
    details: Details,
    locale: Locale,
    csrf: string,
    extra: { status?: number; error?: MfaError } = {},
  ): Promise<void> {
    const user = await this.deps.data.findUserById(String(details.session?.accountId));
    if (!user) return this.error(res, locale, 400, 'expired');
    const { secret } = await this.deps.mfa.startEnrolment(user);
    const label = user.userEmail ?? user.userName ?? user.phoneNumber ?? user.id;
    const qrSvg = await QRCode.toString(totpUri(this.deps.mfa.appIssuer, label, secret), {
      type: 'svg',
      margin: 1,
      errorCorrectionLevel: 'M',
    });
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params));
    res.statusCode = extra.status ?? 200;
    res.end(
      enrolPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/enrol`,
        csrf,
        clientName: await this.clientName(details.params.client_id),
        qrSvg,
        secret,
        error: extra.error,
      }),
    );
  }

  /** POST /interaction/:uid/mfa: the app's code (`otp`) or a recovery code (`recovery_code`). */
  private async mfaSubmit(
    req: IncomingMessage,
    res: ServerResponse,
    details: Details,
    locale: Locale,
    csrf: string,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    if ((await this.mfaNeedOf(details)) !== 'verify') return this.error(res, locale, 400, 'cannotContinue');
    const user = await this.deps.data.findUserById(String(details.session?.accountId));
    if (!user || user.isBlocked) return this.error(res, locale, 400, 'expired');
    const recovery = one(params, 'recovery_code');
    const kind: FactorKind = recovery !== undefined ? 'recovery_code' : 'totp';
    const code = recovery ?? one(params, 'otp') ?? '';
    const checked = await this.deps.mfa.check(user.id, kind, code);
    if (checked !== 'ok') {
      this.deps.events.mfaFailure(
        {
          instanceId: user.instanceId,
          tenantId: user.tenantId,
          userId: user.id,
          clientId: String(details.params.client_id),
          method: 'mfa_page',
          source: sourceOf(req),
        },
        checked,
        kind,
      );
      return this.renderMfa(res, details, locale, csrf, kind === 'recovery_code', {
        status: 401,
        error: mfaErrorOf(checked, kind),
      });
    }
    await this.deps.provider().interactionFinished(req, res, this.mfaLogin(details), {
      mergeWithLastSubmission: false,
    });
  }

  /** POST /interaction/:uid/enrol: the app's first code confirms the enrolment; the recovery codes are shown once. */
  private async enrolSubmit(
    req: IncomingMessage,
    res: ServerResponse,
    details: Details,
    locale: Locale,
    csrf: string,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    // only a sign-in that must enrol may: a user with an authenticator is never given a new one here
    if ((await this.mfaNeedOf(details)) !== 'enrol') return this.error(res, locale, 400, 'cannotContinue');
    const user = await this.deps.data.findUserById(String(details.session?.accountId));
    if (!user || user.isBlocked) return this.error(res, locale, 400, 'expired');
    const pending = await this.deps.mfa.startEnrolment(user);
    const confirmed = await this.deps.mfa.confirmEnrolment(user, pending.id, one(params, 'otp') ?? '');
    if (confirmed === 'wrong_code') {
      return this.renderEnrol(res, details, locale, csrf, { status: 401, error: 'enrolWrong' });
    }
    const clientId = String(details.params.client_id);
    this.deps.events.mfaEnrolled({
      instanceId: user.instanceId,
      tenantId: user.tenantId,
      userId: user.id,
      clientId,
      method: 'enrol_page',
      source: sourceOf(req),
    });
    const returnTo = await this.deps.provider().interactionResult(req, res, this.mfaLogin(details), {
      mergeWithLastSubmission: false,
    });
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = 200;
    res.end(recoveryCodesPage({ locale, nonce, codes: confirmed.codes, continueHref: returnTo }));
  }

  /**
   * POST /interaction/:uid/passkey-options (the page's script): the WebAuthn assertion options, JSON. On the login
   * prompt, for any discoverable credential (passwordless); on the mfa prompt, for the signed-in user's passkeys.
   * The challenge is bound to this interaction, used once, 5 minutes.
   */
  private async passkeyOptions(res: ServerResponse, details: Details, locale: Locale): Promise<void> {
    const json = (status: number, body: object) => {
      res.statusCode = status;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.end(JSON.stringify(body));
    };
    if (details.prompt.name === 'login') {
      const client = await this.deps.data.findClient(String(details.params.client_id));
      if (!client) return json(400, { error: pageErrorText(locale, 'unknownApp') });
      return json(200, {
        publicKey: await this.deps.passkeys.authenticationOptions(client.instanceId, details.uid),
      });
    }
    if (details.prompt.name === 'mfa' && (await this.mfaFactorsOf(details)).passkey) {
      const user = await this.deps.data.findUserById(String(details.session?.accountId));
      if (!user || user.isBlocked) return json(400, { error: pageErrorText(locale, 'expired') });
      return json(200, {
        publicKey: await this.deps.passkeys.authenticationOptions(user.instanceId, details.uid, user.id),
      });
    }
    return json(400, { error: pageErrorText(locale, 'cannotContinue') });
  }

  /**
   * POST /interaction/:uid/passkey on the login prompt: a passwordless sign-in with a discoverable credential. The
   * credential's owner must be a user this client signs in (its instance, its tenant), not blocked; its failures
   * count against that account's second-factor budget (mfa_failed). amr/acr: passkeyContext (with user
   * verification the sign-in is multi-factor).
   */
  private async passkeyLogin(
    req: IncomingMessage,
    res: ServerResponse,
    details: Details,
    locale: Locale,
    csrf: string,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const client = await this.deps.data.findClient(String(details.params.client_id));
    if (!client) return this.error(res, locale, 400, 'unknownApp');
    const source = sourceOf(req);
    const response = parseCredential<AuthenticationResponseJSON>(one(params, 'credential'));
    const checked = response
      ? await this.deps.passkeys.authenticate(client.instanceId, details.uid, response)
      : { ok: false as const, reason: 'invalid' as const, userId: undefined };
    const userId = checked.ok ? checked.use.userId : checked.userId;
    const user = userId ? await this.deps.data.findUserById(userId) : undefined;
    const allowed = !!user && userMaySignInThrough(user, client);
    const audit = {
      instanceId: client.instanceId,
      tenantId: allowed ? user.tenantId : client.tenantId,
      userId: allowed ? user.id : null,
      clientId: client.id,
      method: 'passkey',
      source,
    };
    let reason: SigninFailureReason | undefined;
    let shown: PasskeyError = 'failed';
    if (!checked.ok) {
      if (allowed) this.deps.events.mfaFailure({ ...audit, userId: user.id }, checked.reason, 'webauthn');
      reason = allowed ? 'mfa_failed' : 'unknown_user';
      shown = passkeyErrorOf(checked.reason);
    } else if (!user) reason = 'unknown_user';
    else if (user.isBlocked) reason = 'blocked';
    else if (!allowed) reason = 'tenant_mismatch';
    this.deps.events.signin({ ...audit, reason, details: { factor: 'webauthn' } });
    if (reason || !checked.ok || !user) {
      // a passkey of a user this client does not sign in is "not known here", as an unknown one
      if (checked.ok) shown = reason === 'blocked' ? 'failed' : 'unknown';
      return this.loginForm(req, res, details, locale, csrf, { status: 401, passkeyError: shown });
    }
    await this.finishLogin(req, res, user.id, passkeyContext(checked.use));
  }

  /** POST /interaction/:uid/passkey on the mfa prompt: the signed-in user's passkey as the second factor. */
  private async passkeySecondFactor(
    req: IncomingMessage,
    res: ServerResponse,
    details: Details,
    locale: Locale,
    csrf: string,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const factors = await this.mfaFactorsOf(details);
    if (factors.need !== 'verify' || !factors.passkey) return this.error(res, locale, 400, 'cannotContinue');
    const user = await this.deps.data.findUserById(String(details.session?.accountId));
    if (!user || user.isBlocked) return this.error(res, locale, 400, 'expired');
    const response = parseCredential<AuthenticationResponseJSON>(one(params, 'credential'));
    const checked = response
      ? await this.deps.passkeys.authenticate(user.instanceId, details.uid, response, user.id)
      : ({ ok: false, reason: 'invalid' } as const);
    if (!checked.ok) {
      this.deps.events.mfaFailure(
        {
          instanceId: user.instanceId,
          tenantId: user.tenantId,
          userId: user.id,
          clientId: String(details.params.client_id),
          method: 'mfa_page',
          source: sourceOf(req),
        },
        checked.reason,
        'webauthn',
      );
      return this.renderMfa(res, details, locale, csrf, false, {
        status: 401,
        passkeyError: passkeyErrorOf(checked.reason),
      });
    }
    const session = details.session as { accountId?: string; amr?: string[] } | undefined;
    await this.deps.provider().interactionFinished(
      req,
      res,
      {
        login: {
          accountId: user.id,
          remember: true,
          ...passkeyContext(checked.use, session?.amr?.length ? session.amr : ['pwd']),
        },
      },
      { mergeWithLastSubmission: false },
    );
  }

  private async clientName(clientId: unknown): Promise<string> {
    const client = typeof clientId === 'string' ? await this.deps.data.findClient(clientId) : undefined;
    return client?.clientName ?? 'the application';
  }

  private async otpHref(details: Awaited<ReturnType<Provider['interactionDetails']>>) {
    const client = await this.deps.data.findClient(String(details.params.client_id));
    return client?.grantTypes.includes(OTP_GRANT) ? `${INTERACTION_PATH}/${details.uid}/otp` : undefined;
  }

  private async otpForm(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const step = await this.loginStep(req, res, uid);
    if (!step) return;
    const { details, locale } = step;
    if (!(await this.otpHref(details))) return this.error(res, locale, 403, 'noCodes');
    const csrf = cookieValue(req, CSRF_COOKIE) ?? randomBytes(24).toString('base64url');
    this.setCsrf(res, uid, csrf);
    this.renderOtp(res, details, locale, csrf);
  }

  private renderOtp(
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    extra: { status?: number; username?: string; error?: string } = {},
  ): void {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params));
    res.statusCode = extra.status ?? 200;
    res.end(
      otpPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/otp`,
        csrf,
        username: extra.username,
        error: extra.error,
      }),
    );
  }

  /** The code form: without `otp` it sends a code to `username` (or to nobody, silently); with it, signs in. */
  private async otp(
    req: IncomingMessage,
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const client = await this.deps.data.findClient(String(details.params.client_id));
    if (!client || !client.grantTypes.includes(OTP_GRANT)) {
      return this.error(res, locale, 403, 'noCodes');
    }
    const username = (one(params, 'username') ?? '').trim();
    const channel = PasswordlessStart.channelOf(username);
    if (!channel) {
      return this.renderOtp(res, details, locale, csrf, {
        status: 400,
        error: 'badUsername',
      });
    }
    const code = one(params, 'otp');
    const source = sourceOf(req);
    if (code === undefined) {
      await this.deps.passwordless.sendCode(client, username, channel, undefined, source);
      return this.renderOtp(res, details, locale, csrf, { username });
    }
    const user = await this.deps.data.findUserByLogin(client.instanceId, username);
    const audit = {
      instanceId: client.instanceId,
      tenantId: user && userMaySignInThrough(user, client) ? user.tenantId : client.tenantId,
      userId: user && userMaySignInThrough(user, client) ? user.id : null,
      clientId: client.id,
      method: 'otp_page',
      source,
    };
    let reason: SigninFailureReason | undefined;
    if (!user) reason = 'unknown_user';
    else if (user.isBlocked) reason = 'blocked';
    else if (!userMaySignInThrough(user, client)) reason = 'tenant_mismatch';
    else {
      const checked = await this.deps.codes.check(user.id, client.id, code.trim());
      if (checked !== 'ok') {
        this.deps.events.otpFailure({ ...audit, userId: user.id }, checked);
        reason = 'wrong_code';
      }
    }
    this.deps.events.signin({ ...audit, reason });
    if (reason || !user)
      return this.renderOtp(res, details, locale, csrf, { status: 401, username, error: 'wrong' });
    await this.finishLogin(req, res, user.id, 'otp');
  }

  private formTargets(params: Record<string, unknown>): string[] {
    try {
      return typeof params.redirect_uri === 'string' ? [new URL(params.redirect_uri).origin] : [];
    } catch {
      return [];
    }
  }

  private async loginForm(
    _req: IncomingMessage,
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    extra: {
      status?: number;
      error?: 'invalid' | 'blocked';
      username?: string;
      notice?: LoginPageInput['notice'];
      passkeyError?: PasskeyError;
    } = {},
  ): Promise<void> {
    // one look-up of the client for its name and the links it allows (the same row each time)
    const clientId = details.params.client_id;
    const client = typeof clientId === 'string' ? await this.deps.data.findClient(clientId) : undefined;
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params), { passkeys: true });
    res.statusCode = extra.status ?? 200;
    res.end(
      loginPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/login`,
        csrf,
        clientName: client?.clientName ?? 'the application',
        error: extra.error,
        username: extra.username,
        notice: extra.notice,
        signupHref: client && allowsSignup(client) ? `${INTERACTION_PATH}/${details.uid}/signup` : undefined,
        otpHref: client?.grantTypes.includes(OTP_GRANT)
          ? `${INTERACTION_PATH}/${details.uid}/otp`
          : undefined,
        forgotHref: `${INTERACTION_PATH}/${details.uid}/forgot`,
        passkey: {
          action: `${INTERACTION_PATH}/${details.uid}/passkey`,
          optionsUrl: `${INTERACTION_PATH}/${details.uid}/passkey-options`,
          error: extra.passkeyError,
        },
      }),
    );
  }

  /**
   * What the consent page lists, and what an "allow" grants: the OIDC scopes asked for, and per API the scopes the
   * tokens will carry (for a user on an RBAC API: the client's grants that the user holds, as the token endpoint
   * computes them); the scopes of an API the user will not get are listed nowhere (and recorded as rejected).
   */
  private async consentScopes(details: Awaited<ReturnType<Provider['interactionDetails']>>) {
    const d = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const clientId = String(details.params.client_id);
    const accountId = details.session?.accountId;
    const apis: {
      identifier: string;
      name: string;
      scopes: ConsentScope[];
      withheld: string[];
    }[] = [];
    for (const [identifier, names] of Object.entries(d.missingResourceScopes ?? {})) {
      const described = await this.deps.sql.rows<{
        resource_name: string;
        scope_name: string | null;
        scope_description: string | null;
      }>(
        `SELECT r.resource_name, s.scope_name, s.scope_description FROM resources r
           JOIN clients c ON c.instance_id = r.instance_id
           LEFT JOIN scopes s ON s.resource_id = r.id AND s.scope_name = ANY($3::text[])
          WHERE c.id = $1 AND r.identifier_url = $2`,
        [clientId, identifier, names],
      );
      const effective = await userRbacScopes(this.deps.data, clientId, identifier, accountId);
      const granted = effective ? names.filter((n) => effective.has(n)) : names;
      apis.push({
        identifier,
        name: described[0]?.resource_name ?? identifier,
        scopes: granted.map((name) => ({
          name,
          description: described.find((x) => x.scope_name === name)?.scope_description,
        })),
        withheld: names.filter((n) => !granted.includes(n)),
      });
    }
    return { oidc: (d.missingOIDCScope ?? []).map((name) => ({ name })), apis };
  }

  private async consentForm(
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
  ): Promise<void> {
    const clientId = String(details.params.client_id);
    const { oidc, apis } = await this.consentScopes(details);
    const accountId = details.session?.accountId;
    const user = accountId ? await this.deps.data.findUserById(accountId) : undefined;
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params));
    res.statusCode = 200;
    res.end(
      consentPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/consent`,
        switchAction: `${INTERACTION_PATH}/${details.uid}/switch`,
        csrf,
        clientName: await this.clientName(clientId),
        account: user ? accountLabel(user) : undefined,
        scopes: oidc,
        apis,
      }),
    );
  }

  private async submit(
    req: IncomingMessage,
    res: ServerResponse,
    uid: string,
    action:
      | 'login'
      | 'consent'
      | 'signup'
      | 'otp'
      | 'forgot'
      | 'switch'
      | 'mfa'
      | 'enrol'
      | 'passkey'
      | 'passkey-options',
  ): Promise<void> {
    let params;
    try {
      params = parseParams(req, await readBody(req));
    } catch (err) {
      if (err instanceof BodyError) return this.error(res, this.fallbackLocale(req), err.status, 'badForm');
      throw err;
    }
    const details = await this.details(req, res);
    if (!details || details.uid !== uid) {
      return this.error(res, this.fallbackLocale(req), 400, 'expired');
    }
    const locale = await this.localeOf(req, details.params);
    const csrf = cookieValue(req, CSRF_COOKIE);
    if (!sameSecret(csrf, one(params, 'csrf'))) {
      return this.error(res, locale, 403, 'csrf');
    }
    if (action === 'login' || action === 'signup' || action === 'otp' || action === 'forgot') {
      if (details.prompt.name !== 'login') return this.error(res, locale, 400, 'noSignIn');
      if (action === 'signup') return this.signup(req, res, details, locale, csrf!, params);
      if (action === 'otp') return this.otp(req, res, details, locale, csrf!, params);
      if (action === 'forgot') return this.forgot(res, details, locale, csrf!, params);
      return this.login(req, res, details, locale, csrf!, params);
    }
    if (action === 'switch') return this.switchAccount(res, details);
    if (action === 'passkey-options') return this.passkeyOptions(res, details, locale);
    if (action === 'passkey') {
      if (details.prompt.name === 'login') return this.passkeyLogin(req, res, details, locale, csrf!, params);
      if (details.prompt.name === 'mfa')
        return this.passkeySecondFactor(req, res, details, locale, csrf!, params);
      return this.error(res, locale, 400, 'cannotContinue');
    }
    if (action === 'mfa' || action === 'enrol') {
      if (details.prompt.name !== 'mfa') return this.error(res, locale, 400, 'cannotContinue');
      if (action === 'mfa') return this.mfaSubmit(req, res, details, locale, csrf!, params);
      return this.enrolSubmit(req, res, details, locale, csrf!, params);
    }
    if (details.prompt.name !== 'consent') return this.error(res, locale, 400, 'noConsent');
    return this.consent(req, res, details, one(params, 'decision'));
  }

  private async login(
    req: IncomingMessage,
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const username = (one(params, 'username') ?? '').trim();
    const password = one(params, 'password') ?? '';
    const client = await this.deps.data.findClient(String(details.params.client_id));
    if (!client) return this.error(res, locale, 400, 'unknownApp');
    try {
      if (!username || !password) throw new LoginError('invalid_credentials');
      const user = await this.deps.login.authenticate(
        client.instanceId,
        username,
        password,
        client,
        this.sourceOf(req),
        { clientId: client.id, method: 'login_page', source: sourceOf(req) },
      );
      await this.finishLogin(req, res, user.id, 'pwd');
    } catch (err) {
      if (!(err instanceof LoginError)) throw err;
      await this.loginForm(req, res, details, locale, csrf, {
        status: 401,
        error: err.reason === 'blocked' ? 'blocked' : 'invalid',
        username,
      });
    }
  }

  private async signupForm(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const step = await this.loginStep(req, res, uid);
    if (!step) return;
    const { details, locale } = step;
    const client = await this.deps.data.findClient(String(details.params.client_id));
    if (!client || !allowsSignup(client)) return this.error(res, locale, 403, 'noSignup');
    const csrf = cookieValue(req, CSRF_COOKIE) ?? randomBytes(24).toString('base64url');
    this.setCsrf(res, uid, csrf);
    await this.renderSignup(res, details, locale, csrf, client.instanceId);
  }

  /** The instance's password rules in the page's language (shown before the first submit). */
  private async passwordRules(instanceId: string, locale: Locale): Promise<string[]> {
    const instance = await this.deps.sql.one<{ settings: InstanceSettings }>(
      `SELECT settings FROM instances WHERE id = $1`,
      [instanceId],
    );
    return passwordRuleTexts(locale, instance?.settings?.password_validators);
  }

  private async renderSignup(
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    instanceId: string,
    extra: {
      status?: number;
      problems?: { field?: SignupField; problem: SignupProblem }[];
      values?: { email?: string; phone?: string; name?: string };
    } = {},
  ): Promise<void> {
    const rules = await this.passwordRules(instanceId, locale);
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params));
    res.statusCode = extra.status ?? 200;
    res.end(
      signupPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/signup`,
        csrf,
        rules,
        problems: extra.problems,
        values: extra.values,
      }),
    );
  }

  private async signup(
    req: IncomingMessage,
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const client = await this.deps.data.findClient(String(details.params.client_id));
    if (!client) return this.error(res, locale, 400, 'unknownApp');
    const values = { email: one(params, 'email'), phone: one(params, 'phone'), name: one(params, 'name') };
    try {
      // A taken address is answered as a new one (no account oracle): both go to the sign-in form with the same
      // notice; the new account's owner signs in with the password just chosen, a taken e-mail's owner gets a
      // message saying someone tried.
      const created = await this.deps.signup.create(
        client,
        { ...values, password: one(params, 'password') },
        this.sourceOf(req),
        'notify',
      );
      this.deps.signup.recordSignup(
        client,
        sourceOf(req),
        created ? { userId: created.id } : { error: 'email_taken' },
      );
      const email = values.email?.trim().toLowerCase();
      await this.loginForm(req, res, details, locale, csrf, {
        username: email || values.phone?.trim(),
        notice: email ? { kind: 'signupSent', email } : { kind: 'signupPhoneDone' },
      });
    } catch (err) {
      if (!(err instanceof SignupError)) throw err;
      this.deps.signup.recordSignup(client, sourceOf(req), { error: err });
      if (!err.problem) return this.error(res, locale, err.status, 'noSignup');
      if (err.retryAfterSec !== undefined) res.setHeader('Retry-After', String(err.retryAfterSec));
      await this.renderSignup(res, details, locale, csrf, client.instanceId, {
        status: err.status,
        problems: [err.problem],
        values,
      });
    }
  }

  private async forgotForm(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const step = await this.loginStep(req, res, uid);
    if (!step) return;
    const csrf = cookieValue(req, CSRF_COOKIE) ?? randomBytes(24).toString('base64url');
    this.setCsrf(res, uid, csrf);
    this.renderForgot(res, step.details, step.locale, csrf);
  }

  private renderForgot(
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    extra: { status?: number; sent?: boolean; error?: 'badEmail'; email?: string } = {},
  ): void {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = extra.status ?? 200;
    res.end(
      forgotPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/forgot`,
        loginHref: `${INTERACTION_PATH}/${details.uid}`,
        csrf,
        ...extra,
      }),
    );
  }

  /** "Forgot password?": a link by e-mail when an account has the address; the same answer when none has. */
  private async forgot(
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    params: Record<string, string | string[]>,
  ): Promise<void> {
    const client = await this.deps.data.findClient(String(details.params.client_id));
    if (!client) return this.error(res, locale, 400, 'unknownApp');
    const email = (one(params, 'email') ?? '').trim();
    if (!EMAIL.test(email)) {
      return this.renderForgot(res, details, locale, csrf, { status: 400, error: 'badEmail', email });
    }
    await this.deps.forgot.request(client, email);
    this.renderForgot(res, details, locale, csrf, { sent: true });
  }

  /**
   * "Not you? Switch account": the browser's session ends (signed out here) and the same authorization request
   * starts again, so its sign-in page comes next; the consent asked for is not given.
   */
  private async switchAccount(
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
  ): Promise<void> {
    const provider = this.deps.provider();
    const sessionId = (details.session as { cookie?: string } | undefined)?.cookie;
    const session = sessionId ? await provider.Session.find(sessionId) : undefined;
    await session?.destroy();
    await details.destroy();
    const again = new URLSearchParams();
    for (const [k, v] of Object.entries(details.params)) {
      // a hint names the account being left
      if (typeof v === 'string' && k !== 'login_hint' && k !== 'id_token_hint') again.set(k, v);
    }
    res.statusCode = 303;
    res.setHeader('Location', `${ROUTES.authorization}?${again.toString()}`);
    res.setHeader('Cache-Control', 'no-store');
    res.end();
  }

  private async consent(
    req: IncomingMessage,
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    decision: string | undefined,
  ): Promise<void> {
    const provider = this.deps.provider();
    if (decision !== 'allow') {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the user denied the request' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const d = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const accountId = details.session?.accountId;
    const clientId = String(details.params.client_id);
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId });
    if (!grant) throw new Error('the grant of this interaction is gone');
    if (d.missingOIDCScope?.length) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims?.length) grant.addOIDCClaims(d.missingOIDCClaims);
    // what the page listed is granted; what the user would not get anyway (RBAC) is recorded as not granted
    for (const api of (await this.consentScopes(details)).apis) {
      if (api.scopes.length) grant.addResourceScope(api.identifier, api.scopes.map((x) => x.name).join(' '));
      if (api.withheld.length) grant.rejectResourceScope(api.identifier, api.withheld.join(' '));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /** The source address lockouts and sign-up limits count by: the rate limits' (TRUST_PROXY), never a raw header. */
  private sourceOf(req: IncomingMessage): string {
    return sourceAddress(req);
  }

  private error(res: ServerResponse, locale: Locale, status: number, error: PageError): void {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = status;
    res.end(errorPage({ locale, nonce, message: pageErrorText(locale, error) }));
  }
}
