import type { Server } from 'node:http';
import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request } from 'express';
import type { Logger } from 'pino';
import { corsMiddleware } from './cors.js';
import { bodyParsers } from './body-parser.js';
import { ErrorResponder, HttpErrorFilter } from './error.filter.js';
import { installFastLane, type FastLane } from './fast-lane.js';
import { HTTP_FOUNDATION, HealthController, type HttpFoundation } from './health.controller.js';
import { PinoNestLogger, createLogger, requestLogging } from './logging.js';
import { HttpMetrics } from './metrics.js';
import { setupOpenApi, type OpenApiOptions } from './openapi.js';
import { HttpRateLimiter, type RateLimitOptions } from './rate-limit.js';
import { RouteTable } from './route-table.js';
import { createValidationPipe } from './validation.js';

export interface HttpAppOptions {
  /** Service name: in every log line and as the `service` label of every metric. */
  serviceName: string;
  /** Service version, logged at start. */
  version: string;
  /** pino level (default 'info'); ignored when `logger` is given. */
  logLevel?: string;
  /** A ready pino logger (e.g. from `createLogger` with a test destination). */
  logger?: Logger;
  /** Largest accepted request body (default '1mb'); larger: 413 `payload_too_large`. */
  bodyLimit?: string;
  /** Also parse `application/x-www-form-urlencoded` bodies (default false: JSON only). */
  urlencoded?: boolean;
  /**
   * Express `trust proxy` setting, for the caller IP behind a load balancer (default: off): false, a hop count,
   * or proxy addresses/CIDR ranges (an array or a comma-separated string).
   */
  trustProxy?: boolean | number | string | string[];
  rateLimit: RateLimitOptions;
  openapi: OpenApiOptions;
  /** Resolves when the service can serve (the database answers); throws otherwise. Backs `GET /readyz`. */
  readiness: () => Promise<void>;
  /** `readiness()` taking longer than this counts as not ready (default 2000 ms). */
  readinessTimeoutMs?: number;
  /** Path prefixes where no body parser may run (oidc-provider routes). */
  excludeBodyParserPaths?: string[];
  /** Requests whose body the route reads itself as a stream (see BodyParserOptions.streamed). */
  streamedBodies?: (req: Request) => boolean;
  /**
   * Path prefixes of OAuth endpoints: errors answered there by this lib (429, 404, 405, 500...) also carry
   * RFC 6749's `error` and `error_description` beside `code` and `message`.
   */
  oauthErrorPaths?: string[];
  /**
   * Routes served by raw handlers mounted in `mount`, as `'<METHOD> /pattern'` (e.g. `'POST /token'`), so they
   * get their own rate-limit key and metrics label and take part in 405 answers.
   */
  routes?: string[];
  /** Mounts raw Express handlers (e.g. oidc-provider) after logging, rate limits and body parsing, before Nest routes. */
  mount?: (app: NestExpressApplication) => void | Promise<void>;
  /**
   * Requests served without Express (e.g. the token server's oidc-provider routes): built after `init()`, put
   * in front of Express on the app's node server. Claimed requests still get the request id and completion log,
   * metrics, rate limits and the foundation's error answers, with the same semantics; nothing else changes.
   */
  fastLane?: (app: NestExpressApplication) => FastLane | Promise<FastLane>;
  /** Last adjustments before `init()` (global guards, interceptors...). */
  configure?: (app: NestExpressApplication) => void | Promise<void>;
  /** Close gracefully on SIGTERM/SIGINT (default true). */
  shutdownHooks?: boolean;
  /** Browser origins allowed by CORS (corsMiddleware); none or empty: no CORS header is ever sent. */
  corsOrigins?: readonly string[];
}

@Injectable()
class FoundationLifecycle implements OnApplicationShutdown {
  constructor(@Inject(HTTP_FOUNDATION) private readonly foundation: HttpFoundation) {}

  async onApplicationShutdown(): Promise<void> {
    await this.foundation.close();
  }
}

/** Wraps the app's root module with the foundation's controllers (health, metrics) and lifecycle. */
@Module({})
class HttpFoundationModule {
  static wrap(rootModule: Type<unknown> | DynamicModule, foundation: HttpFoundation): DynamicModule {
    return {
      module: HttpFoundationModule,
      // global: a provider of the app may inject the foundation (its metrics, its logger)
      global: true,
      imports: [rootModule],
      controllers: [HealthController],
      providers: [{ provide: HTTP_FOUNDATION, useValue: foundation }, FoundationLifecycle],
      exports: [HTTP_FOUNDATION],
    };
  }
}

/**
 * Creates and initialises a Nest app with the shared HTTP foundation, in this order:
 * request id + JSON request log → metrics → rate limit (+ headers) → body parsers → `mount` → Nest routes
 * (health, metrics, docs, the app's controllers) → 404/405 → the one error filter. With `fastLane`, the
 * requests it claims skip Express: request id + log, metrics, rate limit → the lane's handler → the same errors.
 */
export async function createHttpApp(
  rootModule: Type<unknown> | DynamicModule,
  options: HttpAppOptions,
): Promise<NestExpressApplication> {
  const logger =
    options.logger ?? createLogger({ serviceName: options.serviceName, level: options.logLevel });
  const routes = new RouteTable();
  const metrics = new HttpMetrics(options.serviceName);
  const limiter = new HttpRateLimiter(options.rateLimit, options.serviceName, logger);
  if (limiter.sharedStoreUp() !== undefined) {
    metrics.gaugeFrom(
      'gatehouse_rate_limit_redis_up',
      'Whether the rate-limit counts are shared through Redis now (1) or kept in this process (0)',
      () => Number(limiter.sharedStoreUp()),
    );
    metrics.gaugeFrom(
      'gatehouse_rate_limit_local_total',
      'Rate-limit decisions taken in this process although REDIS_URL is set (Redis not ready or failing)',
      () => limiter.localDecisions,
    );
  }
  const foundation: HttpFoundation = {
    serviceName: options.serviceName,
    logger,
    metrics,
    readiness: options.readiness,
    readinessTimeoutMs: options.readinessTimeoutMs ?? 2000,
    close: () => limiter.close(),
  };

  let app: NestExpressApplication | undefined;
  try {
    app = await NestFactory.create<NestExpressApplication>(
      HttpFoundationModule.wrap(rootModule, foundation),
      {
        bodyParser: false,
        bufferLogs: true,
        abortOnError: false,
      },
    );
    app.useLogger(new PinoNestLogger(logger));
    if (options.shutdownHooks !== false) app.enableShutdownHooks();

    app.disable('x-powered-by');
    // No ETag on API answers (as the Auth0 and Keycloak admin APIs): Express would hash every body (SHA-1 of the
    // serialized JSON) for a conditional GET no client of a management API makes. oidc-provider's routes answer on their own.
    app.set('etag', false);
    if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);

    app.use(requestLogging(logger));
    if (options.corsOrigins?.length) app.use(corsMiddleware(options.corsOrigins));
    app.use(metrics.middleware(routes));
    app.use(limiter.middleware(routes));
    app.use(
      bodyParsers({
        limit: options.bodyLimit ?? '1mb',
        excludePaths: options.excludeBodyParserPaths ?? [],
        urlencoded: options.urlencoded ?? false,
        streamed: options.streamedBodies,
      }),
    );
    await options.mount?.(app);

    const errors = new ErrorResponder(routes, logger, options.oauthErrorPaths ?? []);
    app.useGlobalFilters(new HttpErrorFilter(errors));
    app.useGlobalPipes(createValidationPipe());
    setupOpenApi(app, options.openapi);
    await options.configure?.(app);

    await limiter.start();
    await app.init();

    routes.loadFromExpress(app.getHttpAdapter().getInstance());
    for (const spec of options.routes ?? []) routes.addSpec(spec);
    if (options.fastLane) {
      const expressApp = app.getHttpAdapter().getInstance();
      installFastLane(app.getHttpServer() as Server, {
        lane: await options.fastLane(app),
        logger,
        routes,
        metrics,
        limiter,
        errors,
        trust: expressApp.get('trust proxy fn') as (addr: string, i: number) => boolean,
      });
    }
    logger.info({ version: options.version, routes: routes.size }, `${options.serviceName} initialised`);
    return app;
  } catch (err) {
    if (app) await app.close().catch(() => undefined);
    else await limiter.close();
    throw err;
  }
}

/** Starts listening on `port` (0: a free port) and `host` (default all interfaces); returns the server. */
export async function listen(app: NestExpressApplication, port: number, host?: string): Promise<Server> {
  const server = (host ? await app.listen(port, host) : await app.listen(port)) as Server;
  const address = server.address();
  const where = typeof address === 'string' ? address : `${address?.address}:${address?.port}`;
  app.get<HttpFoundation>(HTTP_FOUNDATION).logger.info(`Listening on ${where}`);
  return server;
}
