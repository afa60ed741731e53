import { HttpException } from '@nestjs/common';
import { DomainError, ErrorCode, assertUnreachable, type ErrorDetail } from '@gatehouse/errors';

/** The error object of docs/contract.md. */
export interface ErrorBody {
  code: string;
  message: string;
  details?: ErrorDetail[];
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  /** How loud to log it: 4xx are the client's business, 5xx ours. */
  severity: 'client' | 'unavailable' | 'internal';
}

/** HTTP status of each domain error code: the one exhaustive switch. */
export function statusOf(code: ErrorCode): number {
  switch (code) {
    case ErrorCode.InvalidRequest:
      return 400;
    case ErrorCode.Unauthorized:
      return 401;
    case ErrorCode.Forbidden:
      return 403;
    case ErrorCode.NotFound:
      return 404;
    case ErrorCode.MethodNotAllowed:
      return 405;
    case ErrorCode.Conflict:
      return 409;
    case ErrorCode.PayloadTooLarge:
      return 413;
    case ErrorCode.TooManyRequests:
      return 429;
    case ErrorCode.InternalError:
      return 500;
    case ErrorCode.NotImplemented:
      return 501;
    case ErrorCode.ServiceUnavailable:
      return 503;
    default:
      return assertUnreachable(code);
  }
}

/**
 * The `code` for a bare HTTP status (Nest HttpExceptions, body-parser errors). Statuses without their own
 * code keep their status: other 4xx use `invalid_request` (e.g. 415, 406, 422), other 5xx `internal_error`.
 */
export function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return ErrorCode.Unauthorized;
    case 403:
      return ErrorCode.Forbidden;
    case 404:
      return ErrorCode.NotFound;
    case 405:
      return ErrorCode.MethodNotAllowed;
    case 409:
      return ErrorCode.Conflict;
    case 413:
      return ErrorCode.PayloadTooLarge;
    case 429:
      return ErrorCode.TooManyRequests;
    case 501:
      return ErrorCode.NotImplemented;
    case 503:
      return ErrorCode.ServiceUnavailable;
    default:
      return status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidRequest;
  }
}

export const INTERNAL_MESSAGE = 'Internal error';

/**
 * Turns an error of a backing store into the DomainError it answers with, or undefined when it is not one of
 * its errors. The data layer registers its own (PostgreSQL's codes live there, and a util lib may not import
 * it) when it is loaded.
 */
export type ErrorTranslator = (err: unknown) => DomainError | undefined;

const translators: ErrorTranslator[] = [];

/** Adds a translator to mapError (once: registering the same function again does nothing). */
export function addErrorTranslator(translator: ErrorTranslator): void {
  if (!translators.includes(translator)) translators.push(translator);
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

const CONNECTION_MESSAGES = [/Connection is closed/i];

/**
 * True for "a backend cannot be reached" socket errors (and a closed Redis connection), looked for in `err`,
 * its `driverError`, its `cause` and an AggregateError's `errors`: these answer 503. A store's own words for
 * it come from its translator.
 */
export function isConnectionError(err: unknown): boolean {
  return someErrorInChain(
    err,
    (o) =>
      (typeof o['code'] === 'string' && CONNECTION_CODES.has(o['code'])) ||
      (typeof o['message'] === 'string' && CONNECTION_MESSAGES.some((re) => re.test(o['message'] as string))),
  );
}

/**
 * True when `test` holds for `err` or an error it wraps: its `driverError` (TypeORM), its `cause`, an
 * AggregateError's `errors`, breadth first, at most 20 objects (a cycle or a deep chain cannot hang the filter).
 */
export function someErrorInChain(err: unknown, test: (o: Record<string, unknown>) => boolean): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0 && seen.size < 20) {
    const cur = queue.shift();
    if (!cur || typeof cur !== 'object' || seen.has(cur)) continue;
    seen.add(cur);
    const o = cur as Record<string, unknown>;
    if (test(o)) return true;
    queue.push(o['driverError'], o['cause']);
    if (Array.isArray(o['errors'])) queue.push(...(o['errors'] as unknown[]));
  }
  return false;
}

function fromDomain(err: DomainError): MappedError {
  const status = statusOf(err.code);
  const body: ErrorBody = { code: err.code, message: err.message };
  if (err.details && err.details.length > 0) body.details = err.details;
  return { status, body, severity: severityOf(status) };
}

function severityOf(status: number): MappedError['severity'] {
  if (status === 503) return 'unavailable';
  return status >= 500 && status !== 501 ? 'internal' : 'client';
}

/** A readable message out of an HttpException's response (string, `{message}` or `{message: string[]}`). */
export function httpExceptionMessage(err: HttpException): string {
  const res = err.getResponse();
  if (typeof res === 'string') return res;
  const msg = (res as { message?: unknown }).message;
  if (Array.isArray(msg)) return msg.map(String).join('; ');
  if (typeof msg === 'string') return msg;
  return err.message;
}

/**
 * Turns anything thrown into the HTTP error of docs/contract.md. Unknown errors (and 5xx HttpExceptions, whose text
 * may hold internals) become `internal` with a generic message: the caller adds the error id.
 */
export function mapError(err: unknown): MappedError {
  if (err instanceof DomainError) return fromDomain(err);
  if (err instanceof HttpException) {
    const status = err.getStatus();
    if (status >= 500 && status !== 501 && status !== 503) {
      return {
        status: 500,
        body: { code: ErrorCode.InternalError, message: INTERNAL_MESSAGE },
        severity: 'internal',
      };
    }
    return {
      status,
      body: { code: codeOfStatus(status), message: httpExceptionMessage(err) },
      severity: severityOf(status),
    };
  }
  for (const translate of translators) {
    const domain = translate(err);
    if (domain) return fromDomain(domain);
  }
  if (isConnectionError(err)) {
    return {
      status: 503,
      body: { code: ErrorCode.ServiceUnavailable, message: 'A backing service is unavailable; retry later' },
      severity: 'unavailable',
    };
  }
  return {
    status: 500,
    body: { code: ErrorCode.InternalError, message: INTERNAL_MESSAGE },
    severity: 'internal',
  };
}
