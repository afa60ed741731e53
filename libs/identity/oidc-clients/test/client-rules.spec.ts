import { randomUUID } from 'node:crypto';
import { clientProblem, toProviderClient, type ClientForProvider } from '../src/index.js';

const client = (over: Partial<ClientForProvider> = {}): ClientForProvider => ({
  id: randomUUID(),
  instanceId: randomUUID(),
  tenantId: null,
  clientName: 'web',
  clientType: null,
  clientSecret: 'secret',
  clientSecretExpiresAt: null,
  grantTypes: ['client_credentials'],
  clientMetadata: {},
  isPublic: false,
  isFirstParty: false,
  isGlobal: true,
  ...over,
});
const withUrls = (
  grantTypes: string[],
  urls: Record<string, unknown>,
  over: Partial<ClientForProvider> = {},
) => client({ grantTypes, clientMetadata: { grant_types: grantTypes, urls }, ...over });

describe('clientProblem: what the token server refuses, named by our field', () => {
  it.each([
    ['a machine client', client()],
    [
      'a code flow with https and http callbacks',
      withUrls(['authorization_code'], { callbacks: ['https://a.test/cb', 'http://localhost:3000/cb'] }),
    ],
    [
      'implicit with https callbacks and logout urls',
      withUrls(['implicit'], { callbacks: ['https://a.test/cb'], logout_urls: ['https://a.test/bye'] }),
    ],
    [
      'a native app with a custom scheme',
      withUrls(
        ['authorization_code'],
        { callbacks: ['com.example.app:/cb'] },
        { clientType: 'native', isPublic: true },
      ),
    ],
    ['authorization_code without callbacks (no browser flow yet)', withUrls(['authorization_code'], {})],
    [
      'free-form url lists it does not read',
      withUrls(['client_credentials'], { web_origins: ['https://a.test'] }),
    ],
    [
      'a public client',
      withUrls(
        ['authorization_code', 'refresh_token'],
        { callbacks: ['https://a.test/cb'] },
        { isPublic: true, clientSecret: null },
      ),
    ],
  ])('accepts %s', async (_what, c) => {
    expect(await clientProblem(c)).toBeUndefined();
  });

  it.each([
    [
      'implicit with an http callback',
      withUrls(['implicit'], { callbacks: ['http://a.test/cb'] }),
      'client_metadata.urls.callbacks',
      'https',
    ],
    [
      'implicit with an http logout url',
      withUrls(['implicit'], { callbacks: ['https://a.test/cb'], logout_urls: ['http://a.test/bye'] }),
      'client_metadata.urls.logout_urls',
      'https',
    ],
    [
      'implicit on localhost',
      withUrls(['implicit'], { callbacks: ['https://localhost/cb'] }),
      'client_metadata.urls.callbacks',
      'localhost',
    ],
    [
      'a javascript: callback',
      withUrls(['authorization_code'], { callbacks: ['javascript:alert(1)'] }),
      'client_metadata.urls.callbacks',
      'web uris',
    ],
    [
      'a callback with a fragment',
      withUrls(['authorization_code'], { callbacks: ['https://a.test/cb#x'] }),
      'client_metadata.urls.callbacks',
      'fragments',
    ],
    [
      'a callback that is no URL',
      withUrls(['authorization_code'], { callbacks: ['not a url'] }),
      'client_metadata.urls.callbacks',
      'valid uris',
    ],
    [
      'a logout url that is no web URL',
      withUrls(['client_credentials'], { logout_urls: ['ftp://a.test/x'] }),
      'client_metadata.urls.logout_urls',
      'web uris',
    ],
    [
      'a native http callback off loopback',
      withUrls(['authorization_code'], { callbacks: ['http://a.test/cb'] }, { clientType: 'native' }),
      'client_metadata.urls.callbacks',
      'loopback',
    ],
    [
      'redirect_uris instead of callbacks',
      withUrls(['authorization_code'], { redirect_uris: ['https://a.test/cb'] }),
      'client_metadata.urls.redirect_uris',
      'callbacks',
    ],
    [
      'callbacks that are not a list',
      withUrls(['authorization_code'], { callbacks: 'https://a.test/cb' }),
      'client_metadata.urls.callbacks',
      'array',
    ],
    [
      'a callback that is not a string',
      withUrls(['authorization_code'], { callbacks: [42] }),
      'client_metadata.urls.callbacks',
      'array',
    ],
  ])('refuses %s', async (_what, c, field, words) => {
    const problem = await clientProblem(c);
    expect(problem?.field).toBe(field);
    expect(problem?.message.startsWith(field)).toBe(true);
    expect(problem?.message).toContain(words);
  });
});

describe('toProviderClient: secret expiry', () => {
  it('is 0 for never, the epoch second until then, and a secret nobody knows from the instant it passes', () => {
    const at = new Date('2099-01-01T00:00:00.500Z');
    const c = client({ clientSecretExpiresAt: at });
    expect(toProviderClient(client())).toMatchObject({
      client_secret: 'secret',
      client_secret_expires_at: 0,
    });
    expect(toProviderClient(c)).toMatchObject({
      client_secret: 'secret',
      client_secret_expires_at: Math.ceil(at.getTime() / 1000),
    });
    const expired = toProviderClient(c, undefined, at.getTime());
    expect(expired?.client_secret).toMatch(/^expired\.[\w-]{43}$/);
    expect(expired?.client_secret_expires_at).toBe(0);
    // the same stand-in each time (one oidc-provider Client), another for another client
    expect(toProviderClient(c, undefined, at.getTime() + 1)?.client_secret).toBe(expired?.client_secret);
    expect(toProviderClient({ ...c, id: randomUUID() }, undefined, at.getTime())?.client_secret).not.toBe(
      expired?.client_secret,
    );
  });
});
