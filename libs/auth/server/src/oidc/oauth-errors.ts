import type { ServerResponse } from 'node:http';
import { errors } from 'oidc-provider';

/** An OAuth error with the description we choose (oidc-provider's own classes keep a fixed one for some codes). */
export function oauthError(
  Kind: new (...args: never[]) => errors.OIDCProviderError,
  description: string,
): errors.OIDCProviderError {
  const err = new (Kind as unknown as new () => errors.OIDCProviderError)();
  (err as unknown as { error_description: string }).error_description = description;
  return err;
}

/** The two error shapes at once: RFC 6749 (`error`, `error_description`) and ours (`code`, `message`). */
export function errorBody(error: string, description?: string): Record<string, string> {
  const message = description ?? error.replace(/_/g, ' ');
  return { error, error_description: message, code: error, message };
}

/** Write an OAuth error response from a raw handler. */
export function sendOAuthError(
  res: ServerResponse,
  status: number,
  error: string,
  description?: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(errorBody(error, description));
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(body);
}

/** Add `code` and `message` to an error body oidc-provider produced. */
export function withCommonShape(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return body;
  const b = body as Record<string, unknown>;
  if (typeof b.error !== 'string') return body;
  const description =
    typeof b.error_description === 'string' ? b.error_description : b.error.replace(/_/g, ' ');
  return {
    ...b,
    error_description: description,
    code: typeof b.code === 'string' ? b.code : b.error,
    message: typeof b.message === 'string' ? b.message : description,
  };
}

/** PostgreSQL or Redis cannot be reached (as opposed to a bug): answered 503, not 500. */
export function isStoreUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  if (!e) return false;
  if (
    e.code &&
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      '57P01',
      '57P03',
      '08000',
      '08001',
      '08003',
      '08006',
    ].includes(e.code)
  ) {
    return true;
  }
  const m = e.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end|Connection is closed|MaxRetriesPerRequestError/i.test(
    m,
  );
}
