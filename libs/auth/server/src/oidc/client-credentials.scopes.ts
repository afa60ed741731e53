import type { IncomingMessage } from 'node:http';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** Marks a request handed to oidc-provider whose answer teaches a scope: the `scope` it asked (or NOT_ASKED). */
const ASKED = Symbol('gatehouse.clientCredentialsScopeAsked');
const NOT_ASKED = '\u0000';

type Marked = IncomingMessage & { [ASKED]?: string };

/**
 * The scope of a client_credentials token, as oidc-provider computes it, learned from its own answers rather than
 * copied from its code. oidc-provider's scope is a function of two strings: the scope the resource server grants
 * the client (getResourceServerInfo, config/resources.ts) and the `scope` the request asks (none: every granted
 * scope); a client with a scope allow-list of its own is never served by the fast path. The fast path looks the
 * pair up here; the first request of a pair goes to oidc-provider (`ask`), and its `grant.success` records the
 * answer under the pair oidc-provider itself used (`learn`), so a grant changed while that request ran is never
 * learned under the old grant. Bounded: the oldest pair goes first.
 */
export class LearnedScopes {
  private readonly answers = new Map<string, string>();

  constructor(private readonly max = 10_000) {}

  /** oidc-provider's scope for a resource granting `granted` (space-separated) and `requested`; undefined: unknown. */
  answer(granted: string, requested: string | undefined): string | undefined {
    return this.answers.get(`${granted}\n${requested ?? NOT_ASKED}`);
  }

  /** Marks `req`, about to be handed to oidc-provider, so that its answer is learned. */
  ask(req: IncomingMessage, requested: string | undefined): void {
    (req as Marked)[ASKED] = requested ?? NOT_ASKED;
  }

  /** The mark of `from` on the request replayed to oidc-provider in its place. */
  carry(from: IncomingMessage, to: IncomingMessage): void {
    const asked = (from as Marked)[ASKED];
    if (asked !== undefined) (to as Marked)[ASKED] = asked;
  }

  /** oidc-provider's `grant.success`: a marked client_credentials request's scope, under the grant it used. */
  learn(ctx: KoaContextWithOIDC): void {
    const requested = (ctx.req as Marked)[ASKED];
    if (requested === undefined) return;
    const token = ctx.oidc.entities.ClientCredentials as
      { scope?: string; resourceServer?: { scope?: string } } | undefined;
    const server = token?.resourceServer;
    if (!token || !server || ctx.oidc.client?.scope) return;
    const key = `${server.scope ?? ''}\n${requested}`;
    if (!this.answers.has(key) && this.answers.size >= this.max) {
      this.answers.delete(this.answers.keys().next().value as string);
    }
    this.answers.set(key, token.scope ?? '');
  }

  get size(): number {
    return this.answers.size;
  }
}
