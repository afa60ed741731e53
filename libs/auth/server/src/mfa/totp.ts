import { timingSafeEqual } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as every authenticator app reads an `otpauth://` URI by default: HMAC-SHA-1, 6 digits, 30 s steps. */
export const TOTP_PERIOD_SEC = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now that are accepted (clock drift and typing time): ±1, i.e. 90 s in all. */
export const TOTP_WINDOW = 1;
const ALGORITHM = 'SHA1';

/** A new secret: 20 random bytes (160 bits, RFC 4226's recommendation), as base32 (what apps take). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The time step of `at` (unix seconds / 30). */
export function totpStep(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD_SEC);
}

/** The code of `secret` (base32) for time step `step`. */
export function totpCode(secret: string, step: number): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secret),
    algorithm: ALGORITHM,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SEC,
    timestamp: step * TOTP_PERIOD_SEC * 1000,
  });
}

/** The `otpauth://totp/...` URI an app scans (the QR code's content). */
export function totpUri(issuer: string, label: string, secret: string): string {
  return new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(secret),
    algorithm: ALGORITHM,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SEC,
  }).toString();
}

/**
 * The time steps within the window around `at` whose code is `code` (compared in constant time), newest first.
 * Usually one; empty for a wrong code or one that is not 6 digits.
 */
export function matchingSteps(secret: string, code: string, at: Date): number[] {
  if (!/^\d{6}$/.test(code)) return [];
  const now = totpStep(at);
  const given = Buffer.from(code);
  const steps: number[] = [];
  for (let step = now + TOTP_WINDOW; step >= now - TOTP_WINDOW; step--) {
    if (timingSafeEqual(Buffer.from(totpCode(secret, step)), given)) steps.push(step);
  }
  return steps;
}
