import { allowedCorsOrigins } from '@gatehouse/config';
import { packageVersion, type ServiceDefinition } from '@gatehouse/service';
import { treeEnv } from './config.js';
import { TreeAppModule } from './app.module.js';
import { treeEntities } from './entities.js';
import { treeMigrations } from './migrations/index.js';
import { isCsvUpload } from './common/csv-upload.js';
import { TREE_API_DESCRIPTION } from './openapi-description.js';

export const treeService: ServiceDefinition<typeof treeEnv> = {
  name: 'tree',
  version: packageVersion(),
  envSchema: treeEnv,
  port: (env) => env.TREE_PORT,
  // the console's origin (or CORS_ORIGINS) may call the API from a browser; no other origin gets a CORS header
  corsOrigins: (env) => allowedCorsOrigins(env),
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
  // CSV uploads to the import route stay a stream for the handler; every other body goes through the JSON parser.
  streamedBodies: isCsvUpload,
  rootModule: (ctx) => TreeAppModule.register(ctx),
};
