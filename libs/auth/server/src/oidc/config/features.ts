import type { Configuration } from 'oidc-provider';
import type { OidcData } from '../oidc-data.js';
import { devicePages, logoutPages } from './pages.js';
import type { ResourceServerInfo } from './resources.js';

/**
 * oidc-provider's features: client_credentials, introspection and revocation (who may see or revoke which token),
 * resource indicators (our resources, resources.ts), userinfo, the device flow and RP-initiated logout (our pages).
 */
export const featuresConfig = (
  data: OidcData,
  getResourceServerInfo: ResourceServerInfo,
): Pick<Configuration, 'features'> => ({
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      // Any authenticated confidential client (a resource server) may introspect; a public one its own tokens.
      allowedPolicy: async (ctx, client, token) =>
        client.clientAuthMethod !== 'none' || token.clientId === ctx.oidc.client?.clientId,
    },
    revocation: {
      enabled: true,
      // RFC 7009: a token of another client is left alone and the answer is still 200.
      allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf ?? undefined,
      // A refresh keeps the audience the grant was for.
      useGrantedResource: async () => true,
      getResourceServerInfo,
    },
    userinfo: { enabled: true },
    // RFC 8628: POST /device/code, the user enters the code at /device (then login and consent as for
    // /authorize), the device polls /token with grant_type device_code.
    deviceFlow: { enabled: true, charset: 'base-20', mask: '****-****', ...devicePages() },
    // RP-initiated logout at /session/end: a confirmation page (no JavaScript), post_logout_redirect_uri checked
    // against client_metadata.urls.logout_urls.
    rpInitiatedLogout: { enabled: true, ...logoutPages(data) },
    pushedAuthorizationRequests: { enabled: false },
  },
});
