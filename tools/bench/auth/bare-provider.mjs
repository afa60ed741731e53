// Baseline for the auth benchmark: a bare oidc-provider (no Nest, no Gatehouse code) with the same signing keys,
// one static client, client_credentials + introspection, and a minimal PostgreSQL adapter (one table, jsonb).
// Started by run.mjs as a child process:
//   BARE_PORT, BARE_ISSUER, BARE_DATABASE_URL, BARE_CLIENT_ID, BARE_CLIENT_SECRET, BARE_JWKS (private JWKS JSON),
//   BARE_RESOURCES (JSON: { "<identifier>": { "format": "jwt"|"opaque", "alg": "RS256"|"ES256", "kid", "scope" } })
import http from 'node:http';
import pg from 'pg';
import Provider, { errors } from 'oidc-provider';
import { minimalPgAdapter } from './bare-adapter.mjs';

const env = process.env;
const pool = new pg.Pool({ connectionString: env.BARE_DATABASE_URL, max: 10 });

/** The smallest adapter that serves client_credentials and introspection (./bare-adapter.mjs). */
const MinimalPgAdapter = await minimalPgAdapter(pool, 'bench_bare_oidc');

const resources = JSON.parse(env.BARE_RESOURCES);
const provider = new Provider(env.BARE_ISSUER, {
  adapter: MinimalPgAdapter,
  clients: [
    {
      client_id: env.BARE_CLIENT_ID,
      client_secret: env.BARE_CLIENT_SECRET,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    },
  ],
  jwks: JSON.parse(env.BARE_JWKS),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true, allowedPolicy: async () => true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, identifier) => {
        const r = resources[identifier];
        if (!r) throw new errors.InvalidTarget();
        return {
          scope: r.scope,
          audience: identifier,
          accessTokenTTL: 3600,
          accessTokenFormat: r.format,
          ...(r.format === 'jwt' ? { jwt: { sign: { alg: r.alg, kid: r.kid } } } : {}),
        };
      },
    },
  },
  ttl: { ClientCredentials: 3600, AccessToken: 3600 },
});

const server = http.createServer(provider.callback());
server.listen(Number(env.BARE_PORT), '127.0.0.1', () => process.stdout.write('bare provider ready\n'));
const stop = () => server.close(() => pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
