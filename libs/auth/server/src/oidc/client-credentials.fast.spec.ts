import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { secretCredentials } from '../client-auth/index.js';
import { LearnedScopes } from './client-credentials.scopes.js';

/**
 * The fast client_credentials path reads client credentials by oidc-provider's rules (client-auth,
 * OIDC_PROVIDER_BASIC) and learns the scope of its tokens from oidc-provider's answers (LearnedScopes). Both are
 * checked here against a bare oidc-provider (memory adapter, one static client, one resource granting `a b c`, or
 * `a b` when the request says so).
 */
const CLIENT = { id: 'c1', secret: 'sec+ret/1' };
const RESOURCE = 'urn:test:api';
const GRANTED = ['a', 'b', 'c'];
/** The grant oidc-provider uses for a request with header x-grant: 'changed' (a grant changed meanwhile). */
const CHANGED = ['a', 'b'];
const learned = new LearnedScopes(4);

let server: Server;
let base: string;

beforeAll(async () => {
  const provider = new Provider('http://localhost', {
    clients: [
      {
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    features: {
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => RESOURCE,
        getResourceServerInfo: async (ctx) => {
          const params = ctx.oidc.params as Record<string, unknown>;
          const granted = ctx.get('x-grant') === 'changed' ? CHANGED : GRANTED;
          // as config/resources.ts: without `scope`, every granted scope
          if (!params.scope) params.scope = granted.join(' ');
          return { scope: granted.join(' '), accessTokenFormat: 'opaque' };
        },
      },
    },
  });
  provider.on('grant.success', (ctx) => learned.learn(ctx));
  const callback = provider.callback();
  // as the token endpoint does for a request the fast path has not learned: marked with the scope it asks
  server = createServer((req, res) => {
    const asked = req.headers['x-asked'];
    if (typeof asked === 'string') learned.ask(req, asked === '-' ? undefined : asked);
    void callback(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function token(
  body: Record<string, string>,
  authorization?: string,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${base}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(authorization !== undefined ? { authorization } : {}),
      ...headers,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource: RESOURCE, ...body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const enc = (s: string) => encodeURIComponent(s);

describe('client credentials are read as oidc-provider reads them', () => {
  const basics: Array<[string, string]> = [
    ['the usual form', `Basic ${b64(`${enc(CLIENT.id)}:${enc(CLIENT.secret)}`)}`],
    ['any case of the scheme', `bAsIc ${b64(`${CLIENT.id}:${enc(CLIENT.secret)}`)}`],
    ['percent-encoded characters', `Basic ${b64(`%63%31:${enc(CLIENT.secret)}`)}`],
    ['the secret not encoded (+ reads as a space)', `Basic ${b64(`${CLIENT.id}:${CLIENT.secret}`)}`],
    ['base64 without its padding', `Basic ${b64(`${CLIENT.id}:${enc(CLIENT.secret)}x`).replace(/=+$/, '')}`],
    ['base64 with wrong padding', `Basic ${b64(`${CLIENT.id}:${enc(CLIENT.secret)}`)}==`],
    ['two spaces', `Basic  ${b64(`${CLIENT.id}:${enc(CLIENT.secret)}`)}`],
    ['another scheme', `Bearer ${b64(`${CLIENT.id}:${enc(CLIENT.secret)}`)}`],
    ['no colon', `Basic ${b64(CLIENT.id)}`],
    ['an empty secret', `Basic ${b64(`${CLIENT.id}:`)}`],
    ['an empty id', `Basic ${b64(`:${enc(CLIENT.secret)}`)}`],
    ['a character outside VSCHAR', `Basic ${b64(`${CLIENT.id}:${enc(`${CLIENT.secret}é`)}`)}`],
    ['a control character', `Basic ${b64(`${CLIENT.id}:${enc(`${CLIENT.secret}\t`)}`)}`],
    ['broken percent-encoding', `Basic ${b64(`${CLIENT.id}:%E0%A4%A`)}`],
  ];

  it.each(basics)('Basic: %s', async (_name, header) => {
    const creds = secretCredentials(header, undefined, undefined);
    const ok = creds?.id === CLIENT.id && creds.secret === CLIENT.secret;
    expect((await token({}, header)).status === 200).toBe(ok);
  });

  const mixed: Array<[string, string | undefined, Record<string, string>]> = [
    ['client_secret_post', undefined, { client_id: CLIENT.id, client_secret: CLIENT.secret }],
    ['client_secret_post without the secret', undefined, { client_id: CLIENT.id }],
    [
      'Basic and the same client_id',
      `Basic ${b64(`${CLIENT.id}:${enc(CLIENT.secret)}`)}`,
      { client_id: CLIENT.id },
    ],
    [
      'Basic and another client_id',
      `Basic ${b64(`${CLIENT.id}:${enc(CLIENT.secret)}`)}`,
      { client_id: 'c2' },
    ],
    [
      'Basic and client_secret',
      `Basic ${b64(`${CLIENT.id}:${enc(CLIENT.secret)}`)}`,
      { client_secret: CLIENT.secret },
    ],
  ];

  it.each(mixed)('%s', async (_name, header, body) => {
    const creds = secretCredentials(header, body.client_id, body.client_secret);
    const ok = creds?.id === CLIENT.id && creds.secret === CLIENT.secret;
    expect((await token(body, header)).status === 200).toBe(ok);
  });
});

describe('LearnedScopes', () => {
  const creds = { client_id: CLIENT.id, client_secret: CLIENT.secret };

  it.each([undefined, 'a', 'c a', 'a a b', 'b x', 'x', 'c b a c'])(
    "learns oidc-provider's scope for scope=%s",
    async (scope) => {
      const answer = await token({ ...creds, ...(scope !== undefined ? { scope } : {}) }, undefined, {
        'x-asked': scope ?? '-',
      });
      expect(answer.status).toBe(200);
      expect(learned.answer(GRANTED.join(' '), scope)).toBe(answer.body.scope ?? '');
    },
  );

  it('learns under the grant oidc-provider used, not the one the request was asked under', async () => {
    const answer = await token({ ...creds, scope: 'c b' }, undefined, {
      'x-asked': 'c b',
      'x-grant': 'changed',
    });
    expect(answer.body.scope).toBe('b');
    expect(learned.answer(CHANGED.join(' '), 'c b')).toBe('b');
    expect(learned.answer(GRANTED.join(' '), 'c b')).toBeUndefined();
  });

  it('learns nothing from a request not marked, nor from a refusal; holds at most its bound', async () => {
    await token({ ...creds, scope: 'b c' });
    expect(learned.answer(GRANTED.join(' '), 'b c')).toBeUndefined();
    await token({ client_id: CLIENT.id, client_secret: 'wrong', scope: 'c' }, undefined, { 'x-asked': 'c' });
    expect(learned.answer(GRANTED.join(' '), 'c')).toBeUndefined();
    expect(learned.size).toBeLessThanOrEqual(4);
  });
});
