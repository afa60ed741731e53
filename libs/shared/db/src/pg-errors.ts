import { DomainError, ErrorCode } from '@gatehouse/errors';
import { addErrorTranslator, someErrorInChain } from '@gatehouse/http';

/**
 * PostgreSQL errors, mapped in one place (CONVENTIONS.md "Errors"). Works on `pg`'s DatabaseError and on
 * TypeORM's QueryFailedError (which carries the driver error as `driverError` and copies its fields).
 * Messages are safe: column names at most, never values, SQL or constraint internals.
 *
 * The HTTP foundation knows nothing of PostgreSQL (a util lib may not import the data layer): this module hands
 * it `translatePgError` when it is loaded, and every service that can raise a PostgreSQL error loads it through
 * `@gatehouse/db`.
 */

export interface PgErrorLike {
  code: string;
  severity?: string;
  detail?: string;
  column?: string;
  constraint?: string;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** The PostgreSQL error inside `err` (itself, its `driverError`, or its `cause`), if any. */
export function findPgError(err: unknown): PgErrorLike | undefined {
  let cur: unknown = err;
  for (let depth = 0; depth < 5 && cur && typeof cur === 'object'; depth++) {
    const o = cur as Record<string, unknown>;
    const driver = o['driverError'] as Record<string, unknown> | undefined;
    if (driver && isPgError(driver)) return driver as unknown as PgErrorLike;
    if (isPgError(o)) return o as unknown as PgErrorLike;
    cur = o['cause'];
  }
  return undefined;
}

function isPgError(o: Record<string, unknown>): boolean {
  // Node system errors have codes too (EPIPE is five capitals); a server error always carries a severity.
  return typeof o['code'] === 'string' && SQLSTATE.test(o['code']) && typeof o['severity'] === 'string';
}

/** Column names from a pg detail like `Key (name, tenant_id)=(x, y) already exists.`; never the values. */
export function keyColumns(detail: string | undefined): string | undefined {
  const m = detail ? /^Key \(([^)]*)\)=/.exec(detail) : null;
  if (!m) return undefined;
  const cols = m[1]
    .split(',')
    .map((c) => c.trim().replace(/^"|"$/g, ''))
    .filter((c) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(c));
  return cols.length > 0 ? cols.join(', ') : undefined;
}

// The database cannot be reached: SQLSTATE class 08 (connection exception) plus these. Socket errors
// (ECONNREFUSED, ...) are the HTTP foundation's own, as every backend raises them.
const UNAVAILABLE_CODES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

// TypeORM's "not connected" errors.
const UNAVAILABLE_NAMES = new Set(['CannotExecuteNotConnectedError', 'ConnectionIsNotSetError']);

// pg's and pg-pool's words for a lost or never made connection.
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /connection is not yet established/i,
];

/**
 * True for "the database cannot be reached" errors (these answer 503), looked for in `err`, its `driverError`,
 * its `cause` and an AggregateError's `errors`.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return someErrorInChain(err, (o) => {
    const code = typeof o['code'] === 'string' ? o['code'] : undefined;
    if (code && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
    if (typeof o['name'] === 'string' && UNAVAILABLE_NAMES.has(o['name'])) return true;
    return (
      typeof o['message'] === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(o['message'] as string))
    );
  });
}

/**
 * Maps a PostgreSQL error to a DomainError, or undefined when it is not one we answer with a 4xx
 * (the filter then treats it as unknown: 500 with an error id).
 */
export function mapPgError(err: unknown): DomainError | undefined {
  const pg = findPgError(err);
  if (!pg) return undefined;
  switch (pg.code) {
    case '23505': {
      const cols = keyColumns(pg.detail);
      return new DomainError(
        ErrorCode.Conflict,
        cols ? `A record with the same ${cols} already exists` : 'A record with the same key already exists',
      );
    }
    case '23503': {
      const cols = keyColumns(pg.detail);
      if (pg.detail?.includes('is still referenced')) {
        return new DomainError(ErrorCode.Conflict, 'The record is still referenced by other records');
      }
      return new DomainError(
        ErrorCode.Conflict,
        cols ? `Referenced record does not exist (${cols})` : 'Referenced record does not exist',
      );
    }
    case '23502':
      return new DomainError(
        ErrorCode.InvalidRequest,
        pg.column ? `${pg.column} is required` : 'A required value is missing',
      );
    case '23514':
      return new DomainError(ErrorCode.InvalidRequest, 'A value violates a check constraint');
    case '22P02':
      return new DomainError(
        ErrorCode.InvalidRequest,
        'Invalid input syntax for a value (e.g. a malformed id)',
      );
    case '22007':
    case '22008':
      return new DomainError(ErrorCode.InvalidRequest, 'Invalid date or time value');
    case '22003':
      return new DomainError(ErrorCode.InvalidRequest, 'Numeric value out of range');
    case '22001':
      return new DomainError(ErrorCode.InvalidRequest, 'A value is too long');
    case '22021':
    case '22P05':
      return new DomainError(ErrorCode.InvalidRequest, 'Invalid character in a value');
    case '57014':
      // statement_timeout (or a cancel): the database did not answer in time.
      return new DomainError(
        ErrorCode.ServiceUnavailable,
        'The database did not answer in time (statement timeout); try again later',
      );
    case '40001':
    case '40P01':
      return new DomainError(ErrorCode.Conflict, 'Concurrent update conflict; retry the request');
    default:
      return undefined;
  }
}

/** The same answer the HTTP foundation gives an unreachable backend. */
const UNAVAILABLE_MESSAGE = 'A backing service is unavailable; retry later';

/**
 * The HTTP answer of a database error: a 4xx (or the statement timeout's 503) by mapPgError, a 503 when the
 * database cannot be reached, undefined for anything else (the foundation then answers 500 with an error id).
 */
export function translatePgError(err: unknown): DomainError | undefined {
  const mapped = mapPgError(err);
  if (mapped) return mapped;
  return isDatabaseUnavailable(err)
    ? new DomainError(ErrorCode.ServiceUnavailable, UNAVAILABLE_MESSAGE)
    : undefined;
}

addErrorTranslator(translatePgError);
