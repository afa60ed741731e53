import { Grants, jwtClaims, MANAGEMENT_SCOPES, scopesOf } from './scopes';

const jwt = (claims: object) => `x.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.y`;

describe('what the administrator may do', () => {
  it('reads the scopes of a token response, else of the JWT', () => {
    expect([...scopesOf('users:read users:write')]).toEqual(['users:read', 'users:write']);
    expect([...scopesOf(undefined, jwt({ scope: 'clients:read' }))]).toEqual(['clients:read']);
    expect(scopesOf(undefined, 'not-a-jwt').size).toBe(0);
  });

  it('reads UTF-8 claims', () => {
    expect(jwtClaims(jwt({ name: 'Болд' })).name).toBe('Болд');
  });

  it('asks each scope of the right token', () => {
    const g = new Grants(new Set(['users:read']), new Set(['trees:read']));
    expect(g.read('users')).toBe(true);
    expect(g.write('users')).toBe(false);
    expect(g.read('trees')).toBe(true);
    expect(g.has('users:read')).toBe(true);
    expect(Grants.none().read('clients')).toBe(false);
  });

  it('asks for every group read and write', () => {
    expect(MANAGEMENT_SCOPES).toContain('tenants:write');
    expect(MANAGEMENT_SCOPES).not.toContain('clients:read_secrets');
  });
});
