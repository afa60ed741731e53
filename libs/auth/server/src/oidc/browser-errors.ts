import { randomBytes } from 'node:crypto';
import { errors } from 'oidc-provider';
import type { Locale } from '../interaction/pages.js';

/**
 * What an end user reads when a browser flow fails. oidc-provider's error descriptions are written for developers
 * ("redirect_uris for web clients using implicit flow MUST only register URLs using the https scheme") and may name
 * the client's configuration: a page shows a sentence the person can act on, the error code and a reference, and
 * the description goes to the log under that reference (where the application's owner or the operator finds it).
 */

/** Errors that mean the application (its registration or its request) is at fault, not the person. */
const APPLICATION_AT_FAULT = new Set([
  'invalid_client',
  'invalid_client_metadata',
  'invalid_redirect_uri',
  'unauthorized_client',
  'unsupported_response_type',
  'unsupported_response_mode',
  'invalid_request',
  'invalid_scope',
  'invalid_target',
  'invalid_request_object',
  'invalid_request_uri',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
]);

type Kind = 'application' | 'session' | 'other';

const TEXT: Record<Locale, Record<Kind, string> & { reference: (code: string, ref: string) => string[] }> = {
  en: {
    application:
      'This application is not set up correctly to sign you in. Please let its owner know; there is nothing ' +
      'you can change to fix it.',
    session:
      'This sign-in has expired or was started in another browser. Go back to the application and start again.',
    other: 'The request could not be completed. Go back to the application and try again.',
    reference: (code, ref) => [`Error code: ${code}`, `Reference: ${ref}`],
  },
  mn: {
    application:
      'Энэ програм таныг нэвтрүүлэхээр зөв тохируулагдаагүй байна. Програмын эзэмшигчид мэдэгдэнэ үү; ' +
      'та өөрөө засах боломжгүй.',
    session:
      'Энэ нэвтрэлтийн хугацаа дууссан эсвэл өөр хөтөч дээр эхэлсэн байна. Програм руугаа буцаж дахин эхлүүлнэ үү.',
    other: 'Хүсэлтийг гүйцэтгэж чадсангүй. Програм руугаа буцаж дахин оролдоно уу.',
    reference: (code, ref) => [`Алдааны код: ${code}`, `Лавлах дугаар: ${ref}`],
  },
};

export interface BrowserError {
  /** What the page says. */
  message: string;
  /**
   * The error code and the reference ("label: value" each), shown apart from the sentence and each kept on one line:
   * a person reads them out to support or copies them, a line break inside one would split a label from its value.
   */
  details?: string[];
  /** What the log gets (undefined: nothing to log, the message is our own). */
  logged?: { reference: string; error: string; error_description?: string };
}

/**
 * The page text for an error of a browser-facing route. An oidc-provider error (`err`) is told by its kind, with its
 * code and a new reference; a message of our own (`out` built by the token server for people) is shown as it is.
 */
export function browserError(
  locale: Locale,
  out: { error?: unknown; error_description?: unknown },
  err: unknown,
): BrowserError {
  const code = String(out.error ?? 'server_error');
  if (!(err instanceof errors.OIDCProviderError)) {
    return { message: String(out.error_description ?? out.error) };
  }
  const kind: Kind =
    err.name === 'SessionNotFound' ? 'session' : APPLICATION_AT_FAULT.has(code) ? 'application' : 'other';
  const reference = randomBytes(6).toString('hex');
  const t = TEXT[locale];
  return {
    message: t[kind],
    details: t.reference(code, reference),
    logged: {
      reference,
      error: code,
      ...(out.error_description !== undefined ? { error_description: String(out.error_description) } : {}),
    },
  };
}
