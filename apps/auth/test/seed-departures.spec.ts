import { createRemoteJWKSet, decodeJwt, importJWK, jwtVerify, SignJWT } from 'jose';
import type { AddressInfo } from 'node:net';
import { eventually, smtpSink, type SunkMail } from '@gatehouse/testing';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { actionOf, BrowserAgent, fieldOf } from './support/browser-agent.js';
import {
  Fixtures,
  tokenInfo,
  tokenRequest,
  type TestClient,
  type TestResource,
  type TestUser,
} from './support/fixtures.js';

/**
 * Departures from the documents closed in the token server: the passwordless request of document 2 as the document
 * shapes it, userinfo with an API's access token, `fields` at the device authorization endpoint, and /tokeninfo
 * describing ID tokens.
 */
const mails: SunkMail[] = [];
const smtp = smtpSink(mails);

let h: AuthHarness;
let fx: Fixtures;
let api: TestResource;

beforeAll(async () => {
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  h = await startAuth({
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    AUTH_OTP_SEND_INTERVAL_SEC: '0',
    AUTH_OTP_SENDS_PER_HOUR: '1000',
  });
  fx = new Fixtures(h);
  api = await fx.resource({ scopes: ['shop:buy', 'shop:sell'] });
});
afterAll(async () => {
  await h?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
});

const basic = (c: TestClient) => ({ id: c.id, secret: c.secret! });
const json = (r: Response) => r.json() as Promise<Record<string, unknown>>;
const lastMailTo = (to: string) =>
  mails
    .filter((m) => m.to === to)
    .at(-1)!
    .body.replace(/=\r?\n/g, '')
    .replace(/=3D/g, '=');

describe('5. fields at POST /device/code', () => {
  let client: TestClient;
  beforeAll(async () => {
    client = await fx.client({ grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] });
  });
  const device = (params: Record<string, string>, query = '') =>
    fetch(`${h.url}/device/code${query}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams(params).toString(),
    }).then(async (r) => ({ status: r.status, body: await json(r) }));

  it('an unknown field name is 400 invalid_request naming it, as at /token', async () => {
    const r = await device({ scope: 'openid', fields: 'device_code,password' });
    expect([r.status, r.body.error, r.body.code]).toEqual([400, 'invalid_request', 'invalid_request']);
    expect(r.body.error_description).toContain('password');
    const q = await device({ scope: 'openid' }, '?fields=nope');
    expect(q.status).toBe(400);
  });

  it('known field names pick the attributes of the answer', async () => {
    const r = await device({ scope: 'openid', fields: 'device_code,user_code,interval' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['device_code', 'interval', 'user_code']);
    const all = await device({ scope: 'openid' });
    expect(Object.keys(all.body).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
  });
});
