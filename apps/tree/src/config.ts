import { authUrl, databaseUrl, env, treeDatabaseUrl, treePort } from '@gatehouse/config';
import { bearerEnv } from '@gatehouse/bearer';

export const treeEnv = {
  TREE_PORT: treePort,
  TREE_DATABASE_URL: treeDatabaseUrl,
  DATABASE_URL: databaseUrl,
  AUTH_URL: authUrl,
  ...bearerEnv,
  TREE_IMPORT_MAX_ROWS: env.int({
    default: 5_000_000,
    min: 1,
    description: 'most lines one CSV import may hold (more: 413 payload_too_large)',
  }),
};
