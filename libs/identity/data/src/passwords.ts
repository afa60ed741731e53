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

/** Longest regular expression a password rule may hold. */
export const MAX_PASSWORD_RULE_LENGTH = 1000;
/** Highest polynomial degree of backtracking allowed in a password rule (n² on a 1,024-character password is bounded). */
const MAX_RULE_DEGREE = 2;
/** Time the ReDoS analysis of one rule may take; beyond it the rule is refused as undecided. */
const RULE_CHECK_TIMEOUT_MS = 5000;
/** Analyses remembered (a rule is analysed once per process, and its 400 message reads the same result). */
const RULE_CACHE_MAX = 500;
const ruleProblems = new Map<string, string | undefined>();

async function analyse(source: string): Promise<string | undefined> {
  if (source.length > MAX_PASSWORD_RULE_LENGTH) return `longer than ${MAX_PASSWORD_RULE_LENGTH} characters`;
  try {
    new RegExp(source, 'u');
  } catch (err) {
    return `not a valid regular expression (${(err as Error).message})`;
  }
  // recheck's `check` runs in its own process (its native agent) or a worker: the event loop never waits on it.
  // Loaded on first use: its 2.8 MB bundle would otherwise sit in every service's heap from the start (the idle
  // RSS target), while only a change of an instance's password rules needs it.
  const { check } = await import('recheck');
  const found = await check(source, 'u', { timeout: RULE_CHECK_TIMEOUT_MS });
  if (found.status === 'safe') return undefined;
  if (found.status === 'unknown') {
    return `its backtracking could not be analysed (${found.error.kind}); refused as possibly catastrophic`;
  }
  const c = found.complexity;
  if (c.type === 'polynomial' && c.degree <= MAX_RULE_DEGREE) return undefined;
  const kind = c.type === 'exponential' ? 'exponential' : `polynomial of degree ${c.degree}`;
  return `catastrophic backtracking (${kind} time, e.g. on ${JSON.stringify(found.attack.string.slice(0, 40))})`;
}

/**
 * Why the regular expression `source` cannot be a password rule, or undefined when it can. It must compile with the
 * `u` flag (as checkPasswordPolicy runs it), be at most MAX_PASSWORD_RULE_LENGTH characters, and be free of
 * catastrophic backtracking: recheck (an automaton analysis with a fuzzing fallback) must find it safe, or at most
 * quadratic. Exponential backtracking (`(a+)+$`, `(a|a)*b`), a polynomial of degree 3 or more, and an expression the
 * analysis cannot decide in time are refused before anything is stored.
 */
export async function passwordRuleProblem(source: string): Promise<string | undefined> {
  if (ruleProblems.has(source)) return ruleProblems.get(source);
  const problem = await analyse(source);
  if (ruleProblems.size >= RULE_CACHE_MAX) ruleProblems.delete(ruleProblems.keys().next().value as string);
  ruleProblems.set(source, problem);
  return problem;
}

/** The problem passwordRuleProblem found with `source` (undefined: none, or not analysed yet). */
export function knownPasswordRuleProblem(source: string): string | undefined {
  return ruleProblems.get(source);
}
