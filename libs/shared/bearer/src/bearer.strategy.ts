import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { CallerInfo, TokenValidator } from './token-validator.js';

let strategies = 0;

/**
 * A name for the bearer strategy of one application. Passport keeps strategies in one registry per process, and
 * one process may hold several applications (tests, replicas), each with its own validator: each gets its own name.
 */
export function bearerStrategyName(): string {
  return `gatehouse-bearer-${++strategies}`;
}

/**
 * The passport-http-bearer strategy of one application: the token of `Authorization: Bearer` is checked by the
 * application's TokenValidator (the token server's /tokeninfo, cached). Resolves to the caller, or false for an
 * inactive token; throws TokenServerUnavailableError when the token server cannot be asked.
 */
export function createBearerStrategy(name: string, validator: TokenValidator) {
  class GatehouseBearerStrategy extends PassportStrategy(Strategy, name) {
    async validate(token: string): Promise<CallerInfo | false> {
      return (await validator.validate(token)) ?? false;
    }
  }
  return new GatehouseBearerStrategy();
}
