import { DeviceTouches, deviceOf } from './session-devices.js';
import { messageLocale } from './account-pages.js';

describe('deviceOf', () => {
  it.each([
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      'Edge',
      'Windows',
    ],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
      'Safari',
      'macOS',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1',
      'Chrome',
      'iOS',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0 Mobile Safari/537.36',
      'Samsung Internet',
      'Android',
    ],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox', 'Linux'],
    [
      'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 OPR/115.0',
      'Opera',
      'ChromeOS',
    ],
    ['curl/8.5.0', 'curl', null],
    ['', null, null],
  ])('%s', (ua, browser, os) => {
    expect(deviceOf(ua)).toEqual({ browser, os });
  });

  it('says nothing of a missing user agent', () => {
    expect(deviceOf(null)).toEqual({ browser: null, os: null });
  });
});

describe('messageLocale', () => {
  it("is the profile's language when the pages have it, else the page's", () => {
    expect(messageLocale('mn-MN', 'en')).toBe('mn');
    expect(messageLocale('en_US', 'mn')).toBe('en');
    expect(messageLocale('de', 'mn')).toBe('mn');
    expect(messageLocale(null, 'en')).toBe('en');
  });
});

describe('DeviceTouches', () => {
  it('writes a session once a minute, and at once when its user, address or browser changes', () => {
    let now = 1_000_000;
    const t = new DeviceTouches(60_000, 10_000, () => now);
    expect(t.due('s1', 'u1 10.0.0.1 Firefox')).toBe(true);
    expect(t.due('s1', 'u1 10.0.0.1 Firefox')).toBe(false);
    expect(t.due('s2', 'u1 10.0.0.1 Firefox')).toBe(true);
    expect(t.due('s1', 'u1 10.0.0.2 Firefox')).toBe(true);
    expect(t.due('s1', 'u2 10.0.0.2 Firefox')).toBe(true);
    now += 59_999;
    expect(t.due('s1', 'u2 10.0.0.2 Firefox')).toBe(false);
    now += 1;
    expect(t.due('s1', 'u2 10.0.0.2 Firefox')).toBe(true);
    t.forget('s1');
    expect(t.due('s1', 'u2 10.0.0.2 Firefox')).toBe(true);
  });

  it('remembers at most max sessions, then starts again', () => {
    const t = new DeviceTouches(60_000, 2, () => 0);
    expect(t.due('a', 'k')).toBe(true);
    expect(t.due('b', 'k')).toBe(true);
    expect(t.due('c', 'k')).toBe(true);
    expect(t.due('a', 'k')).toBe(true);
    expect(t.due('c', 'k')).toBe(false);
  });
});
