import type Provider from 'oidc-provider';
import { pino, type Logger } from 'pino';
import { clientProblem, toProviderClient, type ClientForProvider } from '@gatehouse/oidc-clients';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures } from './support/fixtures.js';

/**
 * A client the token server cannot use (stored before the management API checked clients, or written by SQL) never
 * shows an end user oidc-provider's raw message: the browser gets a friendly page in its language with an error
 * code and a reference, the detail goes to the log under that reference. And the management API's check
 * (@gatehouse/oidc-clients) is the token server's own: for every client, the token server's provider accepts what
 * the check accepts and refuses what it refuses.
 */
let h: AuthHarness;
let fx: Fixtures;

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
});
afterAll(async () => {
  await h?.close();
});

/** Every line the token server's own logger writes from now on; `restore` puts it back. */
function captureLogs(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const log = (h.tokenServer as unknown as { log: Logger }).log;
  const stream = (log as unknown as Record<symbol, { write: (s: string) => boolean }>)[
    pino.symbols.streamSym
  ];
  const write = stream.write;
  const level = log.level;
  stream.write = (line: string) => (lines.push(line), true);
  log.level = 'trace';
  return {
    lines,
    restore: () => {
      stream.write = write;
      log.level = level;
    },
  };
}

async function page(url: string, lang = 'en') {
  const res = await fetch(url, {
    headers: { accept: 'text/html', 'accept-language': lang },
    redirect: 'manual',
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', html: await res.text() };
}

const CALLBACK = 'http://app.test/cb';

function authorizeUrl(clientId: string, params: Record<string, string> = {}) {
  const url = new URL(`${h.url}/authorize`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    response_type: 'id_token',
    redirect_uri: CALLBACK,
    scope: 'openid',
    nonce: 'n-1',
    ...params,
  }))
    url.searchParams.set(k, v);
  return url.toString();
}

describe('a misconfigured client at /authorize', () => {
  it("shows a friendly page in the browser's language; the detail is logged under the page's reference", async () => {
    // implicit with an http callback: oidc-provider refuses to load this client
    const client = await fx.client({
      grantTypes: ['implicit'],
      metadata: { urls: { callbacks: [CALLBACK] } },
    });
    const log = captureLogs();
    try {
      const en = await page(authorizeUrl(client.id));
      expect(en.status).toBe(400);
      expect(en.type).toMatch(/^text\/html/);
      expect(en.html).toContain('<html lang="en">');
      expect(en.html).toContain('not set up correctly');
      // not oidc-provider's words
      for (const raw of ['https scheme', 'redirect_uris', 'implicit flow', 'web clients'])
        expect(en.html).not.toContain(raw);
      const reference = /Reference: ([\w-]+)/.exec(en.html)?.[1];
      expect(reference).toEqual(expect.any(String));
      const logged = log.lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.reference === reference);
      // oidc-provider's code for metadata whose redirect_uris it refuses
      expect(logged).toMatchObject({ client_id: client.id, error: 'invalid_redirect_uri' });
      expect(String(logged?.error_description)).toContain('https scheme');

      const mn = await page(authorizeUrl(client.id), 'mn');
      expect(mn.html).toContain('<html lang="mn">');
      expect(mn.html).not.toContain('not set up correctly');
      expect(mn.html).toMatch(/Лавлах дугаар: [\w-]+/);
    } finally {
      log.restore();
    }
  });

  it('an unregistered redirect_uri and an unknown client are friendly pages too (with the error code)', async () => {
    const client = await fx.client({
      grantTypes: ['authorization_code'],
      metadata: { urls: { callbacks: ['https://app.test/cb'] } },
    });
    const mismatch = await page(
      authorizeUrl(client.id, {
        response_type: 'code',
        redirect_uri: 'https://evil.test/cb',
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
      }),
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.html).not.toContain("did not match any of the client's registered redirect_uris");
    expect(mismatch.html).toContain('invalid_redirect_uri');
    expect(mismatch.html).toContain('not set up correctly');
    const unknown = await page(authorizeUrl('00000000-0000-4000-8000-000000000000'));
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain('invalid_client');
    expect(unknown.html).not.toContain('client is invalid');
  });

  it('API callers (JSON) still get the OAuth error object with its description', async () => {
    const client = await fx.client({
      grantTypes: ['implicit'],
      metadata: { urls: { callbacks: [CALLBACK] } },
    });
    const res = await fetch(authorizeUrl(client.id), {
      headers: { accept: 'application/json' },
      redirect: 'manual',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'invalid_redirect_uri', code: 'invalid_redirect_uri' });
    expect(String(body.error_description)).toContain('https');
  });
});

describe("the management API's check of clients is the token server's own", () => {
  const provider = () => (h.tokenServer as unknown as { provider: Provider }).provider;
  const record = (over: Partial<ClientForProvider>): ClientForProvider => ({
    id: '6f0c1d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f',
    instanceId: '6f0c1d2e-3b4a-4c5d-8e9f-0a1b2c3d4e50',
    tenantId: null,
    clientName: 'c',
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
  const urls = (grantTypes: string[], u: Record<string, unknown>, over: Partial<ClientForProvider> = {}) =>
    record({ grantTypes, clientMetadata: { grant_types: grantTypes, urls: u }, ...over });

  it.each([
    ['machine client', record({})],
    [
      'code flow, http callback',
      urls(['authorization_code', 'refresh_token'], { callbacks: ['http://a.test/cb'] }),
    ],
    [
      'implicit, https',
      urls(['implicit'], { callbacks: ['https://a.test/cb'], logout_urls: ['https://a.test/x'] }),
    ],
    ['implicit, http callback', urls(['implicit'], { callbacks: ['http://a.test/cb'] })],
    [
      'implicit, http logout url',
      urls(['implicit'], { callbacks: ['https://a.test/cb'], logout_urls: ['http://a.test/x'] }),
    ],
    ['implicit on localhost', urls(['implicit'], { callbacks: ['https://localhost/cb'] })],
    ['javascript: callback', urls(['authorization_code'], { callbacks: ['javascript:alert(1)'] })],
    ['fragment', urls(['authorization_code'], { callbacks: ['https://a.test/cb#f'] })],
    ['ftp logout url', urls(['client_credentials'], { logout_urls: ['ftp://a.test/x'] })],
    [
      'native custom scheme',
      urls(['authorization_code'], { callbacks: ['app.test:/cb'] }, { clientType: 'native' }),
    ],
    ['web custom scheme', urls(['authorization_code'], { callbacks: ['app.test:/cb'] })],
    [
      'native http off loopback',
      urls(['authorization_code'], { callbacks: ['http://a.test/cb'] }, { clientType: 'native' }),
    ],
    [
      'public device client',
      record({ isPublic: true, clientSecret: null, grantTypes: ['device_code', 'refresh_token'] }),
    ],
    [
      'every grant',
      record({ grantTypes: ['password', 'otp', 'token_exchange', 'device_code', 'refresh_token'] }),
    ],
  ])('%s', async (_what, c) => {
    const problem = await clientProblem(c);
    let refused: string | undefined;
    try {
      await provider().Client.validate(toProviderClient(c) as never);
    } catch (err) {
      refused = String((err as { error_description?: string }).error_description);
    }
    expect({ refused: refused !== undefined }).toEqual({ refused: problem !== undefined });
  });
});
