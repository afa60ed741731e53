import { authPort, authUrl, databaseUrl, env, identityPort } from '@gatehouse/config';
import { bearerEnv } from '@gatehouse/bearer';
import { identityDataEnv } from '@gatehouse/identity-data';
import { deliveryEnv } from '@gatehouse/delivery';

export const identityEnv = {
  IDENTITY_PORT: identityPort,
  DATABASE_URL: databaseUrl,
  AUTH_URL: authUrl,
  ...identityDataEnv,
  ...bearerEnv,
  // Tickets and invitations: their links are pages of the token server at its PUBLIC url, sent by e-mail.
  ISSUER: env.url({
    optional: true,
    description:
      "the token server's public URL (its ISSUER), the base of ticket and invitation links (default http://localhost:<AUTH_PORT>)",
  }),
  AUTH_PORT: authPort,
  ...deliveryEnv,
};
