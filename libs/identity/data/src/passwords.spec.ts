import {
  checkPasswordPolicy,
  passwordRuleProblem,
  DEFAULT_PASSWORD_VALIDATORS,
  hashPassword,
  verifyPassword,
} from './passwords.js';

describe('argon2id passwords', () => {
  it('hashes with argon2id and a random salt, and verifies', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword(a, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(a, 'correct horse battery stapl')).toBe(false);
    expect(await verifyPassword(a, '')).toBe(false);
  });

  it('answers false, never throws, for a missing or malformed hash or an absurd password', async () => {
    expect(await verifyPassword(null, 'x')).toBe(false);
    expect(await verifyPassword(undefined, 'x')).toBe(false);
    expect(await verifyPassword('not-a-hash', 'x')).toBe(false);
    const h = await hashPassword('pw');
    expect(await verifyPassword(h, 'p'.repeat(5000))).toBe(false);
    await expect(hashPassword('p'.repeat(5000))).rejects.toThrow(RangeError);
  });

  it('spends comparable work for an unknown user and a wrong password', async () => {
    const h = await hashPassword('pw');
    await verifyPassword(null, 'warm-up');
    // CPU time of the process (argon2 runs on libuv's threads, counted too), not wall time: the comparison holds
    // on a loaded machine, where waiting for a core would swamp the difference.
    const time = async (fn: () => Promise<unknown>) => {
      const t = process.cpuUsage();
      await fn();
      const d = process.cpuUsage(t);
      return (d.user + d.system) / 1e3;
    };
    // interleaved rounds and medians: a burst of other work in the process (a GC, another test's timers) lands in
    // one sample, not in one side of the comparison
    const wrongs: number[] = [];
    const unknowns: number[] = [];
    for (let i = 0; i < 7; i++) {
      wrongs.push(await time(() => verifyPassword(h, 'nope')));
      unknowns.push(await time(() => verifyPassword(null, 'nope')));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const wrong = median(wrongs);
    const unknown = median(unknowns);
    expect(unknown).toBeGreaterThan(wrong * 0.4);
    expect(unknown).toBeLessThan(wrong * 2.5);
  });
});

describe('checkPasswordPolicy', () => {
  it('returns the descriptions of the failed rules, in order', () => {
    const validators = [
      { order: 2, validator: 'digit', description: 'A digit', rules: '\\d' },
      { order: 1, validator: 'len', description: 'At least 10 characters', rules: '^.{10,}$' },
      { description: 'An upper-case letter', regex: '[A-Z]' },
    ];
    expect(checkPasswordPolicy(validators, 'short')).toEqual([
      'An upper-case letter',
      'At least 10 characters',
      'A digit',
    ]);
    expect(checkPasswordPolicy(validators, 'LongEnough1')).toEqual([]);
    expect(checkPasswordPolicy(DEFAULT_PASSWORD_VALIDATORS, '1234567')).toEqual(['At least 8 characters']);
    expect(checkPasswordPolicy(DEFAULT_PASSWORD_VALIDATORS, '12345678')).toEqual([]);
    expect(checkPasswordPolicy(undefined, 'x')).toEqual([]);
  });

  it('reports a rule that does not compile as failed', () => {
    expect(checkPasswordPolicy([{ description: 'broken', rules: '([' }], 'anything')).toEqual(['broken']);
  });
});

describe('passwordRuleProblem (ReDoS check before a rule is stored)', () => {
  it('accepts linear and quadratic rules, the default rule included', async () => {
    for (const rule of [
      ...DEFAULT_PASSWORD_VALIDATORS.map((v) => v.rules),
      '[A-Z]',
      '\\d',
      '^(?=.*\\d).{8,}$',
      '(?=.*[A-Z])',
      '^[\\p{L}\\p{N}]{8,64}$',
    ]) {
      expect([rule, await passwordRuleProblem(rule)]).toEqual([rule, undefined]);
    }
  });

  it('refuses exponential backtracking, naming it', async () => {
    for (const rule of ['^(a+)+$', '(a|a)*b', '^(\\w+\\s?)*$', '(x+x+)+y', '^([a-zA-Z0-9]+)*@$']) {
      expect([rule, await passwordRuleProblem(rule)]).toEqual([rule, expect.stringContaining('exponential')]);
    }
  });

  it('refuses a polynomial of degree 3 or more', async () => {
    expect(await passwordRuleProblem('^a*a*a*b$')).toEqual(expect.stringContaining('polynomial of degree 3'));
  });

  it('refuses what does not compile with the u flag, and overlong rules', async () => {
    expect(await passwordRuleProblem('([')).toEqual(
      expect.stringContaining('not a valid regular expression'),
    );
    expect(await passwordRuleProblem('\\q')).toEqual(
      expect.stringContaining('not a valid regular expression'),
    );
    expect(await passwordRuleProblem('a'.repeat(1001))).toEqual(expect.stringContaining('longer than 1000'));
  });
});
