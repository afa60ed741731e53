import { authUrl, databaseUrl, env, identityPort } from '@gatehouse/config';
import { bearerEnv } from '@gatehouse/bearer';
import { identityDataEnv } from '@gatehouse/identity-data';

export const identityEnv = {
  IDENTITY_PORT: identityPort,
  DATABASE_URL: databaseUrl,
  AUTH_URL: authUrl,
  ...identityDataEnv,
  ...bearerEnv,
  MULTI_INSTANCE: env.bool({
    default: false,
    description:
      'multi-instance mode: the Instances operations (/api/v1|v2/instances) work; unset or false, they answer 501 not_implemented',
  }),
};
