import { ACR_MFA, ACR_PWD } from './second-factors.js';
import { accountBinding, parseCredential, passkeyContext, usedPasskey } from './passkeys.js';

describe('passkeyContext (RFC 8176 amr, the acr)', () => {
  it('alone with user verification: possession and verification, multi-factor', () => {
    expect(passkeyContext({ userVerified: true, backupEligible: false })).toEqual({
      amr: ['hwk', 'user', 'mfa'],
      acr: ACR_MFA,
    });
  });

  it('alone without user verification: one factor', () => {
    expect(passkeyContext({ userVerified: false, backupEligible: false })).toEqual({
      amr: ['hwk', 'user'],
      acr: ACR_PWD,
    });
  });

  it('a synced (backup-eligible) passkey is a software-secured key', () => {
    expect(passkeyContext({ userVerified: true, backupEligible: true }).amr).toEqual(['swk', 'user', 'mfa']);
  });

  it('after a first factor: multi-factor, with or without user verification, the first factor kept', () => {
    expect(passkeyContext({ userVerified: false, backupEligible: false }, ['pwd'])).toEqual({
      amr: ['pwd', 'hwk', 'user', 'mfa'],
      acr: ACR_MFA,
    });
    expect(passkeyContext({ userVerified: true, backupEligible: false }, ['otp', 'mfa']).amr).toEqual([
      'otp',
      'hwk',
      'user',
      'mfa',
    ]);
  });

  it('tells a sign-in that already used a passkey', () => {
    expect(usedPasskey(['hwk', 'user'])).toBe(true);
    expect(usedPasskey(['pwd', 'swk', 'user', 'mfa'])).toBe(true);
    expect(usedPasskey(['pwd', 'otp', 'mfa'])).toBe(false);
    expect(usedPasskey(undefined)).toBe(false);
  });
});

describe('the ceremony inputs', () => {
  it('binds an account ceremony to a hash of the session id, never the id', () => {
    const b = accountBinding('the-session-cookie-value');
    expect(b).toMatch(/^account:[\w-]{43}$/);
    expect(b).not.toContain('the-session-cookie-value');
  });

  it('reads the browser answer only when it is a credential-shaped JSON object of bounded size', () => {
    expect(parseCredential('{"id":"abc","response":{}}')).toEqual({ id: 'abc', response: {} });
    expect(parseCredential(undefined)).toBeUndefined();
    expect(parseCredential('not json')).toBeUndefined();
    expect(parseCredential('{"id":1,"response":{}}')).toBeUndefined();
    expect(parseCredential(`{"id":"a","response":{},"x":"${'y'.repeat(20_000)}"}`)).toBeUndefined();
  });
});
