import { BodyError } from './request-body.js';
import { normalizeTokenParams } from './token-params.js';

describe('normalizeTokenParams', () => {
  it('turns audience into resource and keeps the rest', () => {
    expect(
      normalizeTokenParams({
        grant_type: 'client_credentials',
        audience: 'urn:x',
        scope: 'a b',
        client_id: 'c',
      }),
    ).toEqual({ grant_type: 'client_credentials', resource: 'urn:x', scope: 'a b', client_id: 'c' });
  });

  it('accepts audience and resource together only when they agree', () => {
    expect(
      normalizeTokenParams({ grant_type: 'password', audience: 'urn:x', resource: 'urn:x' }).resource,
    ).toBe('urn:x');
    expect(() =>
      normalizeTokenParams({ grant_type: 'password', audience: 'urn:x', resource: 'urn:y' }),
    ).toThrow(BodyError);
  });

  it("maps document 1's grant type and parameter aliases", () => {
    expect(normalizeTokenParams({ grant_type: 'device_code', device_code: 'd' }).grant_type).toBe(
      'urn:ietf:params:oauth:grant-type:device_code',
    );
    expect(normalizeTokenParams({ grant_type: 'token_exchange' }).grant_type).toBe(
      'urn:ietf:params:oauth:grant-type:token-exchange',
    );
    expect(
      normalizeTokenParams({
        grant_type: 'authorization_code_verifier',
        authorization_code: 'abc',
        authorization_code_verifier: 'v',
      }),
    ).toEqual({ grant_type: 'authorization_code', code: 'abc', code_verifier: 'v' });
  });

  it('drops empty values and requires an audience for client_credentials', () => {
    expect(normalizeTokenParams({ grant_type: 'password', scope: '', username: 'u' })).toEqual({
      grant_type: 'password',
      username: 'u',
    });
    expect(() => normalizeTokenParams({ grant_type: 'client_credentials' })).toThrow(/audience/);
    expect(() => normalizeTokenParams({ grant_type: 'client_credentials', audience: '' })).toThrow(
      /audience/,
    );
  });
});
