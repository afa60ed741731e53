import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Sql } from '@gatehouse/db';
import { sealedIn } from '@gatehouse/identity-data';

export interface SecretSealer {
  encrypt(plain: string, binding: string): string;
  decrypt(sealed: string, binding: string): string;
}

/** Server signing algorithms: RS256 (the ID token default every OIDC client accepts) and ES256. */
export const SIGNING_ALGS = ['RS256', 'ES256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

export interface LoadedKey {
  kid: string;
  alg: SigningAlg;
  privateJwk: JWK;
  publicJwk: JWK;
  active: boolean;
  createdAt: Date;
  expiresAt: Date | null;
}

export interface KeySet {
  /** Every published key, active keys first (oidc-provider signs with the first matching key). */
  keys: LoadedKey[];
  /** kid of the active key per algorithm. */
  active: Record<SigningAlg, string>;
  /** Changes whenever a key is added, rotated or retired. */
  fingerprint: string;
}

interface KeyRow {
  kid: string;
  alg: string;
  private_jwk_enc: string;
  public_jwk: JWK;
  created_at: Date;
  rotated_at: Date | null;
  expires_at: Date | null;
}

const LOCK_KEY = 'gatehouse:auth:signing-keys';

async function newKey(alg: SigningAlg): Promise<{ kid: string; privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'RS256' ? { modulusLength: 2048 } : {}),
  });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  const privateJwk: JWK = { ...jwk, kid, alg, use: 'sig' };
  const publicJwk: JWK = { kty: jwk.kty, kid, alg, use: 'sig' };
  for (const p of ['n', 'e', 'crv', 'x', 'y'] as const) if (jwk[p] !== undefined) publicJwk[p] = jwk[p];
  return { kid, privateJwk, publicJwk };
}

/**
 * Token signing keys in `signing_keys`: private JWKs sealed with the SecretBox, public JWKs in clear for /jwks.
 * A key is active while `rotated_at` is null; a rotated key stays published until `expires_at`, by then every token
 * it signed has expired. Key changes are serialized across processes with a PostgreSQL advisory lock.
 */
export class SigningKeys {
  constructor(
    private readonly sql: Sql,
    private readonly box: SecretSealer,
  ) {}

  /** Make sure every algorithm has an active key (first start); returns the kids it created. */
  async ensureActiveKeys(): Promise<string[]> {
    return this.locked(async (q) => {
      const rows = await q.rows<{ alg: string }>(
        'SELECT DISTINCT alg FROM signing_keys WHERE rotated_at IS NULL',
      );
      const have = new Set(rows.map((r) => r.alg));
      const created: string[] = [];
      for (const alg of SIGNING_ALGS) {
        if (have.has(alg)) continue;
        created.push(await this.insert(q, alg));
      }
      return created;
    });
  }

  /**
   * Add a new active key per algorithm; the previous active keys stop signing now and stay published for
   * `graceSeconds` (the longest lifetime of a token they may have signed). Keys past their expiry are deleted.
   */
  async rotate(graceSeconds: number): Promise<{ added: string[]; retired: string[]; deleted: number }> {
    return this.locked(async (q) => {
      const retired = await q.rows<{ kid: string }>(
        `UPDATE signing_keys SET rotated_at = now(), expires_at = now() + make_interval(secs => $1)
          WHERE rotated_at IS NULL RETURNING kid`,
        [graceSeconds],
      );
      const added: string[] = [];
      for (const alg of SIGNING_ALGS) added.push(await this.insert(q, alg));
      const deleted = await q.rows<{ kid: string }>(
        'DELETE FROM signing_keys WHERE expires_at IS NOT NULL AND expires_at <= now() RETURNING kid',
      );
      return { added, retired: retired.map((r) => r.kid), deleted: deleted.length };
    });
  }

  /** The published keys (active ones and rotated ones not yet expired). */
  async load(): Promise<KeySet> {
    const rows = await this.sql.rows<KeyRow>(
      `SELECT kid, alg, private_jwk_enc, public_jwk, created_at, rotated_at, expires_at FROM signing_keys
        WHERE expires_at IS NULL OR expires_at > now()
        ORDER BY (rotated_at IS NULL) DESC, created_at DESC, kid`,
    );
    const keys: LoadedKey[] = rows
      .filter((r) => (SIGNING_ALGS as readonly string[]).includes(r.alg))
      .map((r) => ({
        kid: r.kid,
        alg: r.alg as SigningAlg,
        privateJwk: JSON.parse(this.box.decrypt(r.private_jwk_enc, sealedIn.signingKey(r.kid))) as JWK,
        publicJwk: r.public_jwk,
        active: r.rotated_at === null,
        createdAt: new Date(r.created_at),
        expiresAt: r.expires_at ? new Date(r.expires_at) : null,
      }));
    const active = {} as Record<SigningAlg, string>;
    for (const alg of SIGNING_ALGS) {
      const k = keys.find((x) => x.alg === alg && x.active) ?? keys.find((x) => x.alg === alg);
      if (!k)
        throw new Error(`no ${alg} signing key: run the token server once (it creates them) or rotate-keys`);
      active[alg] = k.kid;
    }
    return { keys, active, fingerprint: await this.fingerprint() };
  }

  /** Cheap check whether the published key set changed (another process rotated). */
  async fingerprint(): Promise<string> {
    const rows = await this.sql.rows<{ f: string | null }>(
      `SELECT string_agg(kid || ':' || coalesce(extract(epoch FROM rotated_at)::text, '-'), ',' ORDER BY kid) AS f
         FROM signing_keys WHERE expires_at IS NULL OR expires_at > now()`,
    );
    return rows[0]?.f ?? '';
  }

  private async insert(q: Sql, alg: SigningAlg): Promise<string> {
    const { kid, privateJwk, publicJwk } = await newKey(alg);
    await q.rows(
      `INSERT INTO signing_keys (kid, alg, use, private_jwk_enc, public_jwk) VALUES ($1, $2, 'sig', $3, $4::jsonb)`,
      [
        kid,
        alg,
        this.box.encrypt(JSON.stringify(privateJwk), sealedIn.signingKey(kid)),
        JSON.stringify(publicJwk),
      ],
    );
    return kid;
  }

  /** Run `fn` in one transaction holding the key-management advisory lock (on a single connection). */
  private async locked<T>(fn: (q: Sql) => Promise<T>): Promise<T> {
    return this.sql.transaction(async (q) => {
      await q.rows('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [LOCK_KEY]);
      return fn(q);
    });
  }
}
