import { DomainError, invalidRequest } from '@gatehouse/errors';

/** Maximum length of `q`, in UTF-16 code units (docs/contract.md: over 2,000 characters is 400). */
export const MAX_Q_LENGTH = 2000;
/** Maximum nesting of parentheses and `not` in `q`. */
export const MAX_Q_DEPTH = 64;

/** A 400 `invalid_request` for `q`, naming the 1-based character position. */
export function qError(message: string, position?: number): DomainError {
  const where = position === undefined ? '' : ` at position ${position}`;
  return invalidRequest(`Invalid q${where}: ${message}`, [{ field: 'q', message }]);
}

/** A short, printable rendering of user text for an error message (never the raw control characters). */
export function show(text: string, max = 32): string {
  const chars = [...text];
  const clipped = chars.length > max ? chars.slice(0, max).join('') + '...' : text;
  return clipped.replace(/[^\x20-\x7E]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

/** Describes a single character: printable ASCII as itself, anything else as its code point. */
export function describeChar(c: string): string {
  const cp = c.codePointAt(0)!;
  if (cp >= 0x21 && cp <= 0x7e) return `'${c}'`;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}
