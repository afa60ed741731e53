import { consoleUrlOf } from '@gatehouse/config';
import type { ServerResponse } from 'node:http';
import { createLogger, HTTP_FOUNDATION, type FastLane, type HttpFoundation } from '@gatehouse/http';
import {
  identityDatabaseUrl,
  packageVersion,
  type CommonEnv,
  type ServiceDefinition,
} from '@gatehouse/service';
import {
  bootstrapIdentity,
  ensureAccountClients,
  ensureConsoleClient,
  loadSecretBox,
  resealUnboundSecrets,
} from '@gatehouse/identity-data';
import { authEnv, effectiveTrustProxy } from './config.js';
import { AuthAppModule } from './app.module.js';
import { authEntities } from './entities.js';
import { authMigrations } from './migrations/index.js';
import { SigningKeys } from './keys/signing-keys.js';
import { issuerOf, TokenServer } from './token-server.js';
import { BODY_PARSER_EXCLUDED_PATHS, OAUTH_ERROR_PATHS, ROUTE_SPECS } from './endpoints/routes.js';

export const authService: ServiceDefinition<typeof authEnv> = {
  name: 'auth',
  version: packageVersion(),
  envSchema: authEnv,
  port: (env) => env.AUTH_PORT,
  databaseUrl: identityDatabaseUrl,
  entities: authEntities,
  migrations: authMigrations,
  openapi: {
    title: 'Gatehouse token server',
    description:
      'OAuth 2.0 / OpenID Connect token server (oidc-provider 9 on PostgreSQL). Every OAuth endpoint takes form and ' +
      'JSON bodies alike and answers errors as `{"error", "error_description", "code", "message"}`. See README.md.',
  },
  rootModule: (ctx) => AuthAppModule.register(ctx),
  // Behind a TLS-terminating proxy, rate limits (and failed client authentications) count the forwarded address:
  // TRUST_PROXY, or the deprecated AUTH_TRUST_PROXY=true as one hop.
  trustProxy: (env) => effectiveTrustProxy(env),
  // Seed the identity tables once and the account clients at every start, then make sure signing keys exist (first start creates RS256 and ES256 keys).
  afterMigrate: async ({ env: serviceEnv, db }) => {
    // buildService hands every service its own variables and the common ones (DATA_DIR, LOG_LEVEL, REDIS_URL...).
    const env = serviceEnv as typeof serviceEnv & CommonEnv;
    const { box } = loadSecretBox(env);
    await bootstrapIdentity(db, env, undefined, { box });
    // every instance's first-party account client (the account pages sign in through it), its callback this issuer's
    const log = createLogger({ serviceName: 'auth', level: env.LOG_LEVEL });
    const accounts = await ensureAccountClients(db, issuerOf(env));
    if (accounts.nameTaken.length) {
      log.warn(
        { instances: accounts.nameTaken },
        'account client not created: another client of the instance is named "Gatehouse account"',
      );
    }
    // the default instance's first-party console client (apps/console signs in through it), its URLs the console's
    const consoleClient = await ensureConsoleClient(db, consoleUrlOf(env));
    if (consoleClient.nameTaken) {
      log.warn(
        'console client not created: another client of the default instance is named "Gatehouse console"',
      );
    }
    // secrets sealed by an earlier release (bound to nothing) are bound to their rows, once, before keys are read
    await resealUnboundSecrets(db, box, log);
    await new SigningKeys(db, box).ensureActiveKeys();
  },
  // oidc-provider and our endpoints read their own bodies (JSON or form); the foundation knows their routes
  // (rate-limit keys, metrics labels, 405) and answers its own errors there (429, 404...) in the OAuth shape too.
  // All three lists are derived from the token server's route table (endpoints/routes.ts).
  excludeBodyParserPaths: [...BODY_PARSER_EXCLUDED_PATHS],
  routes: [...ROUTE_SPECS],
  oauthErrorPaths: [...OAUTH_ERROR_PATHS],
  // Everything the token server serves (the route table, the interaction pages, /authorize/<uid>, logout steps,
  // /device/...) runs on the foundation's fast lane, straight on node's request event behind the same request id,
  // log line, metrics and rate limits; health, metrics, docs and anything else stay on Express and Nest.
  // The app's metrics exist once it is built: the audit events written are counted there from now on.
  fastLane: (app, { env }) => {
    const server = app.get(TokenServer);
    server.countEventsIn(app.get<HttpFoundation>(HTTP_FOUNDATION, { strict: false }).metrics);
    return withHsts(server.lane(), env);
  },
  // Express serves the rest (docs, health, 404s): the same HSTS there.
  mount: (app, { env }) => {
    if (!httpsIssuer(env)) return;
    app.use((_req: unknown, res: ServerResponse, next: () => void) => {
      res.setHeader('Strict-Transport-Security', HSTS);
      next();
    });
  },
};

/** Keycloak's default: a year, subdomains included (no preload: that is the operator's choice). */
const HSTS = 'max-age=31536000; includeSubDomains';

/** An https issuer means the token server is only reached over TLS: browsers may then refuse plain http. */
const httpsIssuer = (env: { ISSUER?: string }) => env.ISSUER?.startsWith('https://') ?? false;

/** The token server's lane, each answer with Strict-Transport-Security when the issuer is https. */
function withHsts(lane: FastLane, env: { ISSUER?: string }): FastLane {
  if (!httpsIssuer(env)) return lane;
  return {
    matches: (method, path) => lane.matches(method, path),
    handle: (req, res, next) => {
      res.setHeader('Strict-Transport-Security', HSTS);
      lane.handle(req, res, next);
    },
  };
}
