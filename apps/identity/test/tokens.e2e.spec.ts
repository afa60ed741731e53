import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { Management, uniq } from './management-harness.js';

/**
 * End to end through both real services: every change made through the management API (with an openid-client
 * token of the default client) is seen by the token server's next token request.
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

/**
 * The OAuth error of a failed openid-client call (a 401 with a WWW-Authenticate challenge carries it in the
 * challenge parameters and the response body rather than on the error itself).
 */
async function oauthError(p: Promise<unknown>): Promise<{ error?: string; error_description?: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { error?: string; error_description?: string; cause?: unknown },
  );
  expect(err).toBeDefined();
  if (err!.error) return err!;
  const cause = err!.cause as { parameters?: { error?: string } }[] | Response | undefined;
  if (Array.isArray(cause)) return { error: cause[0]?.parameters?.error };
  if (cause instanceof Response) return (await cause.json()) as { error?: string };
  return err!;
}

async function apiWithScopes(names: string[]) {
  const identifier = `https://${uniq('orders')}.test`;
  const r = (
    await m
      .call('post', '/api/v1/resources')
      .send({
        resource_type: 'api',
        resource_name: uniq('Orders'),
        resource_metadata: { identifier_url: identifier },
      })
      .expect(201)
  ).body;
  const scopes: Record<string, string> = {};
  for (const name of names) {
    scopes[name] = (
      await m.call('post', `/api/v1/resources/${r.id}/scopes`).send({ scope_name: name }).expect(201)
    ).body.id;
  }
  return { id: r.id as string, identifier, scopes };
}

async function newClient(grantTypes = ['client_credentials']) {
  const c = (
    await m
      .call('post', '/api/v2/clients')
      .send({ client_name: uniq('e2e'), client_metadata: { grant_types: grantTypes } })
      .expect(201)
  ).body;
  return { id: c.id as string, secret: c.client_secret as string };
}

const scopesOf = (token: string) =>
  String(decodeJwt(token).scope ?? '')
    .split(' ')
    .filter(Boolean)
    .sort();

describe('permissions reach the token server at once', () => {
  it('a token carries exactly the granted scopes; a revoked scope is gone from the next; a revoked resource gets none', async () => {
    const api = await apiWithScopes(['orders:read', 'orders:write', 'orders:admin']);
    const client = await newClient();
    const config = await m.oidcConfig(client.id, client.secret);

    // Not authorized yet: refused.
    const before = await oauthError(oidc.clientCredentialsGrant(config, { resource: api.identifier }));
    expect(before.error).toBe('access_denied');

    await m
      .call('post', `/api/v1/clients/${client.id}/resources`)
      .send({ resources: [api.id] })
      .expect(204);
    await m
      .call('post', `/api/v1/clients/${client.id}/permissions`)
      .send({
        permissions: [
          { resource_id: api.id, scopes: [api.scopes['orders:read'], api.scopes['orders:write']] },
        ],
      })
      .expect(204);
    const granted = await oidc.clientCredentialsGrant(config, { resource: api.identifier });
    expect(scopesOf(granted.access_token)).toEqual(['orders:read', 'orders:write']);
    const { payload } = await jwtVerify(
      granted.access_token,
      createRemoteJWKSet(new URL(`${m.auth.url}/jwks`)),
      {
        issuer: m.auth.url,
        audience: api.identifier,
      },
    );
    expect(payload.client_id).toBe(client.id);
    // Asking for an ungranted scope gives only the intersection.
    const asked = await oidc.clientCredentialsGrant(config, {
      resource: api.identifier,
      scope: 'orders:read orders:admin',
    });
    expect(scopesOf(asked.access_token)).toEqual(['orders:read']);

    await m
      .call('delete', `/api/v2/clients/${client.id}/permissions`)
      .send({ permissions: [{ scopes: [api.scopes['orders:write']] }] })
      .expect(204);
    const after = await oidc.clientCredentialsGrant(config, { resource: api.identifier });
    expect(scopesOf(after.access_token)).toEqual(['orders:read']);

    // A renamed scope travels under its new name.
    await m
      .call('patch', `/api/v1/resources/${api.id}/scopes/${api.scopes['orders:read']}`)
      .send({ scope_name: 'orders:view' })
      .expect(200);
    expect(
      scopesOf((await oidc.clientCredentialsGrant(config, { resource: api.identifier })).access_token),
    ).toEqual(['orders:view']);

    await m
      .call('delete', `/api/v1/resources/${api.id}/clients`)
      .send({ clients: [client.id] })
      .expect(204);
    const revoked = await oauthError(oidc.clientCredentialsGrant(config, { resource: api.identifier }));
    expect(revoked.error).toBe('access_denied');
  });

  it('a changed token_lifetime and signing_algorithm shape the next token', async () => {
    const api = await apiWithScopes(['x']);
    const client = await newClient();
    await m
      .call('post', `/api/v1/resources/${api.id}/clients`)
      .send({ clients: [client.id] })
      .expect(204);
    const config = await m.oidcConfig(client.id, client.secret);
    const first = decodeJwt(
      (await oidc.clientCredentialsGrant(config, { resource: api.identifier })).access_token,
    );
    expect(first.exp! - first.iat!).toBe(86400);

    const res = await m
      .call('patch', `/api/v2/resources/${api.id}`)
      .send({ resource_metadata: { token: { expiration_lifetime: 120, signing_algorithm: 'HS256' } } })
      .expect(200);
    const secret = res.body.resource_metadata.token.signing_secret as string;
    const t = await oidc.clientCredentialsGrant(config, { resource: api.identifier });
    expect(t.expires_in).toBe(120);
    expect(decodeProtectedHeader(t.access_token).alg).toBe('HS256');
    const { payload } = await jwtVerify(t.access_token, Buffer.from(secret), {
      issuer: m.auth.url,
      audience: api.identifier,
    });
    expect(payload.exp! - payload.iat!).toBe(120);
    expect((await m.tokenInfo(t.access_token)).active).toBe(true);

    await m
      .call('patch', `/api/v1/resources/${api.id}`)
      .send({ resource_metadata: { signing_algorithm: 'ES256' } })
      .expect(200);
    const es = await oidc.clientCredentialsGrant(config, { resource: api.identifier });
    expect(decodeProtectedHeader(es.access_token).alg).toBe('ES256');
  });
});

describe('client lifecycle reaches the token server at once', () => {
  it('after a secret rotation the old secret is refused and the new one works', async () => {
    const client = await newClient();
    const mgmt = await m.managementResource();
    await m
      .call('post', `/api/v1/clients/${client.id}/resources`)
      .send({ resources: [mgmt.id] })
      .expect(204);
    expect(await m.token(client.id, client.secret)).toEqual(expect.any(String));

    const rotated = await m.call('post', `/api/v1/clients/${client.id}/rotate-secret`).expect(200);
    const fresh = rotated.body.client_secret as string;
    const old = await oauthError(m.token(client.id, client.secret));
    expect(old.error).toBe('invalid_client');
    expect(await m.token(client.id, fresh)).toEqual(expect.any(String));
  });

  it('a deleted client gets no token and its tokens turn inactive at /tokeninfo and at the management API', async () => {
    const caller = await m.caller(['clients:read']);
    expect((await m.tokenInfo(caller.token)).active).toBe(true);
    await m.call('get', '/api/v1/clients', caller.token).expect(200);

    await m.call('delete', `/api/v1/clients/${caller.id}`).expect(204);
    expect(await m.tokenInfo(caller.token)).toEqual({ active: false });
    await m.call('get', '/api/v1/clients', caller.token).expect(401);
    const err = await oauthError(m.token(caller.id, caller.secret));
    expect(err.error).toBe('invalid_client');
  });
});

describe('users reach the token server at once', () => {
  it('a blocked user gets no token by password and its refresh tokens stop working; unblocked it may log in again', async () => {
    const api = await apiWithScopes(['profile:read']);
    const client = await newClient(['password', 'refresh_token']);
    await m
      .call('post', `/api/v1/clients/${client.id}/resources`)
      .send({ resources: [api.id] })
      .expect(204);
    await m
      .call('post', `/api/v1/clients/${client.id}/permissions`)
      .send({ permissions: [{ resource_id: api.id, scopes: [api.scopes['profile:read']] }] })
      .expect(204);
    const email = `${uniq('blocky')}@example.test`;
    const password = 'a-long-password-1';
    const user = (await m.call('post', '/api/v2/users').send({ user_email: email, password }).expect(201))
      .body;

    const config = await m.oidcConfig(client.id, client.secret);
    const login = () =>
      oidc.genericGrantRequest(config, 'password', {
        username: email,
        password,
        resource: api.identifier,
        scope: 'offline_access',
      });
    const t = await login();
    expect(decodeJwt(t.access_token).sub).toBe(user.id);
    expect(scopesOf(t.access_token)).toEqual(['profile:read']);
    expect(t.refresh_token).toEqual(expect.any(String));
    const tokens = await m.call('get', `/api/v1/users/${user.id}?fields=aggregations`).expect(200);
    expect(tokens.body.aggregations.tokens).toBeGreaterThanOrEqual(1);

    await m.call('post', `/api/v1/users/${user.id}/block`).expect(200);
    expect((await oauthError(login())).error).toBe('invalid_grant');
    expect((await oauthError(oidc.refreshTokenGrant(config, t.refresh_token!))).error).toBe('invalid_grant');
    expect(await m.tokenInfo(t.access_token)).toEqual({ active: false });
    expect(
      (await m.call('get', `/api/v1/users/${user.id}?fields=aggregations`).expect(200)).body.aggregations
        .tokens,
    ).toBe(0);

    await m.call('post', `/api/v2/users/${user.id}/unblock`).expect(200);
    const again = await login();
    expect(decodeJwt(again.access_token).sub).toBe(user.id);
    // The grant of the refresh token was revoked when blocked: it stays dead.
    expect((await oauthError(oidc.refreshTokenGrant(config, t.refresh_token!))).error).toBe('invalid_grant');
  });

  it('a new password is the one the token server accepts', async () => {
    const client = await newClient(['password']);
    const email = `${uniq('pw')}@example.test`;
    const user = (
      await m
        .call('post', '/api/v1/users')
        .send({ user_email: email, password: 'first-password-1' })
        .expect(201)
    ).body;
    await m
      .call('put', `/api/v1/users/${user.id}/password`)
      .send({ password: 'second-password-2' })
      .expect(200);
    const config = await m.oidcConfig(client.id, client.secret);
    expect(
      (
        await oauthError(
          oidc.genericGrantRequest(config, 'password', { username: email, password: 'first-password-1' }),
        )
      ).error,
    ).toBe('invalid_grant');
    const t = await oidc.genericGrantRequest(config, 'password', {
      username: email,
      password: 'second-password-2',
    });
    expect(await m.tokenInfo(t.access_token)).toMatchObject({ active: true, sub: user.id, username: email });
  });
});

describe('tenant reach', () => {
  it("a tenant-scoped client sees and changes only its tenant's records; others are 404", async () => {
    const [mine, theirs] = [await m.tenant(), await m.tenant()];
    const tenantAdmin = await m.caller(
      ['clients:read', 'clients:write', 'resources:read', 'users:read', 'users:write'],
      {
        tenantId: mine,
        isGlobal: false,
      },
    );
    const own = (
      await m
        .call('post', '/api/v1/clients')
        .send({ client_name: uniq('own'), tenant_id: mine })
        .expect(201)
    ).body;
    const foreign = (
      await m
        .call('post', '/api/v1/clients')
        .send({ client_name: uniq('foreign'), tenant_id: theirs })
        .expect(201)
    ).body;
    const global = (
      await m
        .call('post', '/api/v1/clients')
        .send({ client_name: uniq('global') })
        .expect(201)
    ).body;

    for (const v of ['v1', 'v2']) {
      await m.call('get', `/api/${v}/clients/${own.id}`, tenantAdmin.token).expect(200);
      const hidden = await m.call('get', `/api/${v}/clients/${foreign.id}`, tenantAdmin.token).expect(404);
      expect(hidden.body.code).toBe('not_found');
      await m.call('get', `/api/${v}/clients/${global.id}`, tenantAdmin.token).expect(404);
      await m
        .call('patch', `/api/${v}/clients/${foreign.id}`, tenantAdmin.token)
        .send({ client_description: 'x' })
        .expect(404);
      await m.call('delete', `/api/${v}/clients/${foreign.id}`, tenantAdmin.token).expect(404);
      await m.call('post', `/api/${v}/clients/${foreign.id}/rotate-secret`, tenantAdmin.token).expect(404);
      await m.call('get', `/api/${v}/clients/${foreign.id}/permissions`, tenantAdmin.token).expect(404);
    }
    const listed = await m
      .call('get', '/api/v1/clients?limit=100&total_count=true', tenantAdmin.token)
      .expect(200);
    expect(listed.body.items.every((c: { tenant_id: string }) => c.tenant_id === mine)).toBe(true);
    expect(listed.body.items.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining([own.id, tenantAdmin.id]),
    );

    // New records land in its tenant; another tenant or a global client is refused.
    const made = await m
      .call('post', '/api/v1/clients', tenantAdmin.token)
      .send({ client_name: uniq('made') })
      .expect(201);
    expect(made.body).toMatchObject({ tenant_id: mine, is_global: false });
    await m
      .call('post', '/api/v1/clients', tenantAdmin.token)
      .send({ client_name: uniq('x'), tenant_id: theirs })
      .expect(403);
    await m
      .call('post', '/api/v1/clients', tenantAdmin.token)
      .send({ client_name: uniq('x'), is_global: true })
      .expect(403);
    await m
      .call('patch', `/api/v1/clients/${own.id}`, tenantAdmin.token)
      .send({ tenant_id: theirs })
      .expect(403);

    const user = (
      await m
        .call('post', '/api/v1/users', tenantAdmin.token)
        .send({ user_email: `${uniq('t')}@example.test` })
        .expect(201)
    ).body;
    const otherUser = (
      await m
        .call('post', '/api/v1/users')
        .send({ user_email: `${uniq('o')}@example.test`, tenant_id: theirs })
        .expect(201)
    ).body;
    const expanded = await m
      .call('get', `/api/v1/users/${user.id}?expand=all&fields=tenants`, tenantAdmin.token)
      .expect(200);
    expect(expanded.body.tenants).toEqual([expect.objectContaining({ user_id: user.id, tenant_id: mine })]);
    await m.call('get', `/api/v1/users/${otherUser.id}`, tenantAdmin.token).expect(404);
    await m.call('post', `/api/v1/users/${otherUser.id}/block`, tenantAdmin.token).expect(404);
    // System resources belong to no tenant: out of its reach.
    const mgmt = await m.managementResource();
    await m.call('get', `/api/v1/resources/${mgmt.id}`, tenantAdmin.token).expect(404);

    // Made global again, the same token reaches everything at its next request.
    await m.call('patch', `/api/v1/clients/${tenantAdmin.id}`).send({ is_global: true }).expect(200);
    await m.call('get', `/api/v1/clients/${foreign.id}`, tenantAdmin.token).expect(200);
  });
});
