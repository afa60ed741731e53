import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { forbidden, serviceUnavailable, unauthorized } from '@gatehouse/errors';
import { IS_PUBLIC_KEY } from '@gatehouse/http';
import { CALLER_KEY, SCOPES_KEY } from './decorators.js';
import { TokenServerUnavailableError, TokenValidator } from './token-validator.js';

/** Options of the guard: the audience this API accepts. */
export interface BearerGuardOptions {
  /** Identifier of this API; a token must carry it in `aud` (e.g. `urn:gatehouse:tree`). */
  audience: string;
  /** `realm` of the WWW-Authenticate challenge (default 'gatehouse'). */
  realm?: string;
}

export const BEARER_GUARD_OPTIONS = Symbol.for('gatehouse.BearerGuardOptions');

const BEARER_RE = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i;

/**
 * Global guard: every route not marked `@Public()` needs `Authorization: Bearer <access token>` for this API's
 * audience, plus the scopes of its `@Scopes()`. 401 `unauthorized` with a `WWW-Authenticate: Bearer` challenge when
 * the token is missing, malformed or inactive; 403 `forbidden` for another audience or a missing scope; 503
 * `service_unavailable` when the token server cannot be reached and the token is not cached.
 */
@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly validator: TokenValidator,
    @Inject(BEARER_GUARD_OPTIONS) private readonly opts: BearerGuardOptions,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets)) return true;

    const http = ctx.switchToHttp();
    const req = http.getRequest<Request & Record<string, unknown>>();
    const res = http.getResponse<Response>();
    const realm = this.opts.realm ?? 'gatehouse';
    const challenge = (extra = '') => res.setHeader('WWW-Authenticate', `Bearer realm="${realm}"${extra}`);

    const header = req.headers.authorization;
    if (!header) {
      challenge();
      throw unauthorized('Missing access token: send Authorization: Bearer <access token>');
    }
    const match = BEARER_RE.exec(header);
    if (!match) {
      challenge(', error="invalid_request"');
      throw unauthorized('Malformed Authorization header: expected Bearer <access token>');
    }

    let caller;
    try {
      caller = await this.validator.validate(match[1]);
    } catch (err) {
      if (err instanceof TokenServerUnavailableError) {
        throw serviceUnavailable(
          'The token server cannot be reached to validate the access token; try again later',
        );
      }
      throw err;
    }
    if (!caller) {
      challenge(', error="invalid_token"');
      throw unauthorized('The access token is invalid, expired or revoked');
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
    const required = this.reflector.getAllAndMerge<string[]>(SCOPES_KEY, targets) ?? [];
    const missing = required.filter((s) => !caller.scopes.includes(s));
    if (missing.length) {
      challenge(`, error="insufficient_scope", scope="${required.join(' ')}"`);
      throw forbidden(`The access token lacks the scope ${missing.join(', ')}`);
    }
    req[CALLER_KEY] = caller;
    return true;
  }
}
