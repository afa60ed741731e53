// Baseline for the auth benchmark: a bare oidc-provider (no Nest, no Gatehouse code) with the same signing keys,
// one static client, client_credentials + introspection, and a minimal PostgreSQL adapter (one table, jsonb).
// Started by run.mjs as a child process:
//   BARE_PORT, BARE_ISSUER, BARE_DATABASE_URL, BARE_CLIENT_ID, BARE_CLIENT_SECRET, BARE_JWKS (private JWKS JSON),
//   BARE_RESOURCES (JSON: { "<identifier>": { "format": "jwt"|"opaque", "alg": "RS256"|"ES256", "kid", "scope" } })
import http from 'node:http';
import pg from 'pg';
import Provider, { errors } from 'oidc-provider';

const env = process.env;
const pool = new pg.Pool({ connectionString: env.BARE_DATABASE_URL, max: 10 });

await pool.query(`CREATE TABLE IF NOT EXISTS bench_bare_oidc (
  model text NOT NULL, id text NOT NULL, payload jsonb NOT NULL, grant_id text, expires_at timestamptz,
  PRIMARY KEY (model, id))`);

/** The smallest adapter that serves client_credentials and introspection: upsert, find, destroy. */
class MinimalPgAdapter {
  constructor(model) {
    this.model = model;
  }
  async upsert(id, payload, expiresIn) {
    await pool.query(
      `INSERT INTO bench_bare_oidc (model, id, payload, grant_id, expires_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at`,
      [
        this.model,
        id,
        payload,
        payload.grantId ?? null,
        expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      ],
    );
  }
  async find(id) {
    const r = await pool.query(
      'SELECT payload FROM bench_bare_oidc WHERE model = $1 AND id = $2 AND (expires_at IS NULL OR expires_at > now())',
      [this.model, id],
    );
    return r.rows[0]?.payload;
  }
  async findByUid() {}
  async findByUserCode() {}
  async consume(id) {
    await pool.query(
      `UPDATE bench_bare_oidc SET payload = payload || '{"consumed":1}' WHERE model = $1 AND id = $2`,
      [this.model, id],
    );
  }
  async destroy(id) {
    await pool.query('DELETE FROM bench_bare_oidc WHERE model = $1 AND id = $2', [this.model, id]);
  }
  async revokeByGrantId(grantId) {
    await pool.query('DELETE FROM bench_bare_oidc WHERE model = $1 AND grant_id = $2', [this.model, grantId]);
  }
}

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
