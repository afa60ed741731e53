import type { Configuration } from 'oidc-provider';
import type { GatehouseClient } from './client.js';

export interface TokenLifetimes {
  /** Access tokens without a resource (userinfo only), seconds. */
  accessToken: number;
  idToken: number;
  refreshToken: number;
  grant: number;
  /** Device codes (RFC 8628 expires_in), seconds. */
  deviceCode: number;
}

/** Lifetimes of every artifact: a resource's own access token lifetime, a client's own ID and refresh token ones. */
export const ttlConfig = (lifetimes: TokenLifetimes): Pick<Configuration, 'ttl'> => ({
  ttl: {
    AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? lifetimes.accessToken,
    ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? lifetimes.accessToken,
    IdToken: (_ctx, _token, client) =>
      (client as unknown as GatehouseClient | undefined)?.id_token_ttl ?? lifetimes.idToken,
    RefreshToken: (_ctx, _token, client) =>
      (client as unknown as GatehouseClient | undefined)?.refresh_token_ttl ?? lifetimes.refreshToken,
    Grant: lifetimes.grant,
    AuthorizationCode: 60,
    DeviceCode: lifetimes.deviceCode,
    Interaction: 3600,
    Session: lifetimes.grant,
    BackchannelAuthenticationRequest: 600,
    PreAuthorizedCode: 600,
  },
});
