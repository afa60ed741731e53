import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { forbidden, serviceUnavailable, unauthorized } from '@gatehouse/errors';
import { IS_PUBLIC_KEY } from '@gatehouse/http';
import { CALLER_KEY, SCOPES_KEY } from './decorators.js';
import { TokenServerUnavailableError, TokenValidator, type CallerInfo } from './token-validator.js';

/** Options of the guard: the audience this API accepts. */
export interface BearerGuardOptions {
  /** Identifier of this API; a token must carry it in `aud` (e.g. `urn:gatehouse:tree`). */
  audience: string;
  /** `realm` of the WWW-Authenticate challenge (default 'gatehouse'). */
  realm?: string;
  /**
   * The API confines its records to the caller's instance: a token whose /tokeninfo answer does not say its instance
   * (`instance_id` and `default_instance`, e.g. from a token server without instances) is refused with 401.
   */
  requireInstance?: boolean;
}

export const BEARER_GUARD_OPTIONS = Symbol.for('gatehouse.BearerGuardOptions');
/** The application's passport strategy (instantiating it registers it with passport). */
export const BEARER_STRATEGY = Symbol.for('gatehouse.BearerStrategy');

const BEARER_RE = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i;

/**
 * The global guard of an application, with its bearer strategy (see bearer.strategy.ts): every route not
 * marked `@Public()` needs `Authorization: Bearer <access token>` for this API's audience, plus the scopes of its
 * `@Scopes()`. The token is extracted and checked through @nestjs/passport and passport-http-bearer (a token the
 * validator has cached is answered from that cache directly, as the strategy would answer it); the answers are
 * ours: 401 `unauthorized` with a `WWW-Authenticate: Bearer` challenge when the token is missing, malformed or
 * inactive; 403 `forbidden` for another audience or a missing scope; 503 `service_unavailable` when the token server
 * cannot be reached and the token is not cached. A token is only ever read from the Authorization header (never
 * from the query string or the body, which passport-http-bearer would also look at).
 */
@Injectable()
export class BearerGuard implements CanActivate {
  private readonly routes = new WeakMap<object, WeakMap<object, RouteAccess>>();

  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(BEARER_GUARD_OPTIONS) private readonly opts: BearerGuardOptions,
    @Inject(BEARER_STRATEGY) private readonly bearer: PassportBearerStrategy,
    @Inject(TokenValidator) private readonly validator: TokenValidator,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const route = this.routeOf(ctx);
    if (route.isPublic) return true;

    const http = ctx.switchToHttp();
    const req = http.getRequest<Request & Record<string, unknown>>();
    const res = http.getResponse<Response>();
    const challenge = this.challenger(res);

    const header = req.headers.authorization;
    if (!header) {
      challenge();
      throw unauthorized('Missing access token: send Authorization: Bearer <access token>');
    }
    if (!BEARER_RE.test(header) || hasTokenParameter(req)) {
      challenge(', error="invalid_request"');
      throw unauthorized('Malformed Authorization header: expected Bearer <access token>');
    }
    const caller = this.fromCache(header, challenge) ?? (await this.authenticate(req, challenge));
    if (this.opts.requireInstance && (!caller.instanceId || caller.defaultInstance === undefined)) {
      challenge(
        ', error="invalid_token", error_description="the token server did not name the instance of the token"',
      );
      throw unauthorized("The token server did not tell the access token's instance; it cannot be used here");
    }
    // The token server issues tokens for exactly one audience; one naming several is not its own.
    if (caller.audience.length > 1) {
      challenge(', error="invalid_token", error_description="a token must name exactly one audience"');
      throw unauthorized('The access token names more than one audience');
    }
    if (!caller.audience.includes(this.opts.audience)) {
      challenge(`, error="invalid_token", error_description="audience must be ${this.opts.audience}"`);
      throw forbidden(`The access token is not for this API: its audience must be ${this.opts.audience}`);
    }
    const required = route.scopes;
    const missing = required.filter((s) => !caller.scopes.includes(s));
    if (missing.length) {
      challenge(`, error="insufficient_scope", scope="${required.join(' ')}"`);
      throw forbidden(`The access token lacks the scope ${missing.join(', ')}`);
    }
    req[CALLER_KEY] = caller;
    return true;
  }

  /**
   * Runs the passport-http-bearer strategy on the request as passport does (an instance of the strategy with
   * success, fail and error actions), without passport's per-request middleware: the caller, or our error.
   */
  private authenticate(req: Request, challenge: (extra?: string) => void): Promise<CallerInfo> {
    return new Promise<CallerInfo>((resolve, reject) => {
      const run = Object.create(this.bearer) as PassportBearerStrategy & StrategyActions;
      run.success = (user: unknown) => resolve(user as CallerInfo);
      run.fail = () => reject(invalidToken(challenge));
      run.error = (err: unknown) =>
        reject(
          err instanceof TokenServerUnavailableError
            ? serviceUnavailable(
                'The token server cannot be reached to validate the access token; try again later',
              )
            : err,
        );
      run.authenticate(req);
    });
  }

  /**
   * A route's `@Public()` and `@Scopes()` (handler and controller class), read once: decorator metadata does not
   * change after start-up. Keyed by class, then handler: one inherited handler may serve several controllers.
   */
  private routeOf(ctx: ExecutionContext): RouteAccess {
    const handler = ctx.getHandler();
    const controller = ctx.getClass();
    let byHandler = this.routes.get(controller);
    if (byHandler === undefined) {
      byHandler = new WeakMap();
      this.routes.set(controller, byHandler);
    }
    let route = byHandler.get(handler);
    if (route === undefined) {
      const targets = [handler, controller];
      route = {
        isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets) === true,
        scopes: this.reflector.getAllAndMerge<string[]>(SCOPES_KEY, targets) ?? [],
      };
      byHandler.set(handler, route);
    }
    return route;
  }

  /**
   * The caller of a token the validator has cached, without the strategy's round of callbacks and promises: the
   * answer the strategy would give for it (its verify function asks the same validator, which would answer from the
   * same cache). Only for the header the strategy itself reads as a token (`Bearer <token>`, one space, nothing
   * after); anything else, and a token not cached, goes through the strategy. Throws the strategy's 401 for a
   * cached inactive token.
   */
  private fromCache(header: string, challenge: (extra?: string) => void): CallerInfo | undefined {
    const space = header.indexOf(' ');
    if (space !== 6 || header.indexOf(' ', space + 1) !== -1) return undefined;
    const known = this.validator.cached(header.slice(space + 1));
    if (known === null) throw invalidToken(challenge);
    return known;
  }

  private challenger(res: Response) {
    const realm = this.opts.realm ?? 'gatehouse';
    return (extra = '') => res.setHeader('WWW-Authenticate', `Bearer realm="${realm}"${extra}`);
  }
}

/** What a route asks of its callers. */
interface RouteAccess {
  isPublic: boolean;
  scopes: string[];
}

/** The 401 of a token the validator does not accept, with its challenge. */
function invalidToken(challenge: (extra?: string) => void) {
  challenge(', error="invalid_token"');
  return unauthorized('The access token is invalid, expired or revoked');
}

/** What passport gives a strategy instance to report with. */
interface StrategyActions {
  success(user: unknown, info?: unknown): void;
  fail(challenge?: unknown, status?: number): void;
  error(err: unknown): void;
}

/** The application's passport-http-bearer strategy (bearer.strategy.ts). */
interface PassportBearerStrategy {
  authenticate(req: Request): void;
}

/** An `access_token` in the query string or the body: refused, the header is the only place for a token. */
function hasTokenParameter(req: Request): boolean {
  const body = req.body as Record<string, unknown> | undefined;
  // The raw URL, not Express's req.query (a getter that parses the query string at every read).
  return (
    (req.url.includes('access_token') &&
      new URLSearchParams(req.url.split('?')[1] ?? '').has('access_token')) ||
    (body !== null && typeof body === 'object' && body.access_token !== undefined)
  );
}
