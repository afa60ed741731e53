import { ErrorCode } from '@gatehouse/errors';
import {
  findPgError,
  isDatabaseUnavailable as isConnectionError,
  keyColumns,
  mapPgError,
} from './pg-errors.js';

const pgError = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`pg error ${code}`), { code, severity: 'ERROR', ...extra });

describe('PostgreSQL error mapping', () => {
  it.each([
    [
      '23505',
      409,
      'A record with the same tenant_id, code already exists',
      { detail: 'Key (tenant_id, code)=(1, x) already exists.' },
    ],
    [
      '23503',
      409,
      'Referenced record does not exist (resource_id)',
      { detail: 'Key (resource_id)=(9) is not present in table "resources".' },
    ],
    [
      '23503',
      409,
      'The record is still referenced by other records',
      { detail: 'Key (id)=(9) is still referenced from table "x".' },
    ],
    ['23502', 400, 'name is required', { column: 'name' }],
    ['22P02', 400, 'Invalid input syntax for a value (e.g. a malformed id)', {}],
    ['22007', 400, 'Invalid date or time value', {}],
    ['22008', 400, 'Invalid date or time value', {}],
    ['22003', 400, 'Numeric value out of range', {}],
    ['40001', 409, 'Concurrent update conflict; retry the request', {}],
  ])('%s → %i %s', (code, status, message, extra) => {
    const e = mapPgError(pgError(code, extra));
    expect(e?.message).toBe(message);
    expect(e?.code).toBe(status === 409 ? ErrorCode.Conflict : ErrorCode.InvalidRequest);
  });

  it('leaves other server errors to the 500 path', () => {
    expect(mapPgError(pgError('42P01'))).toBeUndefined();
    expect(mapPgError(new Error('plain'))).toBeUndefined();
  });

  it('does not take a Node system error for a pg error', () => {
    expect(findPgError(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBeUndefined();
  });

  it('reads column names, never values, from a key detail', () => {
    expect(keyColumns('Key (lower(name::text))=(x) already exists.')).toBeUndefined();
    expect(keyColumns('Key ("name")=(x) already exists.')).toBe('name');
    expect(keyColumns(undefined)).toBeUndefined();
  });

  it('recognises connection failures', () => {
    expect(isConnectionError(pgError('57P01'))).toBe(true);
    expect(isConnectionError(pgError('08006'))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('x'), { name: 'CannotExecuteNotConnectedError' }))).toBe(
      true,
    );
    expect(isConnectionError(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isConnectionError(pgError('23505'))).toBe(false);
    expect(isConnectionError(new Error('boom'))).toBe(false);
  });
});
