import { applyDecorators, createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension } from '@nestjs/swagger';
import { ApiErrorResponses } from '@gatehouse/http';
import type { CallerInfo } from './token-validator.js';

export { Public, IS_PUBLIC_KEY } from '@gatehouse/http';

/** Metadata key of `@Scopes()`. */
export const SCOPES_KEY = 'gatehouse:scopes';

/**
 * The scopes a route needs (all of them), e.g. `@Scopes('trees:read')`. On a controller and a handler both apply.
 * Also documents the route in OpenAPI: bearer security with these scopes, 401, 403 and 503 answers.
 */
export const Scopes = (...scopes: string[]) =>
  applyDecorators(
    SetMetadata(SCOPES_KEY, scopes),
    ApiBearerAuth('bearer'),
    ApiExtension('x-required-scopes', scopes),
    ApiErrorResponses(401, 403, 503),
  );

/** Request property where the guard puts the authenticated caller. */
export const CALLER_KEY = 'caller';

/** The authenticated caller of the request (`@Caller() caller: CallerInfo`); undefined on a public route. */
export const Caller = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): CallerInfo | undefined =>
    ctx.switchToHttp().getRequest<Record<string, CallerInfo | undefined>>()[CALLER_KEY],
);
