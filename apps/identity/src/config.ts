import { authUrl, databaseUrl, identityPort } from '@gatehouse/config';

export const identityEnv = {
  IDENTITY_PORT: identityPort,
  DATABASE_URL: databaseUrl,
  AUTH_URL: authUrl,
};
