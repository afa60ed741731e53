import { DomainError, ErrorCode, conflict, invalidRequest } from './domain-error.js';

describe('DomainError', () => {
  it('carries code, message and details', () => {
    const e = invalidRequest('limit must be >= 1', [{ field: 'limit', message: 'must be >= 1' }]);
    expect(e).toBeInstanceOf(DomainError);
    expect(e.code).toBe(ErrorCode.InvalidRequest);
    expect(e.details?.[0].field).toBe('limit');
    expect(conflict('dup').code).toBe('conflict');
  });
});
