import type { Redis } from 'ioredis';
import type Provider from 'oidc-provider';
import type { AdapterPayload, Configuration } from 'oidc-provider';
import type { Sql } from '@gatehouse/db';
import {
  clientRules,
  EXTRA_CLIENT_PROPERTIES,
  secretExpired,
  SUPPORTED_GRANT_TYPES,
  toProviderClient,
} from '@gatehouse/oidc-clients';
import { createAdapterFactory } from '../adapters/adapter-factory.js';
import { isClientId, type OidcClientRecord, type OidcData } from '../oidc-data.js';

/** Client authentication at the token, introspection and revocation endpoints. */
const CLIENT_AUTH_METHODS = clientRules().clientAuthMethods ?? [];

export interface StoreDeps {
  sql: Sql;
  data: OidcData;
  redis?: Redis;
  redisPrefix?: string;
}

type ProviderClient = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;
type Handoff = { id: string; metadata: AdapterPayload } | undefined;

/**
 * Where oidc-provider keeps its artifacts and finds its clients: our adapters, with the clients' metadata built
 * from their rows. `install` (once the provider exists) keeps each row's Client (keepClientsWithTheirRows).
 */
export function clientStore(deps: StoreDeps): {
  config: Pick<Configuration, 'adapter' | 'clients'>;
  install(provider: Provider): void;
} {
  const { data } = deps;
  // Client metadata handed to oidc-provider's adapter read by `Client.find` (keepClientsWithTheirRows), instead of
  // building it again.
  let handoff: Handoff;
  const adapter = createAdapterFactory({
    sql: deps.sql,
    redis: deps.redis,
    redisPrefix: deps.redisPrefix,
    onGrantGone: (grantId) => data.forgetGrant(grantId),
    clients: {
      find: async (clientId: string) => {
        if (handoff?.id === clientId) {
          const { metadata } = handoff;
          handoff = undefined;
          return metadata;
        }
        const record = await data.findClient(clientId);
        return record ? toProviderClient(record, SUPPORTED_GRANT_TYPES) : undefined;
      },
    },
  });
  return {
    config: { adapter, clients: [] },
    install: (provider) =>
      keepClientsWithTheirRows(provider, data, (metadata) => {
        handoff = metadata;
      }),
  };
}

/**
 * What makes client metadata valid (auth methods, defaults, response types), shared with the management API, which
 * refuses a client this provider would refuse; our extra metadata; the auth methods discovery names.
 */
export const clientMetadataConfig = (): Pick<
  Configuration,
  'clientAuthMethods' | 'clientDefaults' | 'responseTypes' | 'discovery' | 'extraClientMetadata'
> => ({
  ...clientRules(),
  // RFC 8414: without these a client must assume client_secret_basic only; introspection (tokeninfo.handler.ts)
  // and revocation take the token endpoint's methods (none: a public client, its own tokens).
  discovery: {
    introspection_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  },
  extraClientMetadata: { properties: EXTRA_CLIENT_PROPERTIES },
});

/**
 * oidc-provider's Client of a client row, kept with the row object: the state cache (and a request's memo) hand back
 * the same object until the row changes, so a row already turned into a Client is answered at once. Otherwise
 * oidc-provider rebuilds the client's metadata on every look-up (several per request) and finds the Client it made
 * before by a SHA-256 of the metadata's JSON, a visible share of a code flow's CPU. The metadata depends on the
 * time in one way only, whether the secret has expired (toProviderClient), which is part of the key. A row not seen
 * before goes through oidc-provider's own find (its validation, its errors), with the metadata just built handed to
 * its adapter read (`handOff`) rather than read and built a second time.
 */
function keepClientsWithTheirRows(
  provider: Provider,
  data: OidcData,
  handOff: (metadata: Handoff) => void,
): void {
  const Client = provider.Client;
  const find = Client.find.bind(Client);
  const made = new WeakMap<OidcClientRecord, { expired: boolean; client: ProviderClient }>();
  Client.find = async (id: string) => {
    // Only a well-formed client id can name a row (anything else: oidc-provider's own answer, none).
    if (!isClientId(id)) return find(id);
    const record = await data.findClient(id);
    // No row, or a row that makes no client (a confidential one without a secret): no client, as the adapter says.
    if (!record) return undefined;
    const expired = secretExpired(record);
    const known = made.get(record);
    if (known && known.expired === expired) return known.client;
    const metadata = toProviderClient(record, SUPPORTED_GRANT_TYPES);
    if (!metadata) return undefined;
    // oidc-provider asks its adapter at once (before its first await); should it not, the adapter reads the row.
    handOff({ id, metadata });
    const pending = find(id);
    handOff(undefined);
    const client = await pending;
    if (client) made.set(record, { expired, client });
    return client;
  };
}
