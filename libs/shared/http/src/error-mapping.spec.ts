import {
  BadRequestException,
  ConflictException,
  HttpException,
  InternalServerErrorException,
  NotFoundException,
  UnauthorizedException,
} from '@nestjs/common';
import { DomainError, ErrorCode, invalidRequest } from '@gatehouse/errors';
import { INTERNAL_MESSAGE, codeOfStatus, mapError, statusOf } from './error-mapping.js';

describe('statusOf', () => {
  it('gives every ErrorCode the status of docs/contract.md', () => {
    const expected: Record<ErrorCode, number> = {
      [ErrorCode.InvalidRequest]: 400,
      [ErrorCode.Unauthorized]: 401,
      [ErrorCode.Forbidden]: 403,
      [ErrorCode.NotFound]: 404,
      [ErrorCode.MethodNotAllowed]: 405,
      [ErrorCode.Conflict]: 409,
      [ErrorCode.PayloadTooLarge]: 413,
      [ErrorCode.TooManyRequests]: 429,
      [ErrorCode.InternalError]: 500,
      [ErrorCode.NotImplemented]: 501,
      [ErrorCode.ServiceUnavailable]: 503,
    };
    for (const code of Object.values(ErrorCode))
      expect([code, statusOf(code)]).toEqual([code, expected[code]]);
  });

  it('throws on a value outside the enum', () => {
    expect(() => statusOf('bogus' as ErrorCode)).toThrow(/Unreachable/);
  });

  it('is the inverse of codeOfStatus for the codes with their own status', () => {
    for (const code of Object.values(ErrorCode)) {
      if (code === ErrorCode.InternalError) continue;
      expect(codeOfStatus(statusOf(code))).toBe(code);
    }
    expect(codeOfStatus(415)).toBe(ErrorCode.InvalidRequest);
    expect(codeOfStatus(502)).toBe(ErrorCode.InternalError);
  });
});

describe('mapError', () => {
  it('keeps a DomainError message and details', () => {
    const m = mapError(invalidRequest('limit must be >= 1', [{ field: 'limit', message: 'must be >= 1' }]));
    expect(m).toEqual({
      status: 400,
      severity: 'client',
      body: {
        code: 'invalid_request',
        message: 'limit must be >= 1',
        details: [{ field: 'limit', message: 'must be >= 1' }],
      },
    });
    expect(mapError(new DomainError(ErrorCode.ServiceUnavailable, 'down')).severity).toBe('unavailable');
  });

  it('maps Nest HttpExceptions by status', () => {
    expect(mapError(new NotFoundException('Client not found')).body).toEqual({
      code: 'not_found',
      message: 'Client not found',
    });
    expect(mapError(new ConflictException('dup')).status).toBe(409);
    expect(mapError(new UnauthorizedException()).body.code).toBe('unauthorized');
    expect(mapError(new BadRequestException(['a is bad', 'b is bad'])).body.message).toBe(
      'a is bad; b is bad',
    );
    expect(mapError(new HttpException('teapot', 418))).toMatchObject({
      status: 418,
      body: { code: 'invalid_request' },
    });
  });

  it('hides the text of 5xx HttpExceptions and unknown errors', () => {
    expect(mapError(new InternalServerErrorException('SELECT * FROM secrets'))).toEqual({
      status: 500,
      severity: 'internal',
      body: { code: 'internal_error', message: INTERNAL_MESSAGE },
    });
    expect(mapError(new TypeError('x is undefined')).body).toEqual({
      code: 'internal_error',
      message: INTERNAL_MESSAGE,
    });
    expect(mapError('a string').status).toBe(500);
    expect(mapError(undefined).status).toBe(500);
  });

  it('answers connection errors with 503', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(mapError(refused)).toMatchObject({ status: 503, body: { code: 'service_unavailable' } });
    expect(mapError(new AggregateError([refused], 'all failed')).status).toBe(503);
    expect(mapError(Object.assign(new Error('x'), { cause: refused })).status).toBe(503);
    expect(JSON.stringify(mapError(refused).body)).not.toContain('5432');
  });
});
