import { initialLang, messageKeys, translate } from './i18n';

describe('console languages', () => {
  it('has every message in both languages', () => {
    expect(messageKeys('mn')).toEqual(messageKeys('en'));
  });

  it('fills placeholders', () => {
    expect(translate('en', 'pageOf', { from: 1, to: 10, total: 42 })).toBe('1–10 of 42');
    expect(translate('mn', 'signedInAs', { who: 'bold@example.mn' })).toBe('bold@example.mn нэвтэрсэн');
  });

  it('starts in the saved language, else the browser’s', () => {
    expect(initialLang('mn', ['en-US'])).toBe('mn');
    expect(initialLang(null, ['de-DE', 'mn-MN'])).toBe('mn');
    expect(initialLang(null, ['fr'])).toBe('en');
  });
});
