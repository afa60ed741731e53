import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  BEARER_GUARD_OPTIONS,
  BEARER_STRATEGY,
  BearerGuard,
  type BearerGuardOptions,
} from './bearer.guard.js';
import { bearerStrategyName, createBearerStrategy } from './bearer.strategy.js';
import { TokenValidator, type TokenValidatorOptions } from './token-validator.js';

export type BearerModuleOptions = TokenValidatorOptions & BearerGuardOptions;

/** The env variables `bearerOptionsFromEnv` reads (spread `bearerEnv` and have `AUTH_URL` in the app's schema). */
export interface BearerEnvValues {
  AUTH_URL: string;
  BEARER_CACHE_TTL_SEC: number;
  BEARER_NEGATIVE_TTL_SEC: number;
  BEARER_TIMEOUT_MS: number;
  BEARER_CACHE_MAX: number;
}

export function bearerOptionsFromEnv(env: BearerEnvValues, audience: string): BearerModuleOptions {
  return {
    authUrl: env.AUTH_URL,
    audience,
    cacheTtlSec: env.BEARER_CACHE_TTL_SEC,
    negativeTtlSec: env.BEARER_NEGATIVE_TTL_SEC,
    timeoutMs: env.BEARER_TIMEOUT_MS,
    maxEntries: env.BEARER_CACHE_MAX,
  };
}

/**
 * Import once in an app's root module: registers the TokenValidator and the BearerGuard as a global guard, so every
 * route needs a valid token unless marked `@Public()`.
 */
@Module({})
export class BearerModule {
  static forRoot(options: BearerModuleOptions): DynamicModule {
    const strategy = bearerStrategyName();
    return {
      module: BearerModule,
      global: true,
      providers: [
        { provide: TokenValidator, useFactory: () => new TokenValidator(options) },
        {
          provide: BEARER_GUARD_OPTIONS,
          useValue: {
            audience: options.audience,
            realm: options.realm,
            requireInstance: options.requireInstance,
          },
        },
        // passport-http-bearer, registered under this application's own strategy name.
        {
          provide: BEARER_STRATEGY,
          useFactory: (validator: TokenValidator) => createBearerStrategy(strategy, validator),
          inject: [TokenValidator],
        },
        { provide: APP_GUARD, useClass: BearerGuard },
      ],
      exports: [TokenValidator],
    };
  }
}
