import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Sql } from '@gatehouse/db';
import { supportedLocalesOfClient } from '@gatehouse/identity-data';
import { BodyError, one, parseParams, readBody } from '../oidc/request-body.js';
import { LoginError, type PasswordLogin } from '../oidc/password-login.js';
import type { OidcData } from '../oidc/oidc-data.js';
import {
  consentPage,
  errorPage,
  INTERACTION_PATH,
  loginPage,
  pageHeaders,
  pickLocale,
  otpPage,
  signupPage,
  type Locale,
} from './pages.js';
import type { OneTimeCodes } from '../passwordless/one-time-codes.js';
import { LINK_LOGIN_COOKIE, OTP_GRANT, PasswordlessStart } from '../passwordless/passwordless.js';
import { userMaySignInThrough } from '../oidc/sign-in-policy.js';
import { allowsSignup, SignupError, sourceAddress, type Signup } from '../signup/signup.js';
import { cookieValue, sameSecret } from './cookies.js';

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
    const locale = pickLocale(undefined, req.headers['accept-language']);
    const [, , uid, action] = path.split('/');
    if (!uid || !/^[\w-]{1,64}$/.test(uid) || path.split('/').length > 4) {
      return this.error(res, locale, 404, 'Not found');
    }
    const method = req.method ?? 'GET';
    if (!action && method === 'GET') return this.show(req, res, uid);
    if (action === 'signup' && method === 'GET') return this.signupForm(req, res, uid);
    if (action === 'signup' && method === 'POST') return this.submit(req, res, uid, 'signup');
    if (action === 'otp' && method === 'GET') return this.otpForm(req, res, uid);
    if (action === 'otp' && method === 'POST') return this.submit(req, res, uid, 'otp');
    if ((action === 'login' || action === 'consent') && method === 'POST')
      return this.submit(req, res, uid, action);
    res.setHeader('Allow', action === 'signup' || action === 'otp' ? 'GET, POST' : action ? 'POST' : 'GET');
    return this.error(res, locale, 405, 'Method not allowed');
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
    const supported = await supportedLocalesOfClient(this.deps.sql, String(params?.client_id ?? ''));
    return pickLocale(ui, req.headers['accept-language'], supported);
  }

  private async show(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const details = await this.details(req, res);
    const fallback = pickLocale(undefined, req.headers['accept-language']);
    if (!details || details.uid !== uid) {
      return this.error(res, fallback, 400, 'This sign-in request has expired or is not known.');
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
        res.setHeader(
          'Set-Cookie',
          `${LINK_LOGIN_COOKIE}=; Path=/interaction; HttpOnly; SameSite=Lax; Max-Age=0`,
        );
        await this.finishLogin(req, res, user.id);
        return;
      }
      return this.loginForm(req, res, details, locale, csrf);
    }
    if (details.prompt.name === 'consent') return this.consentForm(res, details, locale, csrf);
    return this.error(res, locale, 400, 'This request cannot continue here.');
  }

  /** The interaction `uid` waiting for a login, or an error page (undefined). */
  private async loginStep(req: IncomingMessage, res: ServerResponse, uid: string) {
    const details = await this.details(req, res);
    if (!details || details.uid !== uid || details.prompt.name !== 'login') {
      const fallback = pickLocale(undefined, req.headers['accept-language']);
      this.error(res, fallback, 400, 'This sign-in request has expired or is not known.');
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

  /** Ends the login prompt for `accountId` (the provider redirects back to the authorization request). */
  private async finishLogin(req: IncomingMessage, res: ServerResponse, accountId: string): Promise<void> {
    await this.deps
      .provider()
      .interactionFinished(
        req,
        res,
        { login: { accountId, remember: true } },
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
    if (!(await this.otpHref(details)))
      return this.error(res, locale, 403, 'This application does not allow codes.');
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
      return this.error(res, locale, 403, 'This application does not allow codes.');
    }
    const username = (one(params, 'username') ?? '').trim();
    const channel = PasswordlessStart.channelOf(username);
    if (!channel) {
      return this.renderOtp(res, details, locale, csrf, {
        status: 400,
        error: 'Give an e-mail address or a phone number (+976...).',
      });
    }
    const code = one(params, 'otp');
    if (code === undefined) {
      await this.deps.passwordless.sendCode(client, username, channel);
      return this.renderOtp(res, details, locale, csrf, { username });
    }
    const user = await this.deps.data.findUserByLogin(client.instanceId, username);
    const ok =
      user &&
      !user.isBlocked &&
      userMaySignInThrough(user, client) &&
      (await this.deps.codes.check(user.id, client.id, code.trim())) === 'ok';
    if (!ok || !user)
      return this.renderOtp(res, details, locale, csrf, { status: 401, username, error: 'wrong' });
    await this.finishLogin(req, res, user.id);
  }

  private async signupHref(details: Awaited<ReturnType<Provider['interactionDetails']>>) {
    const client = await this.deps.data.findClient(String(details.params.client_id));
    return client && allowsSignup(client) ? `${INTERACTION_PATH}/${details.uid}/signup` : undefined;
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
    extra: { status?: number; error?: 'invalid' | 'blocked'; username?: string } = {},
  ): Promise<void> {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params));
    res.statusCode = extra.status ?? 200;
    res.end(
      loginPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/login`,
        csrf,
        clientName: await this.clientName(details.params.client_id),
        error: extra.error,
        username: extra.username,
        signupHref: await this.signupHref(details),
        otpHref: await this.otpHref(details),
      }),
    );
  }

  private async consentForm(
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
  ): Promise<void> {
    const d = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const clientId = String(details.params.client_id);
    const scopes: { name: string; description?: string | null }[] = (d.missingOIDCScope ?? []).map(
      (name) => ({
        name,
      }),
    );
    for (const [identifier, names] of Object.entries(d.missingResourceScopes ?? {})) {
      const described = await this.deps.sql.rows<{ scope_name: string; scope_description: string | null }>(
        `SELECT s.scope_name, s.scope_description FROM scopes s
           JOIN resources r ON r.id = s.resource_id
           JOIN clients c ON c.instance_id = r.instance_id
          WHERE c.id = $1 AND r.identifier_url = $2 AND s.scope_name = ANY($3::text[])`,
        [clientId, identifier, names],
      );
      for (const name of names) {
        scopes.push({ name, description: described.find((x) => x.scope_name === name)?.scope_description });
      }
    }
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params));
    res.statusCode = 200;
    res.end(
      consentPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/consent`,
        csrf,
        clientName: await this.clientName(clientId),
        scopes,
      }),
    );
  }

  private async submit(
    req: IncomingMessage,
    res: ServerResponse,
    uid: string,
    action: 'login' | 'consent' | 'signup' | 'otp',
  ): Promise<void> {
    const fallback = pickLocale(undefined, req.headers['accept-language']);
    let params;
    try {
      params = parseParams(req, await readBody(req));
    } catch (err) {
      if (err instanceof BodyError) return this.error(res, fallback, err.status, err.message);
      throw err;
    }
    const details = await this.details(req, res);
    if (!details || details.uid !== uid) {
      return this.error(res, fallback, 400, 'This sign-in request has expired or is not known.');
    }
    const locale = await this.localeOf(req, details.params);
    const csrf = cookieValue(req, CSRF_COOKIE);
    if (!sameSecret(csrf, one(params, 'csrf'))) {
      return this.error(res, locale, 403, 'The form could not be verified. Go back and try again.');
    }
    if (action === 'login' || action === 'signup' || action === 'otp') {
      if (details.prompt.name !== 'login')
        return this.error(res, locale, 400, 'No sign-in is expected here.');
      if (action === 'signup') return this.signup(req, res, details, locale, csrf!, params);
      if (action === 'otp') return this.otp(req, res, details, locale, csrf!, params);
      return this.login(req, res, details, locale, csrf!, params);
    }
    if (details.prompt.name !== 'consent')
      return this.error(res, locale, 400, 'No consent is expected here.');
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
    if (!client) return this.error(res, locale, 400, 'The application of this request is not known.');
    try {
      if (!username || !password) throw new LoginError('invalid_credentials');
      const user = await this.deps.login.authenticate(
        client.instanceId,
        username,
        password,
        client,
        this.sourceOf(req),
      );
      await this.finishLogin(req, res, user.id);
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
    if (!client || !allowsSignup(client))
      return this.error(res, locale, 403, 'This application does not allow sign-up.');
    const csrf = cookieValue(req, CSRF_COOKIE) ?? randomBytes(24).toString('base64url');
    this.setCsrf(res, uid, csrf);
    this.renderSignup(res, details, locale, csrf);
  }

  private renderSignup(
    res: ServerResponse,
    details: Awaited<ReturnType<Provider['interactionDetails']>>,
    locale: Locale,
    csrf: string,
    extra: {
      status?: number;
      error?: string;
      values?: { email?: string; phone?: string; name?: string };
    } = {},
  ): void {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce, this.formTargets(details.params));
    res.statusCode = extra.status ?? 200;
    res.end(
      signupPage({
        locale,
        nonce,
        action: `${INTERACTION_PATH}/${details.uid}/signup`,
        csrf,
        error: extra.error,
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
    if (!client) return this.error(res, locale, 400, 'The application of this request is not known.');
    const values = { email: one(params, 'email'), phone: one(params, 'phone'), name: one(params, 'name') };
    try {
      const user = await this.deps.signup.create(
        client,
        { ...values, password: one(params, 'password') },
        this.sourceOf(req),
      );
      await this.finishLogin(req, res, user.id);
    } catch (err) {
      if (!(err instanceof SignupError)) throw err;
      this.renderSignup(res, details, locale, csrf, { status: err.status, error: err.message, values });
    }
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
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /** The source address lockouts and sign-up limits count by: the rate limits' (TRUST_PROXY), never a raw header. */
  private sourceOf(req: IncomingMessage): string {
    return sourceAddress(req);
  }

  private error(res: ServerResponse, locale: Locale, status: number, message: string): void {
    const nonce = randomBytes(16).toString('base64');
    pageHeaders(res, nonce);
    res.statusCode = status;
    res.end(errorPage({ locale, nonce, message }));
  }
}
