import { webcrypto } from 'node:crypto';
import { randomToken, s256 } from './pkce';

describe('PKCE', () => {
  beforeAll(() => {
    globalThis.crypto ??= webcrypto as Crypto;
  });

  it('derives the S256 challenge of RFC 7636 appendix B', async () => {
    expect(await s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('makes unpadded base64url values of 43 characters', () => {
    const v = randomToken();
    expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomToken()).not.toBe(v);
  });
});
