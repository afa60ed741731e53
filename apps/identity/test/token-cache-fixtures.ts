import { decodeJwt } from 'jose';
import { uniq, type Management } from './management-harness.js';

/** The Basic Authorization header of client credentials (URL-encoded, as OAuth requires). */
export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The scopes of a JWT access token, sorted. */
export const scopesOf = (token: string) =>
  String(decodeJwt(token).scope ?? '')
    .split(' ')
    .filter(Boolean)
    .sort();

/** A client_credentials token request with Basic credentials: the token, or the status and OAuth error code. */
export async function tokenRequest(m: Management, clientId: string, secret: string, resource: string) {
  const res = await fetch(`${m.auth.url}/token`, {
    method: 'POST',
    headers: { authorization: basic(clientId, secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource }).toString(),
  });
  const body = (await res.json()) as { access_token?: string; error?: string };
  return { status: res.status, token: body.access_token, error: body.error };
}

/** A resource with scopes `read` and `write`, made through the identity API. */
export async function cacheResource(m: Management, prefix: string) {
  const identifier = `https://${uniq(prefix)}.test`;
  const api = (
    await m
      .call('post', '/api/v1/resources')
      .send({
        resource_type: 'api',
        resource_name: uniq(prefix),
        resource_metadata: { identifier_url: identifier },
      })
      .expect(201)
  ).body as { id: string };
  const scopes: Record<string, string> = {};
  for (const name of ['read', 'write']) {
    scopes[name] = (
      await m.call('post', `/api/v1/resources/${api.id}/scopes`).send({ scope_name: name }).expect(201)
    ).body.id;
  }
  return { id: api.id, identifier, scopes };
}

/** A client_credentials client authorized for the resource `apiId` and granted the scopes `scopeIds`. */
export async function cacheClient(m: Management, prefix: string, apiId: string, scopeIds: string[]) {
  const c = (
    await m
      .call('post', '/api/v2/clients')
      .send({ client_name: uniq(prefix), client_metadata: { grant_types: ['client_credentials'] } })
      .expect(201)
  ).body as { id: string; client_secret: string };
  await m
    .call('post', `/api/v1/clients/${c.id}/resources`)
    .send({ resources: [apiId] })
    .expect(204);
  await m
    .call('post', `/api/v1/clients/${c.id}/permissions`)
    .send({ permissions: [{ resource_id: apiId, scopes: scopeIds }] })
    .expect(204);
  return { id: c.id, secret: c.client_secret };
}
