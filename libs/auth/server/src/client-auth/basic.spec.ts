import {
  basicClientId,
  OIDC_PROVIDER_BASIC,
  parseBasic,
  PASSWORDLESS_BASIC,
  TOKENINFO_BASIC,
} from './basic.js';
import { secretMatches } from './authenticate.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

describe('parseBasic', () => {
  it("oidc-provider's reading: one space, strict base64, + is a space, VSCHAR only", () => {
    expect(parseBasic(`Basic ${b64('a%20b:s+t')}`, OIDC_PROVIDER_BASIC)).toEqual({
      id: 'a b',
      secret: 's t',
    });
    expect(parseBasic(`Basic  ${b64('a:s')}`, OIDC_PROVIDER_BASIC)).toBeUndefined();
    expect(parseBasic(`Basic ${b64('a:s')}=`, OIDC_PROVIDER_BASIC)).toBeUndefined();
    expect(parseBasic(`Basic ${b64('a:%C3%A9')}`, OIDC_PROVIDER_BASIC)).toBeUndefined();
    expect(parseBasic(`Basic ${b64(':s')}`, OIDC_PROVIDER_BASIC)).toEqual({ id: '', secret: 's' });
  });

  it("/tokeninfo's reading: the rest of the header trimmed, the base64 alphabet, no empty id", () => {
    expect(parseBasic(`basic   ${b64('a:s+t')}  `, TOKENINFO_BASIC)).toEqual({ id: 'a', secret: 's t' });
    expect(parseBasic(`Basic ${b64('a:s')}=`, TOKENINFO_BASIC)).toEqual({ id: 'a', secret: 's' });
    expect(parseBasic(`Basic ${b64('a:%C3%A9')}`, TOKENINFO_BASIC)).toEqual({ id: 'a', secret: 'é' });
    expect(parseBasic(`Basic ${b64('a:s')}!`, TOKENINFO_BASIC)).toBeUndefined();
    expect(parseBasic(`Basic ${b64(':s')}`, TOKENINFO_BASIC)).toBeUndefined();
    expect(parseBasic(`Basic ${b64('a:%E0%A4%A')}`, TOKENINFO_BASIC)).toBeUndefined();
  });

  it("/passwordless/start's reading: no base64 check, + stays +, an empty id reads", () => {
    expect(parseBasic(`Basic ${b64('a:s+t')}!`, PASSWORDLESS_BASIC)).toEqual({ id: 'a', secret: 's+t' });
    expect(parseBasic(`Basic ${b64(':s')}`, PASSWORDLESS_BASIC)).toEqual({ id: '', secret: 's' });
    expect(parseBasic(`Bearer ${b64('a:s')}`, PASSWORDLESS_BASIC)).toBeUndefined();
  });

  it('basicClientId: the id oidc-provider reads, undefined for none or an empty one', () => {
    expect(basicClientId(`Basic ${b64('a+b:s')}`)).toBe('a b');
    expect(basicClientId(`Basic ${b64(':s')}`)).toBeUndefined();
    expect(basicClientId(undefined)).toBeUndefined();
  });
});

describe('secretMatches', () => {
  it('compares byte for byte; nothing matches a missing secret', () => {
    expect(secretMatches('abc', 'abc')).toBe(true);
    expect(secretMatches('abc', 'abd')).toBe(false);
    // same length in UTF-16, not in bytes: no match (and no RangeError from timingSafeEqual)
    expect(secretMatches('ab', 'é1')).toBe(false);
    expect(secretMatches(null, '')).toBe(false);
    expect(secretMatches('abc', undefined)).toBe(false);
  });
});
