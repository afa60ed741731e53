import { browserClientOrigin } from './provider.js';

describe('CORS at the token endpoints (clientBasedCORS)', () => {
  const console = {
    clientAuthMethod: 'none',
    redirectUris: ['http://localhost:3003/callback'],
    postLogoutRedirectUris: ['https://console.example.com/'],
  };

  it('allows a public client from the origins of its own callback and sign-out URLs', () => {
    expect(browserClientOrigin(console, 'http://localhost:3003')).toBe(true);
    expect(browserClientOrigin(console, 'https://console.example.com')).toBe(true);
  });

  it('refuses any other origin, and every confidential client', () => {
    expect(browserClientOrigin(console, 'http://localhost:3004')).toBe(false);
    expect(browserClientOrigin(console, 'https://evil.example')).toBe(false);
    expect(browserClientOrigin(console, 'null')).toBe(false);
    expect(
      browserClientOrigin({ ...console, clientAuthMethod: 'client_secret_basic' }, 'http://localhost:3003'),
    ).toBe(false);
    expect(
      browserClientOrigin({ clientAuthMethod: 'none', redirectUris: ['not a url'] }, 'http://localhost:3003'),
    ).toBe(false);
  });
});
