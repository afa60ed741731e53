/**
 * @gatehouse/http: the one HTTP foundation of the three NestJS apps (errors, validation, rate limits,
 * logging, metrics, health, OpenAPI). An app's main.ts: `const app = await createHttpApp(AppModule, {...});
 * await listen(app, port);`.
 */
export { createHttpApp, listen, type HttpAppOptions } from './create-app.js';
export { corsMiddleware } from './cors.js';
export { HttpErrorFilter, ErrorResponder } from './error.filter.js';
export {
  FastLanePipeline,
  clientAddress,
  inheritClientAddress,
  installFastLane,
  requestPath,
  type FastLane,
  type FastLaneDeps,
} from './fast-lane.js';
export {
  mapError,
  addErrorTranslator,
  isConnectionError,
  someErrorInChain,
  statusOf,
  codeOfStatus,
  httpExceptionMessage,
  type ErrorBody,
  type ErrorTranslator,
  type MappedError,
} from './error-mapping.js';
export { allowedMethods, classifyRouteMiss, type RouteMiss } from './method-not-allowed.js';
export {
  RouteTable,
  compilePattern,
  parseRouteSpec,
  UNMATCHED_ROUTE,
  type RouteEntry,
  type RouteMatch,
} from './route-table.js';
export {
  HttpRateLimiter,
  applyRateLimitHeaders,
  isRateLimitExempt,
  callerKey,
  canonicalClientId,
  presentedCredential,
  tokenDigest,
  type PresentedCredential,
  endpointKey,
  RATE_LIMIT_EXEMPT_PATHS,
  TOO_MANY_REQUESTS_MESSAGE,
  type RateLimitOptions,
  type RateLimitDecision,
} from './rate-limit.js';
export {
  createLogger,
  requestLogging,
  identify,
  logCompletion,
  requestLog,
  type IdentifiedRequest,
  sanitizeRequestId,
  PinoNestLogger,
  REDACT_PATHS,
  type CreateLoggerOptions,
  type Logger,
} from './logging.js';
export { HttpMetrics, routeMatch } from './metrics.js';
export { HealthController, HTTP_FOUNDATION, type HttpFoundation } from './health.controller.js';
export {
  Public,
  IS_PUBLIC_KEY,
  ApiErrorResponses,
  ErrorResponseDto,
  ErrorDetailDto,
  AuditDoc,
  buildOpenApiDocument,
  setupOpenApi,
  COMMON_API_NOTES,
  ApiListParams,
  type ListQueryDocs,
  type OpenApiOptions,
} from './openapi.js';
export { createValidationPipe, flattenValidationErrors, validationException } from './validation.js';
export { bodyParsers, mapBodyParserError, isUnderPrefix, type BodyParserOptions } from './body-parser.js';
export { UuidParam, ApiUuidParams } from './params.js';
