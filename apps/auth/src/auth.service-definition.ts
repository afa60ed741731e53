import { packageVersion, type ServiceDefinition } from '@gatehouse/service';
import { authEnv } from './config.js';
import { AuthAppModule } from './app.module.js';
import { authEntities } from './entities.js';
import { authMigrations } from './migrations/index.js';

export const authService: ServiceDefinition<typeof authEnv> = {
  name: 'auth',
  version: packageVersion(),
  envSchema: authEnv,
  port: (env) => env.AUTH_PORT,
  databaseUrl: (env) => {
    if (!env.DATABASE_URL) throw new Error('DATABASE_URL must be set (npm start sets it for you)');
    return env.DATABASE_URL;
  },
  entities: authEntities,
  migrations: authMigrations,
  openapi: {
    title: 'Gatehouse token server',
    description: 'OAuth 2.0 / OpenID Connect token server (oidc-provider). See README.md.',
  },
  rootModule: (ctx) => AuthAppModule.register(ctx),
};
