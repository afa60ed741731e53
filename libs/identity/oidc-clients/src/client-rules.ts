import { generateKeyPairSync } from 'node:crypto';
import Provider, { type ClientMetadata, type Configuration } from 'oidc-provider';
import {
  clientRules,
  EXTRA_CLIENT_PROPERTIES,
  REGISTERED_GRANT_TYPES,
  toProviderClient,
  type ClientForProvider,
} from './client-metadata.js';

/** A reason the token server would refuse a client: the field of the management API's record, and why. */
export interface ClientProblem {
  field: string;
  message: string;
}

/** oidc-provider's metadata names → the field of our client record that feeds them (client-metadata.ts). */
const FIELD_OF: Readonly<Record<string, string>> = {
  post_logout_redirect_uris: 'client_metadata.urls.logout_urls',
  redirect_uris: 'client_metadata.urls.callbacks',
  response_types: 'client_metadata.grant_types',
  grant_types: 'client_metadata.grant_types',
  application_type: 'client_type',
  client_name: 'client_name',
  client_secret: 'client_secret',
};
/** Longest names first: `post_logout_redirect_uris` must not be read as `redirect_uris`. */
const PROVIDER_NAMES = Object.keys(FIELD_OF).sort((a, b) => b.length - a.length);

/** The URL lists of client_metadata.urls the token server reads, and the OpenID names it does not (a common slip). */
const URL_LISTS = ['callbacks', 'logout_urls'] as const;
const NOT_READ: Readonly<Record<string, string>> = {
  redirect_uris: 'callbacks',
  post_logout_redirect_uris: 'logout_urls',
};

let validator: Provider | undefined;

/**
 * An oidc-provider instance configured as the token server's provider is for everything client validation depends
 * on (clientRules(), the features that add or check client metadata, the grant types it registers), used only to
 * validate client metadata. Made once per process; it serves no request and stores nothing.
 */
function rulesProvider(): Provider {
  if (validator) return validator;
  // The algorithms a client may ask for follow the signing keys: the token server signs with RS256 and ES256 keys.
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const configuration: Configuration = {
    ...clientRules(),
    clients: [],
    jwks: {
      keys: [
        { ...rsa, kid: 'rules-rs', use: 'sig', alg: 'RS256' },
        { ...ec, kid: 'rules-es', use: 'sig', alg: 'ES256' },
      ],
    },
    extraClientMetadata: { properties: EXTRA_CLIENT_PROPERTIES },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      deviceFlow: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      pushedAuthorizationRequests: { enabled: false },
    },
  } as Configuration;
  const provider = new Provider('https://client-rules.invalid', configuration);
  for (const name of REGISTERED_GRANT_TYPES) {
    provider.registerGrantType(name, () => Promise.reject(new Error('client validation only')));
  }
  validator = provider;
  return provider;
}

/** Shapes of client_metadata.urls the mapping would silently drop: the token server must see what was meant. */
function urlShapeProblem(metadata: Record<string, unknown> | null): ClientProblem | undefined {
  const urls = metadata?.urls;
  if (urls === undefined || urls === null) return undefined;
  if (typeof urls !== 'object' || Array.isArray(urls)) {
    return { field: 'client_metadata.urls', message: 'client_metadata.urls must be an object' };
  }
  const u = urls as Record<string, unknown>;
  for (const [name, instead] of Object.entries(NOT_READ)) {
    if (u[name] !== undefined) {
      return {
        field: `client_metadata.urls.${name}`,
        message: `client_metadata.urls.${name} is not read by the token server: use client_metadata.urls.${instead}`,
      };
    }
  }
  for (const name of URL_LISTS) {
    const list = u[name];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list) || list.some((x) => typeof x !== 'string' || x.length === 0)) {
      return {
        field: `client_metadata.urls.${name}`,
        message: `client_metadata.urls.${name} must be an array of URLs (strings)`,
      };
    }
  }
  return undefined;
}

/** oidc-provider's message with our field name in place of its metadata name. */
function problemOf(description: string): ClientProblem {
  const name = PROVIDER_NAMES.find((n) => description.startsWith(n));
  if (!name) return { field: 'client_metadata', message: `client_metadata: ${description}` };
  return { field: FIELD_OF[name], message: `${FIELD_OF[name]}${description.slice(name.length)}` };
}

/**
 * Why the token server would refuse this client, or undefined when it would accept it: the token server's own
 * mapping (toProviderClient) checked by oidc-provider's own client validation, configured as the token server's
 * provider is. A confidential client is checked with a stand-in secret when it has none yet (the management API
 * makes the secret).
 */
export async function clientProblem(client: ClientForProvider): Promise<ClientProblem | undefined> {
  const shape = urlShapeProblem(client.clientMetadata);
  if (shape) return shape;
  const metadata = toProviderClient({
    ...client,
    clientSecret: client.isPublic ? null : (client.clientSecret ?? 'stand-in'),
    clientSecretExpiresAt: null,
  });
  if (!metadata) return undefined;
  try {
    // oidc-provider's own check of client metadata (its client schema), as when the token server loads the client
    await rulesProvider().Client.validate(metadata as ClientMetadata);
    return undefined;
  } catch (err) {
    const e = err as { error_description?: unknown; message?: string };
    if (typeof e.error_description !== 'string') throw err;
    return problemOf(e.error_description);
  }
}
