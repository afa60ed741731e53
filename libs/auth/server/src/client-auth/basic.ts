/**
 * Reading `Authorization: Basic` client credentials (RFC 6749 section 2.3.1: client id and secret each
 * form-url-encoded, then joined by `:` and base64-encoded).
 *
 * oidc-provider's reading (lib/shared/client_auth.js) is the reference: `Basic <base64>` with exactly one space, its
 * base64 check, `+` read as a space, characters outside VSCHAR refused. Paths of ours that answer before
 * oidc-provider (or beside it) read the header more leniently, and each keeps the reading it has always had, since
 * which malformed headers it tolerates decides its answer (a tolerated header may authenticate; a refused one gets
 * that path's own error). The differences are the fields of BasicRules, and each path's rules are named below.
 */

export interface BasicCredentials {
  id: string;
  secret: string;
}

export interface BasicRules {
  /**
   * oidc-provider's form, `Basic <credentials>` split on single spaces into exactly two parts; otherwise any header
   * starting with `basic ` (any case), the rest trimmed.
   */
  readonly exactForm: boolean;
  /** oidc-provider's base64 check (alphabet and padding), the base64 alphabet only, or none (Buffer's decoding). */
  readonly base64: 'oidc-provider' | 'alphabet' | 'none';
  /** Whether `:secret`, an empty client id, reads as credentials (the caller then fails on the empty id). */
  readonly emptyId: boolean;
  /** `+` is a space (form-url-encoding, as oidc-provider reads it); otherwise decodeURIComponent alone. */
  readonly plusIsSpace: boolean;
  /** Refuse characters outside VSCHAR (RFC 6749 appendix A) in the decoded id and secret, as oidc-provider does. */
  readonly vschar: boolean;
}

/** oidc-provider's own reading: the token endpoint's fast path must refuse exactly what oidc-provider refuses. */
export const OIDC_PROVIDER_BASIC: BasicRules = {
  exactForm: true,
  base64: 'oidc-provider',
  emptyId: true,
  plusIsSpace: true,
  vschar: true,
};

/** /tokeninfo and the introspection endpoint. */
export const TOKENINFO_BASIC: BasicRules = {
  exactForm: false,
  base64: 'alphabet',
  emptyId: false,
  plusIsSpace: true,
  vschar: false,
};

/** POST /passwordless/start. */
export const PASSWORDLESS_BASIC: BasicRules = {
  exactForm: false,
  base64: 'none',
  emptyId: true,
  plusIsSpace: false,
  vschar: false,
};

/** oidc-provider's check of a Basic header's base64 (isValidBase64 of lib/shared/client_auth.js). */
export function isValidBase64(input: string): boolean {
  const match = /^([A-Za-z0-9+/]*)(={0,2})$/u.exec(input);
  if (!match?.[1]) return false;
  const remainder = match[1].length % 4;
  if (!match[2]) return remainder !== 1;
  return (match[1].length + match[2].length) % 4 === 0 && match[2].length === 4 - remainder;
}

const BASE64_ALPHABET = /^[A-Za-z0-9+/]+={0,2}$/;
const BASIC_PREFIX = /^basic /i;
/** Characters outside VSCHAR (RFC 6749 A.1), which oidc-provider refuses in Basic credentials. */
export const NO_VSCHAR = /[^\x20-\x7E]/;

/** One form-url-encoded half of the credentials, decoded; undefined when it is not properly encoded. */
function decodePart(part: string, rules: BasicRules): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rules.plusIsSpace ? part.replace(/\+/g, '%20') : part);
  } catch {
    return undefined;
  }
  return rules.vschar && NO_VSCHAR.test(decoded) ? undefined : decoded;
}

/** The base64 part of a Basic header as `rules` read it, or undefined when the header is no Basic header to them. */
function encodedPart(header: string, rules: BasicRules): string | undefined {
  if (!BASIC_PREFIX.test(header)) return undefined;
  if (!rules.exactForm) return header.slice(6).trim();
  // split(' ') giving exactly two parts: one space, the sixth character (without allocating the parts).
  return header.indexOf(' ', 6) === -1 ? header.slice(6) : undefined;
}

/**
 * The client id and secret of a Basic `Authorization` header, read by `rules`; undefined when the header is not
 * Basic credentials to them (not Basic, malformed, not properly encoded).
 */
export function parseBasic(header: string, rules: BasicRules): BasicCredentials | undefined {
  const encoded = encodedPart(header, rules);
  if (encoded === undefined) return undefined;
  if (
    rules.base64 === 'oidc-provider'
      ? !isValidBase64(encoded)
      : rules.base64 === 'alphabet' && !BASE64_ALPHABET.test(encoded)
  ) {
    return undefined;
  }
  const basic = Buffer.from(encoded, 'base64').toString('utf8');
  const i = basic.indexOf(':');
  if (i === -1 || (i === 0 && !rules.emptyId)) return undefined;
  const id = decodePart(basic.slice(0, i), rules);
  if (id === undefined) return undefined;
  const secret = decodePart(basic.slice(i + 1), rules);
  return secret === undefined ? undefined : { id, secret };
}

/**
 * The client id a Basic header names as oidc-provider reads it, or undefined (no header, not Basic, malformed): the
 * client whose rows a token request will read.
 */
export function basicClientId(header: string | undefined): string | undefined {
  // an empty id names no client (the request then names its client in the body, if at all)
  return (header === undefined ? undefined : parseBasic(header, OIDC_PROVIDER_BASIC)?.id) || undefined;
}
