import 'reflect-metadata';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DynamicModule } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request } from 'express';
import type { MixedList } from 'typeorm';
import {
  type EnvOf,
  type EnvSchema,
  loadEnvOrExit,
  parseRateLimitOverrides,
  commonEnv,
  type TrustProxySetting,
} from '@gatehouse/config';
import { createDataSource, Db, runMigrations } from '@gatehouse/db';
import { createHttpApp, listen, type FastLane } from '@gatehouse/http';

export type CommonEnv = EnvOf<typeof commonEnv>;

export interface ServiceContext<E> {
  env: E;
  /** The service's database (its one pool); every query goes through it. */
  db: Db;
}

/**
 * DATABASE_URL, the database the token server and identity share (their `databaseUrl`); start-up fails without it.
 */
export function identityDatabaseUrl(env: { DATABASE_URL?: string }): string {
  if (!env.DATABASE_URL) throw new Error('DATABASE_URL must be set (npm start sets it for you)');
  return env.DATABASE_URL;
}

/** Everything that differs between the three services; the rest of start-up is the same code. */
export interface ServiceDefinition<S extends EnvSchema> {
  name: 'auth' | 'identity' | 'tree';
  /**
   * Express `trust proxy` when the service has its own way to set it (a deprecated alias); default: TRUST_PROXY,
   * which every service reads. The source address of rate limits is then the forwarded one.
   */
  trustProxy?: (env: EnvOf<S> & CommonEnv) => TrustProxySetting;
  version: string;
  envSchema: S;
  port(env: EnvOf<S>): number;
  databaseUrl(env: EnvOf<S>): string;
  // TypeORM's own list types: entity classes (the schema, checked against the migrations) and migration classes.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function>;
  openapi: { title: string; description: string };
  rootModule(ctx: ServiceContext<EnvOf<S>>): DynamicModule;
  /** Raw handlers mounted before Nest's routes (oidc-provider), with no body parser in front of them. */
  mount?(app: NestExpressApplication, ctx: ServiceContext<EnvOf<S>>): void | Promise<void>;
  /**
   * Requests served without Express (the token server's routes), behind the same request id and log, metrics,
   * rate limits and error answers (see HttpAppOptions.fastLane).
   */
  fastLane?(app: NestExpressApplication, ctx: ServiceContext<EnvOf<S>>): FastLane | Promise<FastLane>;
  excludeBodyParserPaths?: string[];
  /** Requests whose body the route reads itself as a stream (a CSV upload), left unparsed by the JSON parser. */
  streamedBodies?: (req: Request) => boolean;
  /** Raw-handler routes ('POST /token') for rate-limit keys, metrics labels and 405 answers. */
  routes?: string[];
  /** Paths whose errors also carry RFC 6749 `error`/`error_description`. */
  oauthErrorPaths?: string[];
  /** Parse form bodies too (token server pages and endpoints served by Nest). */
  urlencoded?: boolean;
  /** Last adjustments before init (global guards such as the bearer guard). */
  configure?(app: NestExpressApplication, ctx: ServiceContext<EnvOf<S>>): void | Promise<void>;
  /** Browser origins allowed by CORS (the console's); unset: no CORS. */
  corsOrigins?(env: EnvOf<S> & CommonEnv): readonly string[];
  /** Runs once after migrations, before the HTTP server listens (bootstrap data, keys). */
  afterMigrate?(ctx: ServiceContext<EnvOf<S>>): Promise<void>;
}

export interface BuiltService<E> extends ServiceContext<E> {
  app: NestExpressApplication;
  close(): Promise<void>;
}

/** Open the database, migrate it, and build the Nest application (not listening yet). Used by main and by tests. */
export async function buildService<S extends EnvSchema>(
  def: ServiceDefinition<S>,
  env: EnvOf<S> & CommonEnv,
): Promise<BuiltService<EnvOf<S>>> {
  await migrate(def, env, `gatehouse-${def.name}`);
  const db = new Db({
    url: def.databaseUrl(env),
    applicationName: `gatehouse-${def.name}`,
    poolMax: env.DB_POOL_MAX,
    statementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS,
  });
  try {
    const ctx = { env, db };
    await def.afterMigrate?.(ctx);
    const lane = def.fastLane?.bind(def);
    const app = await createHttpApp(def.rootModule(ctx), {
      serviceName: def.name,
      version: def.version,
      logLevel: env.LOG_LEVEL,
      bodyLimit: env.BODY_LIMIT,
      rateLimit: {
        points: env.RATE_LIMIT_POINTS,
        durationSec: env.RATE_LIMIT_WINDOW_SEC,
        redisUrl: env.REDIS_URL,
        overrides: parseRateLimitOverrides(env.RATE_LIMIT_OVERRIDES),
        authFailures: env.RATE_LIMIT_AUTH_FAILURES,
        authFailuresPerAddress: env.RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS,
      },
      trustProxy: def.trustProxy ? def.trustProxy(env) : env.TRUST_PROXY,
      openapi: { ...def.openapi, version: def.version },
      readiness: () => db.check(),
      excludeBodyParserPaths: def.excludeBodyParserPaths,
      streamedBodies: def.streamedBodies,
      mount: def.mount ? (a: NestExpressApplication) => def.mount?.(a, ctx) : undefined,
      configure: def.configure ? (a: NestExpressApplication) => def.configure?.(a, ctx) : undefined,
      fastLane: lane ? (a: NestExpressApplication) => lane(a, ctx) : undefined,
      routes: def.routes,
      oauthErrorPaths: def.oauthErrorPaths,
      urlencoded: def.urlencoded,
      corsOrigins: def.corsOrigins?.(env),
      // runService owns SIGTERM/SIGINT: closing the app, then the database pool, then exiting.
      shutdownHooks: false,
    });
    return {
      ...ctx,
      app,
      close: async () => {
        await app.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}

/**
 * Applies the service's pending migrations through TypeORM on a connection of its own, closed afterwards: TypeORM
 * holds no pool while the service runs.
 */
async function migrate<S extends EnvSchema>(
  def: ServiceDefinition<S>,
  env: EnvOf<S> & CommonEnv,
  applicationName: string,
): Promise<string[]> {
  const dataSource = createDataSource({
    url: def.databaseUrl(env),
    entities: def.entities,
    migrations: def.migrations,
    applicationName,
    poolMax: 1,
  });
  await dataSource.initialize();
  try {
    return await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/** A stopping service closes its listener once no connection came for this long (runService)... */
const ACCEPT_QUIET_MS = 100;
/** ...or this long after the signal, when clients keep connecting. */
const ACCEPT_LIMIT_MS = 1000;
/** How long a stopping service waits for its requests in flight before closing the app regardless (runService). */
const DRAIN_LIMIT_MS = 5000;

/** The body of every app's main.ts: validated env, migrate, listen, stop cleanly on SIGTERM/SIGINT. */
export async function runService<S extends EnvSchema>(def: ServiceDefinition<S>): Promise<void> {
  const env = loadEnvOrExit({ ...commonEnv, ...def.envSchema }, def.name) as EnvOf<S> & CommonEnv;
  const built = await buildService(def, env);
  const server = await listen(built.app, def.port(env));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(
      `${JSON.stringify({ level: 30, service: def.name, msg: `received ${signal}, shutting down` })}\n`,
    );
    // Every request in flight is answered, and before anything it uses closes:
    // - Nest runs the shutdown hooks (the token server, the rate limiter's Redis) before it closes the HTTP server,
    //   so the server is closed and drained first (DRAIN_LIMIT_MS at most), then the app;
    // - a client's connection made before the signal may still wait in the accept backlog, which closing the
    //   listener resets, and a busy server takes those only a few per turn of the event loop (40 token requests at
    //   once: 19 were still waiting 80 ms after the signal), so the listener closes once no connection came for
    //   ACCEPT_QUIET_MS, checked after a poll phase (setImmediate), or after ACCEPT_LIMIT_MS. The quiet period also
    //   lets the last connections' requests be read: server.close() destroys every connection with none parsed.
    const since = Date.now();
    let lastAccepted = since;
    const accepted = () => (lastAccepted = Date.now());
    server.on('connection', accepted);
    const drained = new Promise<void>((resolve) => {
      const check = () =>
        setImmediate(() => {
          const now = Date.now();
          if (now - lastAccepted < ACCEPT_QUIET_MS && now - since < ACCEPT_LIMIT_MS) {
            setTimeout(check, 10);
            return;
          }
          server.off('connection', accepted);
          server.close(() => resolve());
          setTimeout(resolve, DRAIN_LIMIT_MS).unref();
        });
      setTimeout(check, 10);
    });
    drained
      .then(() => built.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** The version of the Gatehouse package (root package.json), found by walking up from this file. */
export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gatehouse' && pkg.version) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}

/** The body of every app's migrate.ts (`nx run <app>:migrate`): apply pending migrations and exit. */
export async function migrateService<S extends EnvSchema>(def: ServiceDefinition<S>): Promise<void> {
  const env = loadEnvOrExit({ ...commonEnv, ...def.envSchema }, def.name) as EnvOf<S> & CommonEnv;
  const applied = await migrate(def, env, `gatehouse-${def.name}-migrate`);
  process.stdout.write(`[${def.name}] migrations applied: ${JSON.stringify(applied)}\n`);
}
