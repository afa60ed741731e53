import { DomainError, ErrorCode } from '@gatehouse/errors';
import { camelToSnake, snakeToCamel, toCamel, toSnake } from './case.js';

describe('name conversion', () => {
  it.each([
    ['client_name', 'clientName'],
    ['id', 'id'],
    ['created_at', 'createdAt'],
    ['client_secret_expires_at', 'clientSecretExpiresAt'],
    ['oauth2_client', 'oauth2Client'],
    ['total_count', 'totalCount'],
  ])('%s <-> %s', (snake, camel) => {
    expect(snakeToCamel(snake)).toBe(camel);
    expect(camelToSnake(camel)).toBe(snake);
  });

  it('keeps leading underscores and already-converted names', () => {
    expect(snakeToCamel('_private')).toBe('_private');
    expect(snakeToCamel('clientName')).toBe('clientName');
    expect(camelToSnake('client_name')).toBe('client_name');
    expect(camelToSnake('HTTPServer')).toBe('http_server');
  });
});

describe('toCamel', () => {
  it('converts keys deeply, leaving values alone', () => {
    const created = new Date('2024-01-01T00:00:00Z');
    expect(
      toCamel({
        client_name: 'my_client',
        created_at: created,
        client_metadata: { grant_types: ['client_credentials'], refresh_token: { expiration_enabled: true } },
        permissions: [{ resource_id: 'r', scope_id: 's' }],
        nothing: null,
      }),
    ).toStrictEqual({
      clientName: 'my_client',
      createdAt: created,
      clientMetadata: { grantTypes: ['client_credentials'], refreshToken: { expirationEnabled: true } },
      permissions: [{ resourceId: 'r', scopeId: 's' }],
      nothing: null,
    });
  });

  it('keeps the keys inside opaque (user-defined) members, by default app_metadata, user_metadata, metadata', () => {
    const out = toCamel<Record<string, unknown>>({
      app_metadata: [{ key: 'some_key', value: 'v' }],
      user_metadata: { favourite_colour: 'blue', nested_obj: { a_b: 1 } },
      items: [{ metadata: { my_key: 1 }, tenant_id: 't' }],
    });
    expect(out).toStrictEqual({
      appMetadata: [{ key: 'some_key', value: 'v' }],
      userMetadata: { favourite_colour: 'blue', nested_obj: { a_b: 1 } },
      items: [{ metadata: { my_key: 1 }, tenantId: 't' }],
    });
  });

  it('takes the opaque keys from the caller (e.g. a record spec)', () => {
    expect(
      toCamel({ client_metadata: { grant_types: [] } }, { opaqueKeys: ['client_metadata'] }),
    ).toStrictEqual({
      clientMetadata: { grant_types: [] },
    });
    expect(toCamel({ metadata: { my_key: 1 } }, { opaqueKeys: [] })).toStrictEqual({
      metadata: { myKey: 1 },
    });
  });

  it('does not let a __proto__ key change the prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a_b": 1}');
    const out = toCamel<Record<string, unknown>>(input);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['__proto__', 'aB']);
  });
});

describe('toSnake', () => {
  it('converts a v2 body back to snake_case, leaving opaque members alone', () => {
    expect(
      toSnake({
        clientName: 'x',
        clientMetadata: { grantTypes: ['a'], refreshToken: { expirationLifetime: 5 } },
        appMetadata: [{ key: 'someKey', value: 'v' }],
        userMetadata: { favouriteColour: 'blue' },
      }),
    ).toStrictEqual({
      client_name: 'x',
      client_metadata: { grant_types: ['a'], refresh_token: { expiration_lifetime: 5 } },
      app_metadata: [{ key: 'someKey', value: 'v' }],
      user_metadata: { favouriteColour: 'blue' },
    });
  });

  it('rejects a field given in both spellings with a 400 naming it', () => {
    try {
      toSnake({ clientName: 'a', client_name: 'b' });
      throw new Error('not thrown');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).code).toBe(ErrorCode.InvalidRequest);
      expect((e as DomainError).message).toBe(
        'Field client_name is given twice (in camelCase and snake_case)',
      );
    }
  });

  it('leaves primitives and arrays of primitives alone', () => {
    expect(toSnake('aB')).toBe('aB');
    expect(toSnake([1, 'x', null])).toEqual([1, 'x', null]);
  });
});
