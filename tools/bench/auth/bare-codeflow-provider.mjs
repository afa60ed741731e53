// Baseline for the authorization code flow benchmark (codeflow.mjs): a bare oidc-provider (no Nest, no Gatehouse
// code but the claims lists of its scopes) with its development interactions (the login and consent forms
// oidc-provider ships for development), the same signing keys, one static confidential client, and the minimal
// PostgreSQL adapter of bare-provider.mjs (one table, jsonb; here with the `uid` lookup the code flow needs). Started
// by codeflow.mjs as a child process:
//   BARE_PORT, BARE_ISSUER, BARE_DATABASE_URL, BARE_CLIENT_ID, BARE_CLIENT_SECRET, BARE_CALLBACK,
//   BARE_JWKS (private JWKS JSON), BARE_COOKIE_KEY, BARE_CLAIMS_MODULE (the built oidc/config/claims.js)
//
// Fairness: the development login accepts any login and password and signs in "the login" as the account, with no
// lookup and no hash. A product cannot do that, and Gatehouse verifies an argon2id hash on every sign-in, so this
// baseline does what the least real login does in front of the development form: it reads the account's row by its
// login from bench_bare_users (filled by codeflow.mjs from Gatehouse's users: same argon2id hashes, same parameters,
// verified with the same @node-rs/argon2) and refuses a wrong password; findAccount reads the account's claims by id.
import http from 'node:http';
import querystring from 'node:querystring';
import { pathToFileURL } from 'node:url';
import { verify } from '@node-rs/argon2';
import pg from 'pg';
import Provider from 'oidc-provider';
import { minimalPgAdapter } from './bare-adapter.mjs';

const env = process.env;
const pool = new pg.Pool({ connectionString: env.BARE_DATABASE_URL, max: 10 });

/** bare-provider.mjs's adapter, with findByUid: a session by its uid (./bare-adapter.mjs). */
const MinimalPgAdapter = await minimalPgAdapter(pool, 'bench_bare_flow', { uid: true });

// The standard claims of the scopes the benchmark asks for (openid profile): Gatehouse's own lists, from the built
// token server's claims module (data only: it runs no Gatehouse code), so both providers put the same claims in.
const { CLAIMS } = await import(pathToFileURL(env.BARE_CLAIMS_MODULE).href);

const provider = new Provider(env.BARE_ISSUER, {
  adapter: MinimalPgAdapter,
  clients: [
    {
      client_id: env.BARE_CLIENT_ID,
      client_secret: env.BARE_CLIENT_SECRET,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [env.BARE_CALLBACK],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: JSON.parse(env.BARE_JWKS),
  // Gatehouse's paths (oidc-provider's own default for the authorization endpoint is /auth)
  routes: { authorization: '/authorize', token: '/token' },
  scopes: ['openid', 'offline_access', 'profile'],
  claims: { openid: CLAIMS.openid, profile: CLAIMS.profile },
  // Signed cookies, as Gatehouse's (its cookie keys).
  cookies: {
    keys: [env.BARE_COOKIE_KEY],
    long: { httpOnly: true, sameSite: 'lax' },
    short: { httpOnly: true, sameSite: 'lax' },
  },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  findAccount: async (_ctx, sub) => {
    const r = await pool.query('SELECT claims FROM bench_bare_users WHERE id = $1', [sub]);
    const claims = r.rows[0]?.claims;
    return claims ? { accountId: sub, claims: () => ({ ...claims, sub }) } : undefined;
  },
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 60,
    IdToken: 3600,
    Interaction: 3600,
    Session: 86400,
    Grant: 86400,
  },
});

// The development login form posts `prompt=login&login=...&password=...` to /interaction/:uid. Checked here, before
// oidc-provider's route: the body is read once and handed on as req.body (oidc-provider's parser takes an already
// parsed body), with `login` replaced by the account's id (what the development route signs in).
provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && /^\/interaction\/[\w-]+$/.test(ctx.path)) {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const body = querystring.parse(Buffer.concat(chunks).toString());
    if (body.prompt === 'login') {
      const r = await pool.query('SELECT id, password_hash FROM bench_bare_users WHERE login = $1', [
        String(body.login ?? ''),
      ]);
      const row = r.rows[0];
      const ok = row
        ? await verify(row.password_hash, String(body.password ?? '')).catch(() => false)
        : false;
      if (!ok) {
        ctx.status = 401;
        ctx.type = 'html';
        ctx.body = '<p>wrong login or password</p>';
        return;
      }
      body.login = row.id;
    }
    /** @type {any} */ (ctx.req).body = body;
  }
  await next();
});

const server = http.createServer(provider.callback());
server.listen(Number(env.BARE_PORT), '127.0.0.1', () => process.stdout.write('bare provider ready\n'));
const stop = () => server.close(() => pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
