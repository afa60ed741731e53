import { authPort, databaseUrl, env } from '@gatehouse/config';

export const authEnv = {
  AUTH_PORT: authPort,
  DATABASE_URL: databaseUrl,
  ISSUER: env.url({
    optional: true,
    description: "the token server's public URL and the iss of its tokens (default http://localhost:<AUTH_PORT>)",
  }),
};
