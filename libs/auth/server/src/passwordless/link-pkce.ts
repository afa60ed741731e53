import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { sameSecret } from '../interaction/cookies.js';

/** The query parameter of /authorize that carries a sign-in link's PKCE waiver. */
export const LINK_PKCE_PARAM = 'link_pkce';

/** Seconds a waiver counts: the link's redirect reaches /authorize at once. */
const WAIVER_TTL_SEC = 120;

/** Authorization requests whose PKCE waiver checked out (oidc-provider's `pkce.required` asks). */
const waived = new WeakSet<IncomingMessage>();

/**
 * Document 2's sign-in link asks for an authorization code without a `code_challenge` (its request has none): the
 * link, once its owner confirmed it, continues at /authorize for a confidential client, which redeems the code with
 * its secret (as Auth0's passwordless link of a regular web application). Every other authorization request keeps
 * needing PKCE. The link's redirect carries this waiver: an HMAC (a key derived from SECRET_ENCRYPTION_KEY, so
 * every replica checks it) over the client, the redirect URI and the state, valid for two minutes; a request whose
 * waiver checks out skips PKCE, and only for a confidential client (see oidc/config/interactions.ts, `pkce.required`).
 */
export class LinkPkceWaiver {
  constructor(
    /** Current key first (older ones still verify). */
    private readonly keys: Buffer[],
    private readonly clock: () => number = Date.now,
  ) {}

  /** The waiver for an authorization request of this client, redirect URI and state. */
  sign(clientId: string, redirectUri: string, state: string | undefined): string {
    const exp = Math.floor(this.clock() / 1000) + WAIVER_TTL_SEC;
    return `${exp}.${this.mac(this.keys[0], clientId, redirectUri, state ?? '', exp)}`;
  }

  /**
   * Marks `req` (GET /authorize) as waived when its query carries a valid waiver for its own parameters. `query`:
   * the request's query when the caller parsed it already.
   */
  check(req: IncomingMessage, query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '')): void {
    const waiver = query.get(LINK_PKCE_PARAM);
    if (!waiver) return;
    const [expText, mac] = waiver.split('.');
    const exp = Number(expText);
    if (!Number.isSafeInteger(exp) || exp * 1000 <= this.clock() || !mac) return;
    const clientId = query.get('client_id') ?? '';
    const redirectUri = query.get('redirect_uri') ?? '';
    const state = query.get('state') ?? '';
    if (this.keys.some((k) => sameSecret(this.mac(k, clientId, redirectUri, state, exp), mac)))
      waived.add(req);
  }

  private mac(key: Buffer, clientId: string, redirectUri: string, state: string, exp: number): string {
    return createHmac('sha256', key)
      .update(JSON.stringify(['link-pkce', clientId, redirectUri, state, exp]))
      .digest('base64url');
  }
}

/** Whether this authorization request carries a valid sign-in link waiver (LinkPkceWaiver.check). */
export const pkceWaived = (req: IncomingMessage): boolean => waived.has(req);
