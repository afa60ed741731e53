import {
  BODY_PARSER_EXCLUDED_PATHS,
  LOGOUT_ROUTES,
  OAUTH_ERROR_PATHS,
  ROUTE_SPECS,
  ROUTE_TABLE,
  TOKEN_SERVER_ROUTES,
} from './routes.js';

/** The lists derived from the route table, as they were written by hand before there was one. */
describe('token server route table', () => {
  it('derives the endpoint routes and their methods', () => {
    expect(TOKEN_SERVER_ROUTES).toEqual({
      '/authorize': ['GET'],
      '/device/code': ['POST'],
      '/passwordless/start': ['POST'],
      '/signup': ['POST'],
      '/email-verification': ['GET'],
      '/passwordless/verify': ['GET', 'POST'],
      '/device': ['GET', 'POST'],
      '/token': ['POST'],
      '/revoke': ['POST'],
      '/token/introspection': ['POST'],
      '/userinfo': ['GET', 'POST'],
      '/jwks': ['GET'],
      '/.well-known/openid-configuration': ['GET'],
      '/.well-known/oauth-authorization-server': ['GET'],
      '/tokeninfo': ['POST'],
      '/tickets/password-change': ['GET', 'POST'],
      '/tickets/email-verification': ['GET', 'POST'],
      '/account': ['GET', 'POST'],
      '/assets/passkeys.js': ['GET'],
    });
    expect(LOGOUT_ROUTES).toEqual({
      '/session/end': ['GET'],
      '/session/end/confirm': ['POST'],
      '/session/end/success': ['GET'],
    });
  });

  it('derives the route specs, OAuth error paths and body-parser exclusions', () => {
    const specs = Object.entries(TOKEN_SERVER_ROUTES).flatMap(([p, ms]) => ms.map((m) => `${m} ${p}`));
    expect([...ROUTE_SPECS].sort()).toEqual(specs.sort());
    expect([...OAUTH_ERROR_PATHS].sort()).toEqual(Object.keys(TOKEN_SERVER_ROUTES).sort());
    expect(new Set(BODY_PARSER_EXCLUDED_PATHS)).toEqual(
      new Set([...Object.keys(TOKEN_SERVER_ROUTES), '/interaction', '/session/end', '/device']),
    );
  });

  it('documents every endpoint method, each under its own operation name', () => {
    const names = ROUTE_TABLE.flatMap((r) =>
      Object.values(r.methods).flatMap((m: { doc?: { name: string } }) => (m.doc ? [m.doc.name] : [])),
    );
    expect(new Set(names).size).toBe(names.length);
    expect(names).toHaveLength(ROUTE_SPECS.length + 1); // and GET /session/end
  });
});
