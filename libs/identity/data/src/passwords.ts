import { hash, verify, type Algorithm } from '@node-rs/argon2';
import type { PasswordValidator } from './entities/instance.entity.js';

/** argon2id with the OWASP minimum parameters (19 MiB, 2 passes, 1 lane): about 30-60 ms per hash on one core. */
const ARGON2ID = 2 as Algorithm;
const HASH_OPTIONS = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** Longest password accepted anywhere (argon2 takes any length; this keeps a request from buying seconds of CPU). */
export const MAX_PASSWORD_LENGTH = 1024;

export async function hashPassword(password: string): Promise<string> {
  if (password.length > MAX_PASSWORD_LENGTH)
    throw new RangeError(`password longer than ${MAX_PASSWORD_LENGTH}`);
  return hash(password, HASH_OPTIONS);
}

let dummyHash: Promise<string> | undefined;

/**
 * True when `password` matches the argon2 PHC string `passwordHash`. With no hash (unknown user, user without a
 * password) it still spends the time of one verification against a dummy hash and returns false, so callers can
 * answer "wrong password" and "unknown user" alike in content and timing. A malformed hash is false, never a throw.
 */
export async function verifyPassword(
  passwordHash: string | null | undefined,
  password: string,
): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  if (!passwordHash) {
    dummyHash ??= hash('gatehouse-dummy-password', HASH_OPTIONS);
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Default password rule of a new instance. */
export const DEFAULT_PASSWORD_VALIDATORS: PasswordValidator[] = [
  { order: 1, validator: 'min_length', description: 'At least 8 characters', rules: '^[\\s\\S]{8,}$' },
];

/**
 * Check a password against an instance's `password_validators` (each `rules` is a regular expression the password
 * must match; `regex` is accepted as an alias). Returns the descriptions of the rules it fails, in `order`;
 * an empty array means the password is acceptable. A rule whose expression does not compile is reported as failed.
 */
export function checkPasswordPolicy(
  validators: readonly (Partial<PasswordValidator> & { regex?: string })[] | undefined,
  password: string,
): string[] {
  const failures: string[] = [];
  if (password.length > MAX_PASSWORD_LENGTH) failures.push(`At most ${MAX_PASSWORD_LENGTH} characters`);
  const sorted = [...(validators ?? [])].sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
  for (const v of sorted) {
    const source = v.rules ?? v.regex;
    if (!source) continue;
    let ok: boolean;
    try {
      ok = new RegExp(source, 'u').test(password);
    } catch {
      ok = false;
    }
    if (!ok) failures.push(v.description ?? v.validator ?? source);
  }
  return failures;
}
