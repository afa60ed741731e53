import type { ConsoleConfig } from './config';
import { MANAGEMENT_AUDIENCE, TREE_AUDIENCE } from './scopes';
import { createGatehouse, GatehouseError, unwrap } from './sdk';
import type { Session, TokenResponse, TokenTransport } from './session';

export { GatehouseError, unwrap };

/** Form body of the token server's endpoints (oidc-provider reads only form-encoded /token bodies). */
const form = (body: unknown) => new URLSearchParams(body as Record<string, string>).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The token server through the SDK's auth client: the session's /token and /revoke. */
export function tokenTransport(config: ConsoleConfig): TokenTransport {
  const { auth } = createGatehouse(config);
  return {
    async token(params) {
      const r = await auth.POST('/token', { body: params as never, bodySerializer: form, headers: FORM });
      return unwrap(r) as unknown as TokenResponse;
    },
    async revoke(params) {
      const r = await auth.POST('/revoke', {
        body: params as never,
        bodySerializer: form,
        headers: FORM,
        parseAs: 'text',
      });
      unwrap(r);
    },
  };
}

/** The SDK's clients of the signed-in administrator: each API with its own access token from the session. */
export function apiClients(config: ConsoleConfig, session: Session) {
  const gh = createGatehouse({
    ...config,
    tokens: {
      identity: () => session.token(MANAGEMENT_AUDIENCE),
      tree: () => session.token(TREE_AUDIENCE),
    },
  });
  return { identity: gh.identity, tree: gh.tree };
}
export type Api = ReturnType<typeof apiClients>;
