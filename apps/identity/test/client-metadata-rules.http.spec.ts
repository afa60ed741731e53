import * as oidc from 'openid-client';
import { Management, uniq, VERSIONS, type Version } from './management-harness.js';

/**
 * A client the token server would refuse is never stored: create and modify check the client as it will be with the
 * token server's own mapping and oidc-provider's own validation (400 naming the field, nothing written). What they
 * accept, the token server serves.
 */
let m: Management;

beforeAll(async () => {
  m = await Management.start();
});
afterAll(async () => {
  await m?.close();
});

const count = async () => Number((await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM clients`))[0].n);

const REFUSED: [string, Record<string, unknown>, string][] = [
  [
    'implicit with an http callback',
    { grant_types: ['implicit'], urls: { callbacks: ['http://app.test/cb'] } },
    'client_metadata.urls.callbacks',
  ],
  [
    'implicit with an http logout url',
    {
      grant_types: ['implicit'],
      urls: { callbacks: ['https://app.test/cb'], logout_urls: ['http://app.test/bye'] },
    },
    'client_metadata.urls.logout_urls',
  ],
  [
    'a javascript: callback',
    { grant_types: ['authorization_code'], urls: { callbacks: ['javascript:alert(1)'] } },
    'client_metadata.urls.callbacks',
  ],
  [
    'a logout url that is no web URL',
    { grant_types: ['client_credentials'], urls: { logout_urls: ['ftp://app.test/bye'] } },
    'client_metadata.urls.logout_urls',
  ],
  [
    'redirect_uris, which the token server does not read',
    { grant_types: ['authorization_code'], urls: { redirect_uris: ['https://app.test/cb'] } },
    'client_metadata.urls.redirect_uris',
  ],
  [
    'callbacks that are no list of URLs',
    { grant_types: ['authorization_code'], urls: { callbacks: 'https://app.test/cb' } },
    'client_metadata.urls.callbacks',
  ],
];

describe('create under /api/v1', () => {
  it.each(REFUSED)('%s: 400 naming the field, nothing written', async (_what, metadata, field) => {
    const before = await count();
    const res = await m
      .call('post', '/api/v1/clients')
      .send({ client_name: uniq('bad'), client_metadata: metadata })
      .expect(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.message.startsWith(field)).toBe(true);
    expect(res.body.details).toEqual([{ field, message: res.body.message }]);
    expect(await count()).toBe(before);
  });

  it('a native app may use a custom scheme and a loopback callback; a web app may not use the scheme', async () => {
    const urls = { callbacks: ['com.example.app:/callback', 'http://127.0.0.1/callback'] };
    await m
      .call('post', '/api/v1/clients')
      .send({
        client_name: uniq('native'),
        client_type: 'native',
        is_public: true,
        client_metadata: { grant_types: ['authorization_code'], urls },
      })
      .expect(201);
    const web = await m
      .call('post', '/api/v1/clients')
      .send({
        client_name: uniq('web'),
        client_type: 'spa',
        is_public: true,
        client_metadata: { grant_types: ['authorization_code'], urls },
      })
      .expect(400);
    expect(web.body.message).toMatch(/^client_metadata\.urls\.callbacks/);
  });
});

describe.each(VERSIONS)('modify under /api/%s', (v: Version) => {
  it('refuses a change that leaves a client the token server refuses, and keeps the client as it was', async () => {
    const created = await m
      .call('post', `/api/v1/clients`)
      .send({
        client_name: uniq('spa'),
        client_metadata: { grant_types: ['authorization_code'], urls: { callbacks: ['http://app.test/cb'] } },
      })
      .expect(201);
    // implicit added to http callbacks (the stored urls stay: the merged client is what is checked)
    const res = await m
      .call('patch', `/api/${v}/clients/${created.body.id}`)
      .send({ client_metadata: { grant_types: ['authorization_code', 'implicit'] } })
      .expect(400);
    expect(res.body.message).toMatch(/^client_metadata\.urls\.callbacks .*https/);
    const [row] = await m.ds.rows<{ client_metadata: { grant_types: string[] } }>(
      `SELECT client_metadata FROM clients WHERE id = $1`,
      [created.body.id],
    );
    expect(row.client_metadata.grant_types).toEqual(['authorization_code']);
    if (v === 'v2') {
      // v2's app_type is the client type: a web client's custom scheme is refused once it stops being native
      const native = await m
        .call('post', `/api/v2/clients`)
        .send({ client_name: uniq('n'), client_metadata: { app_type: 'native' } })
        .expect(201);
      await m
        .call('patch', `/api/v1/clients/${native.body.id}`)
        .send({
          client_metadata: { grant_types: ['authorization_code'], urls: { callbacks: ['app.test:/cb'] } },
        })
        .expect(200);
      const r = await m
        .call('patch', `/api/v2/clients/${native.body.id}`)
        .send({ client_metadata: { app_type: 'spa' } })
        .expect(400);
      expect(r.body.details[0].field).toBe('client_metadata.urls.callbacks');
    }
  });
});

describe('what is accepted, the token server serves', () => {
  it('a client made from the documented urls signs in at /authorize (the authorization request is accepted)', async () => {
    const callback = 'https://app.example.com/callback';
    const c = await m
      .call('post', '/api/v1/clients')
      .send({
        client_name: uniq('web'),
        client_type: 'regular_web',
        client_metadata: {
          grant_types: ['authorization_code'],
          urls: { callbacks: [callback], logout_urls: ['https://app.example.com/signed-out'] },
        },
      })
      .expect(201);
    const config = await m.oidcConfig(c.body.id as string, c.body.client_secret as string);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callback,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const res = await fetch(url, { redirect: 'manual' });
    // to the login page of an interaction, not an error page
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/\/interaction\//);
  });
});
