import type { components as IdentityComponents } from './generated/identity.js';

/** The error codes of the JSON APIs (identity and tree), as their documents enumerate them. */
export type ErrorCode = IdentityComponents['schemas']['ErrorCode'];

/** One entry of an error's `details`. */
export type ErrorDetail = IdentityComponents['schemas']['ErrorDetailDto'];

/**
 * The error object every Gatehouse API answers with: `{code, message, details?}` (identity and tree,
 * `ErrorResponseDto` of their documents). The token server's OAuth endpoints answer the same fields plus RFC 6749's
 * `error` / `error_description`, where `code` is an OAuth error code (`invalid_grant`, ...) rather than an
 * {@link ErrorCode}; `mfa_token` comes with a 403 `mfa_required`.
 */
export interface ApiError {
  code: ErrorCode | OAuthErrorCode;
  message: string;
  details?: ErrorDetail[];
  /** OAuth endpoints only (RFC 6749 section 5.2). */
  error?: string;
  error_description?: string;
  /** 403 `mfa_required` of the password and otp grants: continues with an MFA grant. */
  mfa_token?: string;
}

/** The OAuth error codes the token server answers (RFC 6749, RFC 8628, RFC 8693, and `mfa_required`). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'mfa_required'
  // another code of the token server's (its OpenAPI document types `code` as a string)
  | (string & {});

/** The code of API.md's status table, for an answer whose body is not an error object (a proxy's HTML page). */
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  429: 'too_many_requests',
  500: 'internal_error',
  501: 'not_implemented',
  503: 'service_unavailable',
};

/** A non-2xx answer of a Gatehouse API: its status and its error object. */
export class GatehouseError extends Error {
  override readonly name = 'GatehouseError';

  constructor(
    readonly status: number,
    readonly body: ApiError,
    /** The answer itself (headers such as `Retry-After`, `X-RateLimit-Reset`, `WWW-Authenticate`). */
    readonly response?: Response,
  ) {
    super(`${status} ${body.code}: ${body.message}`);
  }

  /** The API's error code (`body.code`). */
  get code(): ApiError['code'] {
    return this.body.code;
  }
}

/**
 * The error object of an answer's parsed body: the body itself when it is one; filled in from RFC 6749's
 * `error`/`error_description` when only those came; else the code of the status with the text as the message.
 */
export function toApiError(status: number, body: unknown, statusText = ''): ApiError {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const code = typeof b.code === 'string' ? b.code : typeof b.error === 'string' ? b.error : undefined;
    if (code !== undefined) {
      const message =
        typeof b.message === 'string'
          ? b.message
          : typeof b.error_description === 'string'
            ? b.error_description
            : code;
      return { ...(b as Partial<ApiError>), code, message };
    }
  }
  const text = typeof body === 'string' && body.trim() !== '' ? body.trim().slice(0, 500) : statusText;
  return {
    code: STATUS_CODES[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request'),
    message: text || `HTTP ${status}`,
  };
}

/** The answer of an openapi-fetch call (or anything shaped like it). */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful openapi-fetch call; a {@link GatehouseError} with the typed error object otherwise.
 * A 204 answers `undefined` (its operation's data type is `never`).
 */
export function unwrap<T>(r: FetchResult<T>): T {
  if (!r.response.ok)
    throw new GatehouseError(
      r.response.status,
      toApiError(r.response.status, r.error, r.response.statusText),
      r.response,
    );
  return r.data as T;
}
