import { consentPage, continueUrlOf, failedPasswordRules, passwordRuleTexts, signupPage } from './pages.js';

describe('passwordRuleTexts', () => {
  it('says a length rule in the page language and any other rule by its description', () => {
    const rules = [
      { order: 2, validator: 'digit', description: 'At least one digit', rules: '\\d' },
      { order: 1, validator: 'min_length', description: 'At least 8 characters', rules: '^[\\s\\S]{8,}$' },
      { order: 3, validator: 'len', rules: '^.{0,64}$' },
    ];
    expect(passwordRuleTexts('en', rules)).toEqual([
      'At least 8 characters',
      'At least one digit',
      'At most 64 characters',
    ]);
    expect(passwordRuleTexts('mn', rules)).toEqual([
      'Хамгийн багадаа 8 тэмдэгт',
      'At least one digit',
      'Хамгийн ихдээ 64 тэмдэгт',
    ]);
  });

  it('names only the rules a password fails', () => {
    const rules = [
      { order: 1, rules: '^.{10,}$' },
      { order: 2, description: 'A digit', rules: '\\d' },
    ];
    expect(failedPasswordRules('en', rules, 'abc1')).toEqual(['At least 10 characters']);
    expect(failedPasswordRules('mn', rules, 'abcdefghijk')).toEqual(['A digit']);
    expect(failedPasswordRules('en', rules, 'abcdefghij1')).toEqual([]);
  });
});

describe('continueUrlOf', () => {
  it('prefers initiate_login_uri, then the first callback origin, only http(s)', () => {
    expect(
      continueUrlOf({
        urls: { initiate_login_uri: 'https://app.example/login', callbacks: ['https://app.example/cb'] },
      }),
    ).toBe('https://app.example/login');
    expect(continueUrlOf({ urls: { callbacks: ['https://app.example/cb?x=1'] } })).toBe(
      'https://app.example/',
    );
    expect(
      continueUrlOf({ urls: { initiate_login_uri: 'javascript:alert(1)', callbacks: ['myapp://cb'] } }),
    ).toBe(undefined);
    expect(continueUrlOf(undefined)).toBe(undefined);
  });
});

describe('consentPage', () => {
  const base = {
    nonce: 'n',
    action: '/interaction/u/consent',
    switchAction: '/interaction/u/switch',
    csrf: 'c',
    clientName: 'App <x>',
    account: 'a@example.test',
  };

  it('names the API, describes scopes in words, escapes everything', () => {
    const html = consentPage({
      ...base,
      locale: 'en',
      scopes: [{ name: 'openid' }],
      apis: [
        {
          name: 'Orders <API>',
          scopes: [
            { name: 'read:orders', description: null },
            { name: 'ship', description: 'Ship your orders' },
            { name: 'odd scope' },
          ],
        },
      ],
    });
    expect(html).toContain('On Orders &lt;API&gt;:');
    expect(html).toContain('<li data-scope="read:orders">Read orders</li>');
    expect(html).toContain('<li data-scope="ship">Ship your orders</li>');
    expect(html).toContain('Use the permission “odd scope”');
    expect(html).toContain('App &lt;x&gt; asks for access');
    expect(html).toContain('Signed in as a@example.test.');
    // the decision is the page's first form
    expect(html.indexOf('action="/interaction/u/consent"')).toBeLessThan(
      html.indexOf('action="/interaction/u/switch"'),
    );
  });
});

describe('signupPage', () => {
  it('shows the rules before any submit and a problem beside its field', () => {
    const fresh = signupPage({
      locale: 'en',
      nonce: 'n',
      action: '/a',
      csrf: 'c',
      rules: ['At least 8 characters'],
    });
    expect(fresh).toContain('id="password-rules"');
    expect(fresh).not.toContain('role="alert"');
    const bad = signupPage({
      locale: 'mn',
      nonce: 'n',
      action: '/a',
      csrf: 'c',
      rules: [],
      problems: [{ field: 'phone', problem: 'phone' }],
    });
    expect(bad).toContain('id="phone-error"');
    expect(bad).toMatch(/id="phone"[^>]*aria-describedby="phone-error"[^>]*aria-invalid="true"/);
  });
});
