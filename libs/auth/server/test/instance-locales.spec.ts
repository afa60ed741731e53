import * as oidc from 'openid-client';
import { pickLocale } from '../src/interaction/pages.js';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { BrowserAgent as Agent } from './support/browser-agent.js';
import { Fixtures, type TestClient, type TestResource } from './support/fixtures.js';

/**
 * The sign-in pages speak only the languages of the client's instance (its instance_metadata.supported_locales):
 * ui_locales first, then Accept-Language, among the supported ones the pages have; else the first supported one.
 */
const CALLBACK = 'https://rp.example.test/callback';

let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;
let api: TestResource;
let config: oidc.Configuration;

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  client = await fx.client({
    grantTypes: ['authorization_code'],
    metadata: { urls: { callbacks: [CALLBACK] } },
  });
  api = await fx.resource({ scopes: ['orders:read'] });
  await fx.grant(client, api);
  config = await oidc.discovery(
    new URL(h.url),
    client.id,
    undefined,
    oidc.ClientSecretBasic(client.secret!),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
});
afterAll(async () => {
  await h?.close();
});

async function loginPage(headers: Record<string, string>, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid orders:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: oidc.randomState(),
    resource: api.identifier,
    ...extra,
  });
  const page = await new Agent(h.url, headers).follow(url.toString());
  expect(page.res.status).toBe(200);
  return /<html lang="(\w+)">/.exec(page.html)?.[1];
}

const setLocales = async (locales: unknown) =>
  fx.ds.exec(
    `UPDATE instances SET settings = jsonb_set(settings, '{supported_locales}', $2::jsonb) WHERE id = $1`,
    [await fx.instanceId(), JSON.stringify(locales)],
  );

describe('supported_locales of the instance', () => {
  it('a new database supports both page languages', async () => {
    expect(await loginPage({ 'accept-language': 'mn-MN' })).toBe('mn');
    expect(await loginPage({}, { ui_locales: 'en' })).toBe('en');
  });

  it('only the supported languages are spoken, whatever the browser asks', async () => {
    await setLocales(['mn-MN']);
    expect(await loginPage({ 'accept-language': 'en-US' })).toBe('mn');
    expect(await loginPage({}, { ui_locales: 'en' })).toBe('mn');
    await setLocales(['en_US']);
    expect(await loginPage({ 'accept-language': 'mn' })).toBe('en');
    await setLocales(['en', 'mn']);
    expect(await loginPage({ 'accept-language': 'fr, mn;q=0.8' })).toBe('mn');
  });

  it('pickLocale: supported first, then the first supported page language, then English', () => {
    expect(pickLocale('fr', 'de', ['mn', 'en'])).toBe('mn');
    expect(pickLocale(undefined, 'en', ['fr'])).toBe('en'); // no page language supported: every one is
    expect(pickLocale('mn', undefined, undefined)).toBe('mn');
    expect(pickLocale(undefined, undefined, [])).toBe('en');
  });
});
