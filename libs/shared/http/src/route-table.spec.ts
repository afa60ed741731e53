import { allowedMethods, classifyRouteMiss } from './method-not-allowed.js';
import { RouteTable, UNMATCHED_ROUTE, compilePattern, parseRouteSpec } from './route-table.js';

describe('compilePattern', () => {
  it.each([
    ['/api/v1/clients/:client_id', '/api/v1/clients/abc', true],
    ['/api/v1/clients/:client_id', '/API/v1/Clients/abc/', true],
    ['/api/v1/clients/:client_id', '/api/v1/clients', false],
    ['/api/v1/clients/:client_id', '/api/v1/clients/a/b', false],
    ['/api/v1/clients', '/api/v1/clients/', true],
    ['/', '/', true],
    ['/', '', true],
    ['/', '/x', false],
    ['/docs/*path', '/docs/a/b.js', true],
    ['/docs/*path', '/docs', false],
    ['/files{/:name}', '/files', true],
    ['/files{/:name}', '/files/x', true],
    ['/a.b', '/a.b', true],
    ['/a.b', '/aXb', false],
    ['/.well-known/openid-configuration', '/.well-known/openid-configuration', true],
    ['/x\\:y', '/x:y', true],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(compilePattern(pattern).test(path)).toBe(expected);
  });
});

describe('parseRouteSpec', () => {
  it('reads method and pattern', () => {
    expect(parseRouteSpec('post /token')).toEqual({ method: 'POST', pattern: '/token' });
    expect(() => parseRouteSpec('/token')).toThrow(/METHOD/);
  });
});

describe('RouteTable and Allow', () => {
  const table = new RouteTable();
  table.add('get', '/clients');
  table.add('post', '/clients');
  table.add('get', '/clients/:client_id');
  table.add('patch', '/clients/:client_id');
  table.add('delete', '/clients/:client_id');
  table.add('post', '/clients/:client_id/rotate-secret');
  table.add('put', '/users/:user_id/password');
  table.add('ALL', '/anything');
  table.addSpec('POST /token');

  it('resolves the first matching pattern, HEAD through GET', () => {
    expect(table.resolve('GET', '/clients/42')).toBe('/clients/:client_id');
    expect(table.resolve('HEAD', '/clients/42')).toBe('/clients/:client_id');
    expect(table.resolve('PUT', '/clients/42')).toBeUndefined();
    expect(table.resolveAnyMethod('/clients/42')).toBe('/clients/:client_id');
    expect(table.resolve('POST', '/token')).toBe('/token');
    expect(table.resolve('PUT', '/anything')).toBe('/anything');
  });

  it('lists the methods of a path in a stable order with HEAD and OPTIONS', () => {
    expect(allowedMethods(table, '/clients/42')).toEqual(['GET', 'HEAD', 'PATCH', 'DELETE', 'OPTIONS']);
    expect(allowedMethods(table, '/clients')).toEqual(['GET', 'HEAD', 'POST', 'OPTIONS']);
    expect(allowedMethods(table, '/clients/42/rotate-secret')).toEqual(['POST', 'OPTIONS']);
    expect(allowedMethods(table, '/users/1/password')).toEqual(['PUT', 'OPTIONS']);
    expect(allowedMethods(table, '/nope')).toBeUndefined();
  });

  it('classifies a routing miss', () => {
    expect(classifyRouteMiss(table, 'PUT', '/clients/1')).toEqual({
      kind: 'method_not_allowed',
      allow: ['GET', 'HEAD', 'PATCH', 'DELETE', 'OPTIONS'],
    });
    expect(classifyRouteMiss(table, 'OPTIONS', '/clients')).toEqual({
      kind: 'options',
      allow: ['GET', 'HEAD', 'POST', 'OPTIONS'],
    });
    expect(classifyRouteMiss(table, 'GET', '/missing')).toEqual({ kind: 'not_found' });
    // a GET route exists but did not answer: not a 405
    expect(classifyRouteMiss(table, 'GET', '/clients/1')).toEqual({ kind: 'not_found' });
  });

  it('loads routes from an Express router, skipping middleware', () => {
    const t = new RouteTable();
    t.loadFromExpress({
      router: {
        stack: [
          { name: 'jsonParser' },
          { route: { path: '/a/:id', methods: { get: true, delete: true } } },
          { route: { path: ['/b', '/c'], methods: { _all: true } } },
        ],
      },
    });
    expect(t.list().map((e) => `${e.method} ${e.pattern}`)).toEqual([
      'GET /a/:id',
      'DELETE /a/:id',
      'ALL /b',
      'ALL /c',
    ]);
  });
});

describe('RouteTable.match', () => {
  it('gives the pattern, metrics label and rate-limit endpoint, the same object for a path seen before', () => {
    const t = new RouteTable();
    t.add('GET', '/clients/:client_id');
    const m = t.match('get', '/clients/1');
    expect(m).toEqual({
      pattern: '/clients/:client_id',
      label: '/clients/:client_id',
      endpoint: 'GET /clients/:client_id',
    });
    expect(t.match('GET', '/clients/1')).toBe(m);
    // another method on a known path: labelled by the path's pattern (a 405), keyed by its own method
    expect(t.match('DELETE', '/clients/1')).toMatchObject({
      label: '/clients/:client_id',
      endpoint: 'DELETE /clients/:client_id',
    });
    expect(t.match('GET', '/nowhere')).toEqual({
      pattern: undefined,
      label: UNMATCHED_ROUTE,
      endpoint: UNMATCHED_ROUTE,
    });
  });

  it('forgets cached answers when a route is added', () => {
    const t = new RouteTable();
    expect(t.match('POST', '/token').label).toBe(UNMATCHED_ROUTE);
    t.addSpec('POST /token');
    expect(t.match('POST', '/token').endpoint).toBe('POST /token');
  });

  it('stays bounded and correct past its cache size', () => {
    const t = new RouteTable();
    t.add('GET', '/things/:id');
    for (let i = 0; i < 10_050; i++) expect(t.match('GET', `/things/${i}`).label).toBe('/things/:id');
    expect(t.match('GET', '/things/0').endpoint).toBe('GET /things/:id');
  });
});
