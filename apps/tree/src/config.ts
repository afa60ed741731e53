import {
  authUrl,
  databaseUrl,
  env,
  treeDatabaseUrl,
  treePort,
  consolePort,
  consoleUrl,
  corsOrigins,
} from '@gatehouse/config';
import { bearerEnv } from '@gatehouse/bearer';

export const treeEnv = {
  TREE_PORT: treePort,
  CORS_ORIGINS: corsOrigins,
  CONSOLE_PORT: consolePort,
  CONSOLE_URL: consoleUrl,
  TREE_DATABASE_URL: treeDatabaseUrl,
  DATABASE_URL: databaseUrl,
  AUTH_URL: authUrl,
  ...bearerEnv,
  TREE_IMPORT_MAX_ROWS: env.int({
    default: 5_000_000,
    min: 1,
    description: 'most lines one CSV import may hold (more: 413 payload_too_large)',
  }),
  TREE_IMPORT_MAX_BYTES: env.int({
    default: 1024 * 1024 * 1024,
    min: 1,
    description: 'largest CSV upload in bytes (more: 413 payload_too_large, nothing written)',
  }),
  TREE_IMPORT_MAX_RECORD_BYTES: env.int({
    default: 64 * 1024,
    min: 256,
    description: 'longest line of a CSV upload in bytes (more: 413 payload_too_large, nothing written)',
  }),
  TREE_IMPORT_IDLE_SEC: env.int({
    default: 30,
    min: 1,
    description:
      'seconds a CSV upload may send nothing before it is aborted (400, nothing written, lock and connection released)',
  }),
};
