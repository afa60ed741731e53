import { timingSafeEqual } from 'node:crypto';
import { secretExpired } from '@gatehouse/oidc-clients';
import type { OidcClientRecord, OidcData } from '../oidc/oidc-data.js';

/** What authenticating a client by its secret reads of its row. */
export type SecretHolder = Pick<OidcClientRecord, 'isPublic' | 'clientSecret' | 'clientSecretExpiresAt'>;

/**
 * Whether `given` is the secret `expected`, compared in constant time (byte lengths first: timingSafeEqual takes
 * equal lengths only). No secret on either side matches nothing.
 */
export function secretMatches(expected: string | null | undefined, given: string | undefined): boolean {
  if (!expected || !given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A confidential client authenticated by its secret: it has one, `given` is it, and it has not expired (from the
 * instant it expires, as the client metadata handed to oidc-provider says: @gatehouse/oidc-clients secretExpired).
 */
export function secretAuthenticates(
  client: SecretHolder,
  given: string | undefined,
  now = Date.now(),
): boolean {
  return !client.isPublic && !secretExpired(client, now) && secretMatches(client.clientSecret, given);
}

/** The confidential client `clientId` when `secret` authenticates it, else undefined. */
export async function clientBySecret(
  data: Pick<OidcData, 'findClient'>,
  clientId: string,
  secret: string,
): Promise<OidcClientRecord | undefined> {
  const client = await data.findClient(clientId);
  return client && secretAuthenticates(client, secret) ? client : undefined;
}

/** A public client (one that names itself by its client_id alone), or undefined. */
export async function publicClientById(
  data: Pick<OidcData, 'findClient'>,
  clientId: string,
): Promise<OidcClientRecord | undefined> {
  const client = await data.findClient(clientId);
  return client?.isPublic ? client : undefined;
}
