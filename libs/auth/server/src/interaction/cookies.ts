import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * The value of one cookie of a request (URI-decoded), or undefined. A value that is not valid percent-encoding
 * (never one we set) counts as missing: the page answers as without the cookie, not with a 500.
 */
export function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) {
      try {
        return decodeURIComponent(v.join('='));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Whether the request carries cookie `name` with a value that is not valid percent-encoding (never one we set). */
export function cookieMalformed(req: IncomingMessage, name: string): boolean {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== name) continue;
    try {
      decodeURIComponent(v.join('='));
      return false;
    } catch {
      return true;
    }
  }
  return false;
}

/** Constant-time comparison of a form's CSRF token with its cookie (double submit); false when either is missing. */
export const sameSecret = (a: string | undefined, b: string | undefined): boolean =>
  !!a && !!b && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
