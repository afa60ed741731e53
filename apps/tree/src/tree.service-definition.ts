import { packageVersion, type ServiceDefinition } from '@gatehouse/service';
import { treeEnv } from './config.js';
import { TreeAppModule } from './app.module.js';
import { treeEntities } from './entities.js';
import { treeMigrations } from './migrations/index.js';
import { TREE_ROUTES_PREFIX } from './common/body.middleware.js';
import { TREE_API_DESCRIPTION } from './openapi-description.js';

export const treeService: ServiceDefinition<typeof treeEnv> = {
  name: 'tree',
  version: packageVersion(),
  envSchema: treeEnv,
  port: (env) => env.TREE_PORT,
  databaseUrl: (env) => {
    const url = env.TREE_DATABASE_URL ?? env.DATABASE_URL;
    if (!url) throw new Error('TREE_DATABASE_URL or DATABASE_URL must be set (npm start sets them for you)');
    return url;
  },
  entities: treeEntities,
  migrations: treeMigrations,
  openapi: {
    title: 'Gatehouse tree manager',
    description: TREE_API_DESCRIPTION,
  },
  // JSON bodies under /api/v1/trees are parsed by TreeBodyMiddleware, which lets CSV uploads through as streams.
  excludeBodyParserPaths: [TREE_ROUTES_PREFIX],
  rootModule: (ctx) => TreeAppModule.register(ctx),
};
