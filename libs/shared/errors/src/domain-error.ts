/**
 * Domain errors: thrown by services and libraries, turned into the HTTP error object of docs/contract.md
 * by the one exception filter in `@gatehouse/http` (an exhaustive switch over ErrorCode).
 */
export enum ErrorCode {
  InvalidRequest = 'invalid_request',
  Unauthorized = 'unauthorized',
  Forbidden = 'forbidden',
  NotFound = 'not_found',
  MethodNotAllowed = 'method_not_allowed',
  Conflict = 'conflict',
  PayloadTooLarge = 'payload_too_large',
  TooManyRequests = 'too_many_requests',
  InternalError = 'internal_error',
  NotImplemented = 'not_implemented',
  ServiceUnavailable = 'service_unavailable',
}

export interface ErrorDetail {
  field?: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalidRequest = (message: string, details?: ErrorDetail[]) =>
  new DomainError(ErrorCode.InvalidRequest, message, details);
export const notFound = (message = 'Not found') => new DomainError(ErrorCode.NotFound, message);
export const conflict = (message: string) => new DomainError(ErrorCode.Conflict, message);
export const forbidden = (message = 'Forbidden') => new DomainError(ErrorCode.Forbidden, message);
export const unauthorized = (message = 'Unauthorized') => new DomainError(ErrorCode.Unauthorized, message);
export const serviceUnavailable = (message = 'Service unavailable') =>
  new DomainError(ErrorCode.ServiceUnavailable, message);

/** Compile-time exhaustiveness guard for switch statements. */
export function assertUnreachable(value: never): never {
  throw new Error(`Unreachable value: ${String(value)}`);
}
