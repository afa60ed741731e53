import { SignJWT } from 'jose';
import { MANAGEMENT_AUDIENCE } from '@gatehouse/identity-data';
import { Management, uniq } from './management-harness.js';

/**
 * Issue 11: the holes found by trying the identity service and the token server as an attacker would, each
 * reproduced through the real services (token server + management API on one database).
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

/** An HS256 resource made through the API by `token`'s client, with a secret of the attacker's choice. */
async function hs256Resource(token: string, secret: string, lifetime = 600) {
  const identifier = `https://${uniq('evil')}.test`;
  const r = await m
    .call('post', '/api/v1/resources', token)
    .send({
      resource_type: 'api',
      resource_name: uniq('Evil'),
      resource_metadata: {
        identifier_url: identifier,
        signing_algorithm: 'HS256',
        signing_secret: secret,
        token_lifetime: lifetime,
      },
    })
    .expect(201);
  return { id: r.body.id as string, identifier };
}

const forge = (claims: Record<string, unknown>, secret: string, exp: number | null = 300) => {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(m.auth.url)
    .setIssuedAt(now)
    .setJti(uniq('jti'));
  if (exp !== null) jwt = jwt.setExpirationTime(now + exp);
  return jwt.sign(Buffer.from(secret));
};

describe('issue 11 hole 1: forged HS256 tokens', () => {
  it('a client with resources:write cannot mint a management token with its own HS256 resource', async () => {
    const attacker = await m.caller(['resources:write', 'resources:read']);
    const secret = 'attacker-chosen-secret-of-enough-length-0123456789';
    const evil = await hs256Resource(attacker.token, secret);
    const everything = 'clients:read clients:write resources:read resources:write users:read users:write';

    // Both audiences, the default client as client_id: the token that used to be served.
    const twoAudiences = await forge(
      { aud: [evil.identifier, MANAGEMENT_AUDIENCE], client_id: m.auth.clientId, scope: everything },
      secret,
    );
    expect((await m.tokenInfo(twoAudiences)).active).toBe(false);
    await m.call('get', '/api/v1/clients', twoAudiences).expect(401);

    // The management audience alone, signed with the resource's secret: the management API is not HS256.
    const managementOnly = await forge(
      { aud: MANAGEMENT_AUDIENCE, client_id: m.auth.clientId, scope: everything },
      secret,
    );
    expect((await m.tokenInfo(managementOnly)).active).toBe(false);
    await m.call('get', '/api/v1/clients', managementOnly).expect(401);

    // Its own resource, but naming a client that is not authorized on it.
    const otherClient = await forge(
      { aud: evil.identifier, client_id: m.auth.clientId, scope: 'anything' },
      secret,
    );
    expect((await m.tokenInfo(otherClient)).active).toBe(false);
  });

  it('an HS256 token needs exp, a lifetime within the resource, our iss, and the client authorized', async () => {
    const owner = await m.caller(['resources:write', 'resources:read', 'clients:write']);
    const secret = 'another-resource-secret-with-enough-length-987654321';
    const api = await hs256Resource(owner.token, secret, 300);
    // The owner authorizes itself on its own resource: a token naming it is ours only if shaped as we issue them.
    await m
      .call('post', `/api/v1/clients/${owner.id}/resources`)
      .send({ resources: [api.id] })
      .expect(204);
    const base = { aud: api.identifier, client_id: owner.id, scope: '' };
    expect((await m.tokenInfo(await forge(base, secret, 200))).active).toBe(true);
    expect((await m.tokenInfo(await forge(base, secret, null))).active).toBe(false); // no exp
    expect((await m.tokenInfo(await forge(base, secret, 10 * 365 * 86400))).active).toBe(false); // too long
    const foreignIss = await new SignJWT(base)
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer('https://issuer.example')
      .setIssuedAt()
      .setExpirationTime('2m')
      .sign(Buffer.from(secret));
    expect((await m.tokenInfo(foreignIss)).active).toBe(false);
  });

  it('a system resource can never be HS256 nor carry a signing secret', async () => {
    const mgmt = await m.managementResource();
    const r1 = await m
      .call('patch', `/api/v1/resources/${mgmt.id}`)
      .send({ resource_metadata: { signing_algorithm: 'HS256' } });
    expect([400, 403]).toContain(r1.status);
    expect(r1.body.code).toMatch(/invalid_request|forbidden/);
    const r2 = await m
      .call('patch', `/api/v1/resources/${mgmt.id}`)
      .send({ resource_metadata: { signing_secret: 'x'.repeat(40) } });
    expect([400, 403]).toContain(r2.status);
    const [row] = await m.ds.query(
      `SELECT signing_algorithm, signing_secret_enc FROM resources WHERE id = $1`,
      [mgmt.id],
    );
    expect(row.signing_algorithm).not.toBe('HS256');
    expect(row.signing_secret_enc).toBeNull();
  });
});
