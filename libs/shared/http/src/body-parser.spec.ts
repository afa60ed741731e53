import { ErrorCode } from '@gatehouse/errors';
import { DomainError } from '@gatehouse/errors';
import { isUnderPrefix, mapBodyParserError } from './body-parser.js';

describe('body parser helpers', () => {
  it('matches path prefixes on segment boundaries', () => {
    expect(isUnderPrefix('/token', '/token')).toBe(true);
    expect(isUnderPrefix('/token/introspection', '/token')).toBe(true);
    expect(isUnderPrefix('/tokeninfo', '/token')).toBe(false);
    expect(isUnderPrefix('/session/end', '/session/')).toBe(true);
    expect(isUnderPrefix('/anything', '/')).toBe(true);
  });

  it('maps body-parser error types', () => {
    const parse = mapBodyParserError({ type: 'entity.parse.failed' }, '1mb') as DomainError;
    expect([parse.code, parse.message]).toEqual([ErrorCode.InvalidRequest, 'Malformed JSON body']);
    const big = mapBodyParserError({ type: 'entity.too.large' }, '1mb') as DomainError;
    expect(big.code).toBe(ErrorCode.PayloadTooLarge);
    const other = new Error('other');
    expect(mapBodyParserError(other, '1mb')).toBe(other);
  });
});
