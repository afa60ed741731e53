import { createPrivateKey, randomFillSync, sign, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeySet } from '../keys/signing-keys.js';
import { GRANT_TYPE_ALIASES } from '@gatehouse/oidc-clients';
import { secretAuthenticates, secretCredentials } from '../client-auth/index.js';
import type { OidcData } from './oidc-data.js';
import type { Params } from './request-body.js';
import { LearnedScopes } from './client-credentials.scopes.js';
import type Provider from 'oidc-provider';
import { clientAddress } from '@gatehouse/http';
import type { AuthEvents } from '../events/auth-events.js';

/** The parameters a plain client_credentials request may carry (anything else: oidc-provider answers it). */
const PLAIN_PARAMS = new Set(['grant_type', 'scope', 'resource', 'client_id', 'client_secret']);
/** oidc-provider's scope syntax (lib/helpers/is_valid_scope.js). */
const SCOPE_SYNTAX = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/u;
/** Headers that ask for more than a plain bearer token (DPoP, attestations) or for CORS: oidc-provider's. */
const NOT_PLAIN_HEADERS = ['dpop', 'oauth-client-attestation', 'oauth-client-attestation-pop', 'origin'];

/** nanoid's alphabet, as oidc-provider's token ids (43 characters, 256 bits). */
const ALPHABET = 'useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict';

/** Random bytes drawn 4 KiB at a time (as nanoid does): one system call per ~95 token ids, not one each. */
const pool = Buffer.allocUnsafe(4096);
let offset = pool.length;

function tokenId(): string {
  if (offset + 43 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  let id = '';
  for (let i = offset; i < offset + 43; i++) id += ALPHABET[pool[i] & 63];
  offset += 43;
  return id;
}

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

interface Signer {
  kid: string;
  alg: 'RS256' | 'ES256';
  key: KeyObject;
}

export interface FastClientCredentialsDeps {
  data: OidcData;
  issuer: string;
  /** Access token lifetime of a resource without its own (AUTH_ACCESS_TOKEN_TTL_SEC). */
  defaultTtlSec: number;
  /**
   * Whether oidc-provider accepts the client (its metadata passes oidc-provider's own validation) and gives it no
   * scope allow-list of its own (the learned scopes assume none).
   */
  providerAccepts(clientId: string): Promise<boolean>;
  /** The audit trail: every token issued here is recorded (queued; written in batches). */
  events?: AuthEvents;
}

/**
 * client_credentials, answered without oidc-provider's Koa pipeline for the plain request that makes up nearly all
 * machine-to-machine traffic: client_secret_basic or client_secret_post, one audience signed with a server key
 * (RS256 or ES256), no DPoP, no attestation, no CORS, no `fields`. The answer is the one oidc-provider gives (the
 * same JWT header and claims, the same JSON body and headers; tests compare them); the signature is node:crypto's,
 * on this thread. Anything else -- a wrong secret, an unknown audience, an HS256 or opaque resource, a scope
 * outside the grant, any parameter or header more -- is left to oidc-provider (`tryIssue` answers false), which
 * then gives its own answer or error.
 */
export class FastClientCredentials {
  private signers = new Map<string, Signer>();
  /** Tokens issued here (the rest went to oidc-provider); tests check the path is taken. */
  issued = 0;
  /** oidc-provider's verdict on a client record (the state cache hands out the same object until it changes). */
  private readonly accepted = new WeakMap<object, boolean>();
  /** The scopes oidc-provider gave, by grant and request (its rule, learned from its answers). */
  readonly scopes = new LearnedScopes();

  constructor(private readonly deps: FastClientCredentialsDeps) {}

  /** The active signing keys (called whenever the key set is installed). */
  install(keys: KeySet, provider?: Provider): void {
    // each provider built (one per key set) teaches the scopes of the requests handed to it
    provider?.on('grant.success', (ctx) => this.scopes.learn(ctx));
    const signers = new Map<string, Signer>();
    for (const alg of ['RS256', 'ES256'] as const) {
      const kid = keys.active[alg];
      const k = keys.keys.find((x) => x.kid === kid);
      if (!k) continue;
      signers.set(alg, { kid, alg, key: createPrivateKey({ key: k.privateJwk as never, format: 'jwk' }) });
    }
    this.signers = signers;
  }

  /** Answers a plain client_credentials request and returns true; false: oidc-provider must answer it. */
  async tryIssue(req: IncomingMessage, res: ServerResponse, params: Params): Promise<boolean> {
    if (params.grant_type !== 'client_credentials') return false;
    for (const key in params) {
      if (!PLAIN_PARAMS.has(key) || typeof params[key] !== 'string') return false;
    }
    const headers = req.headers;
    for (const h of NOT_PLAIN_HEADERS) if (headers[h] !== undefined) return false;
    const resource = params.resource as string;
    const scopeParam = params.scope as string | undefined;
    if (scopeParam !== undefined && !SCOPE_SYNTAX.test(scopeParam)) return false;

    // client_secret_basic or client_secret_post, one of them, read as oidc-provider reads them
    const creds = secretCredentials(
      headers.authorization,
      params.client_id as string | undefined,
      params.client_secret as string | undefined,
    );
    if (!creds) return false;
    const clientId = creds.id;

    const { client, access } = await this.deps.data.clientAndAccess(clientId, resource);
    if (!client || !access?.authorized || !secretAuthenticates(client, creds.secret)) return false;
    if (!client.grantTypes.some((g) => (GRANT_TYPE_ALIASES[g] ?? g) === 'client_credentials')) return false;
    let accepted = this.accepted.get(client);
    if (accepted === undefined) {
      accepted = await this.deps.providerAccepts(client.id);
      this.accepted.set(client, accepted);
    }
    if (!accepted) return false;

    const { resource: server } = access;
    const signer = this.signers.get((server.signingAlgorithm ?? '').toUpperCase());
    if (!signer) return false;

    const granted = access.scopes;
    if (scopeParam === undefined && granted.length === 0) return false;
    const scope = this.scopes.answer(granted.join(' '), scopeParam);
    if (scope === undefined) {
      // not asked before with this grant: oidc-provider answers, and its answer is learned
      this.scopes.ask(req, scopeParam);
      return false;
    }

    const ttl = server.tokenLifetime > 0 ? server.tokenLifetime : this.deps.defaultTtlSec;
    const iat = Math.floor(Date.now() / 1000);
    const payload = {
      ...(client.tenantId ? { tenant_id: client.tenantId } : {}),
      jti: tokenId(),
      sub: client.id,
      iat,
      exp: iat + ttl,
      ...(scope ? { scope } : {}),
      client_id: client.id,
      iss: this.deps.issuer,
      aud: resource,
    };
    const input = `${b64url(JSON.stringify({ alg: signer.alg, typ: 'at+jwt', kid: signer.kid }))}.${b64url(JSON.stringify(payload))}`;
    const signature =
      signer.alg === 'ES256'
        ? sign('sha256', Buffer.from(input), { key: signer.key, dsaEncoding: 'ieee-p1363' })
        : sign('sha256', Buffer.from(input), signer.key);
    const body = JSON.stringify({
      access_token: `${input}.${signature.toString('base64url')}`,
      expires_in: ttl,
      ...(scope ? { scope } : {}),
      token_type: 'Bearer',
    });
    res.statusCode = 200;
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
    this.issued++;
    if (this.deps.events) {
      const ua = headers['user-agent'];
      const ip = clientAddress(req) ?? null;
      // a machine client asking again and again (no token cache): one event per flush interval, with a count
      this.deps.events.recordRepeatable(`${client.id}\n${resource}\n${ip}\n${ua}`, {
        type: 'token.issued',
        instanceId: client.instanceId,
        tenantId: client.tenantId,
        actor: { type: 'client', id: client.id },
        clientId: client.id,
        ip,
        userAgent: ua ?? null,
        details: { grant_type: 'client_credentials', audience: resource },
      });
    }
    return true;
  }
}
