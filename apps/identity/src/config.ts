import { authUrl, databaseUrl, identityPort } from '@gatehouse/config';
import { bearerEnv } from '@gatehouse/bearer';
import { identityDataEnv } from '@gatehouse/identity-data';

export const identityEnv = {
  IDENTITY_PORT: identityPort,
  DATABASE_URL: databaseUrl,
  AUTH_URL: authUrl,
  ...identityDataEnv,
  ...bearerEnv,
};
