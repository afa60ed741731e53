import { authUrl, databaseUrl, treeDatabaseUrl, treePort } from '@gatehouse/config';

export const treeEnv = {
  TREE_PORT: treePort,
  TREE_DATABASE_URL: treeDatabaseUrl,
  DATABASE_URL: databaseUrl,
  AUTH_URL: authUrl,
};
