import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newKey(alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `k-${randomBytes(6).toString('hex')}`;
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/**
 * A real external OpenID Connect issuer for token exchange tests: an HTTP server on a free port serving its
 * discovery document and its JWKS, and ID tokens signed with jose by its current key. `rotate()` publishes a new
 * key (the old one stays published unless dropped), as a provider rotating its keys does.
 */
export class LocalIssuer {
  keys: SigningKey[] = [];
  /** How often each path was fetched. */
  readonly hits = new Map<string, number>();
  private server?: Server;

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  get jwksUri(): string {
    return `${this.url}/jwks`;
  }

  static async start(): Promise<LocalIssuer> {
    const issuer = new LocalIssuer();
    issuer.keys = [await newKey()];
    issuer.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      issuer.hits.set(path, (issuer.hits.get(path) ?? 0) + 1);
      const json = (body: unknown) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(body));
      };
      if (path === '/.well-known/openid-configuration') {
        return json({
          issuer: issuer.url,
          jwks_uri: issuer.jwksUri,
          id_token_signing_alg_values_supported: ['RS256'],
        });
      }
      if (path === '/jwks') return json({ keys: issuer.keys.map((k) => k.publicJwk) });
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => issuer.server!.listen(0, '127.0.0.1', resolve));
    return issuer;
  }

  /** Publish a new current key; `dropOld` unpublishes the previous ones. */
  async rotate(dropOld = false): Promise<void> {
    const key = await newKey();
    this.keys = dropOld ? [key] : [key, ...this.keys];
  }

  /** An ID token of this issuer for `aud` about `sub` (claims override the defaults; `exp` in seconds from now). */
  async idToken(
    aud: string | string[],
    sub: string,
    claims: JWTPayload = {},
    opts: { expiresInSec?: number; key?: SigningKey; kid?: string; issuer?: string } = {},
  ): Promise<string> {
    const key = opts.key ?? this.keys[0];
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? key.kid, typ: 'JWT' })
      .setIssuer(opts.issuer ?? this.url)
      .setSubject(sub)
      .setAudience(aud)
      .setIssuedAt(now - 5)
      .setExpirationTime(now + (opts.expiresInSec ?? 300))
      .sign(key.privateKey);
  }

  /** A key this issuer never published (a forged token's signer). */
  static foreignKey(): Promise<SigningKey> {
    return newKey();
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
