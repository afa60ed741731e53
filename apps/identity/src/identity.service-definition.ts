import { allowedCorsOrigins } from '@gatehouse/config';
import {
  identityDatabaseUrl,
  packageVersion,
  type CommonEnv,
  type ServiceDefinition,
} from '@gatehouse/service';
import { bootstrapIdentity, loadSecretBox, resealUnboundSecrets } from '@gatehouse/identity-data';
import { createLogger } from '@gatehouse/http';
import { identityEnv } from './config.js';
import { IdentityAppModule } from './app.module.js';
import { identityEntities } from './entities.js';
import { identityMigrations } from './migrations/index.js';

export const identityService: ServiceDefinition<typeof identityEnv> = {
  name: 'identity',
  version: packageVersion(),
  envSchema: identityEnv,
  port: (env) => env.IDENTITY_PORT,
  // the console's origin (or CORS_ORIGINS) may call the API from a browser; no other origin gets a CORS header
  corsOrigins: (env) => allowedCorsOrigins(env),
  databaseUrl: identityDatabaseUrl,
  entities: identityEntities,
  migrations: identityMigrations,
  openapi: {
    title: 'Gatehouse identity management API',
    description:
      'Clients, resources, scopes, users, roles, groups, tenants. /api/v1 serves document 1 shapes; /api/v2 serves document 2 shapes: the envelope and query parameters in camelCase (totalCount, hasMore), aggregates instead of aggregations, the nested client_metadata/resource_metadata of document 2; record field names stay as the seeds write them. See README.md.\n\n' +
      '## Client metadata and secrets\n\n' +
      '- A client is stored only if the token server can use it: create and modify check the client as it will be ' +
      "with the token server's own mapping and oidc-provider's own client validation (400 naming the field, e.g. " +
      '`client_metadata.urls.callbacks`). `client_metadata.urls.callbacks` are the redirect URIs of /authorize and ' +
      '`urls.logout_urls` the post-logout redirect URIs; `redirect_uris` is refused. Web clients: http(s) ' +
      'callbacks, https and no localhost with implicit; native clients (`client_type` native): custom schemes or ' +
      'loopback http.\n' +
      '- A secret expires at `client_secret_expires_at` (an ISO 8601 instant with a time zone, in the future) or ' +
      '`client_secret_lifetime` seconds from now, given at create, modify or change secret (not both; a public ' +
      'client has none: 400); none given: it never expires, and a new secret from change secret never expires ' +
      'unless its body says so. From that instant every endpoint that checks the secret answers 401 ' +
      '`invalid_client`, as for a wrong secret.\n' +
      '- Request examples are valid requests as they stand; bodies that name your own records by id have none.',
  },
  rootModule: (ctx) => IdentityAppModule.register(ctx),
  /** First start seeds the default instance, system resources, default client and admin (docs/contract.md start-up). */
  afterMigrate: async ({ db, env }) => {
    const full = env as typeof env & CommonEnv;
    const log = createLogger({ serviceName: 'identity', level: full.LOG_LEVEL });
    await bootstrapIdentity(db, full, log);
    // secrets sealed by an earlier release (bound to nothing) are bound to their rows, once
    await resealUnboundSecrets(db, loadSecretBox(full).box, log);
  },
};
