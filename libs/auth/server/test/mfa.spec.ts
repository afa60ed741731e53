import { decodeJwt } from 'jose';
import { pino, type Logger } from 'pino';
import { HTTP_FOUNDATION, type HttpFoundation } from '@gatehouse/http';
import { sealedIn } from '@gatehouse/identity-data';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import {
  Fixtures,
  tokenRequest,
  type TestClient,
  type TestResource,
  type TestUser,
} from './support/fixtures.js';
import { totpCode, totpStep } from '../src/mfa/totp.js';
import { ACR_MFA, ACR_PWD } from '../src/mfa/second-factors.js';
import { MFA_OTP_GRANT, MFA_RECOVERY_CODE_GRANT } from '../src/oidc/mfa.grant.js';

const MFA_GRANTS = [MFA_OTP_GRANT, MFA_RECOVERY_CODE_GRANT];

let h: AuthHarness;
let fx: Fixtures;
let client: TestClient;
let api: TestResource;
/** The second factors' clock: each test moves it on by whole time steps. */
let now = Date.UTC(2031, 0, 1, 12, 0, 0);

beforeAll(async () => {
  h = await startAuth();
  fx = new Fixtures(h);
  h.tokenServer.mfa.clock = () => new Date(now);
  client = await fx.client({ grantTypes: ['password', 'refresh_token', 'otp', ...MFA_GRANTS] });
  api = await fx.resource({ scopes: ['orders:read'] });
  await fx.grant(client, api);
});
afterAll(async () => {
  await h?.close();
});

const basic = () => ({ id: client.id, secret: client.secret! });
const nextStep = () => {
  now += 30_000;
  return totpStep(new Date(now));
};

const password = (u: TestUser, extra: Record<string, string> = {}, json = false) =>
  tokenRequest(
    h.url,
    {
      grant_type: 'password',
      username: u.email,
      password: u.password,
      scope: 'openid offline_access',
      ...extra,
    },
    { basic: basic(), json },
  );

const mfaOtp = (mfaToken: string, otp: string, json = false) =>
  tokenRequest(h.url, { grant_type: MFA_OTP_GRANT, mfa_token: mfaToken, otp }, { basic: basic(), json });

const mfaRecovery = (mfaToken: string, code: string) =>
  tokenRequest(
    h.url,
    { grant_type: MFA_RECOVERY_CODE_GRANT, mfa_token: mfaToken, recovery_code: code },
    { basic: basic() },
  );

/** The secret of the user's confirmed TOTP, opened with the token server's own SecretBox. */
async function secretOf(userId: string): Promise<string> {
  const row = await fx.ds.one<{ id: string; secret_enc: string }>(
    `SELECT id, secret_enc FROM user_authenticators WHERE user_id = $1 AND type = 'totp'`,
    [userId],
  );
  return fx.box.decrypt(row!.secret_enc, sealedIn.totpSecret(row!.id));
}

/** Enrols a TOTP for the user through the token server's own second factors; its secret and recovery codes. */
async function enrol(u: TestUser): Promise<{ secret: string; codes: string[] }> {
  const user = { id: u.id, instanceId: await fx.instanceId() };
  const pending = await h.tokenServer.mfa.startEnrolment(user);
  const done = await h.tokenServer.mfa.confirmEnrolment(
    user,
    pending.id,
    totpCode(pending.secret, nextStep()),
  );
  if (done === 'wrong_code') throw new Error('enrolment refused');
  expect(await secretOf(u.id)).toBe(pending.secret);
  return { secret: pending.secret, codes: done.codes };
}

async function mfaRequired(u: TestUser, extra: Record<string, string> = {}): Promise<string> {
  const r = await password(u, extra);
  expect(r.status).toBe(403);
  expect(r.body).toMatchObject({ error: 'mfa_required', code: 'mfa_required' });
  expect(r.headers.get('cache-control')).toContain('no-store');
  expect(typeof r.body.mfa_token).toBe('string');
  return r.body.mfa_token as string;
}

async function mfaEvents(userId: string) {
  await h.tokenServer.events.flush();
  return fx.ds.rows<{ type: string; reason: string | null; details: Record<string, unknown> }>(
    `SELECT type, reason, details FROM events WHERE user_id = $1 AND (type LIKE 'mfa.%' OR reason = 'mfa_failed')
      ORDER BY created_at, id`,
    [userId],
  );
}

describe('password grant and the second factor', () => {
  it('a user without an authenticator (policy optional) gets tokens at once: amr pwd, the one-factor acr', async () => {
    const u = await fx.user();
    const r = await password(u);
    expect(r.status).toBe(200);
    const id = decodeJwt(r.body.id_token as string);
    expect(id).toMatchObject({ sub: u.id, amr: ['pwd'], acr: ACR_PWD });
  });

  it('with a TOTP: 403 mfa_required, then mfa-otp with the code issues the tokens with amr and acr', async () => {
    const u = await fx.user();
    const { secret } = await enrol(u);
    const token = await mfaRequired(u, { resource: api.identifier });
    const r = await mfaOtp(token, totpCode(secret, nextStep()));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: 'Bearer' });
    expect(decodeJwt(r.body.id_token as string)).toMatchObject({
      sub: u.id,
      amr: ['pwd', 'otp', 'mfa'],
      acr: ACR_MFA,
    });
    // the first request's resource and scope
    expect(decodeJwt(r.body.access_token as string)).toMatchObject({ aud: api.identifier, sub: u.id });
    // the refreshed ID token keeps the sign-in's acr and amr
    const refreshed = await tokenRequest(
      h.url,
      { grant_type: 'refresh_token', refresh_token: r.body.refresh_token as string },
      { basic: basic() },
    );
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.id_token as string)).toMatchObject({
      amr: ['pwd', 'otp', 'mfa'],
      acr: ACR_MFA,
    });
    // the mfa_token works once
    const again = await mfaOtp(token, totpCode(secret, nextStep()));
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('the otp grant (a one-time code as first factor) answers mfa_required too: amr otp, otp, mfa', async () => {
    const u = await fx.user();
    const { secret } = await enrol(u);
    const code = await h.tokenServer.codes.issue(fx.ds, {
      instanceId: await fx.instanceId(),
      userId: u.id,
      clientId: client.id,
      channel: 'email',
    });
    const first = await tokenRequest(
      h.url,
      { grant_type: 'otp', username: u.email, otp: code, scope: 'openid' },
      { basic: basic() },
    );
    expect(first).toMatchObject({ status: 403, body: { error: 'mfa_required' } });
    const r = await mfaOtp(first.body.mfa_token as string, totpCode(secret, nextStep()));
    expect(r.status).toBe(200);
    expect(decodeJwt(r.body.id_token as string)).toMatchObject({ amr: ['otp', 'mfa'], acr: ACR_MFA });
    // a client not given the MFA grants still gets mfa_required (never the tokens) and cannot finish
    const plain = await fx.client({ grantTypes: ['password'] });
    const refused = await tokenRequest(
      h.url,
      { grant_type: 'password', username: u.email, password: u.password },
      { basic: { id: plain.id, secret: plain.secret! } },
    );
    expect(refused.status).toBe(403);
    const cannot = await tokenRequest(
      h.url,
      {
        grant_type: MFA_OTP_GRANT,
        mfa_token: refused.body.mfa_token as string,
        otp: totpCode(secret, nextStep()),
      },
      { basic: { id: plain.id, secret: plain.secret! } },
    );
    expect(cannot).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: 'requested grant type is not allowed for this client',
      },
    });
  });

  it('takes JSON token requests too', async () => {
    const u = await fx.user();
    const { secret } = await enrol(u);
    const first = await password(u, {}, true);
    expect(first).toMatchObject({ status: 403, body: { error: 'mfa_required' } });
    const r = await mfaOtp(first.body.mfa_token as string, totpCode(secret, nextStep()), true);
    expect(r.status).toBe(200);
  });

  it('a code (time step) is accepted once; a wrong code is refused; another client cannot use the token', async () => {
    const u = await fx.user();
    const { secret } = await enrol(u);
    const code = totpCode(secret, nextStep());
    expect((await mfaOtp(await mfaRequired(u), code)).status).toBe(200);
    const token = await mfaRequired(u);
    const reused = await mfaOtp(token, code);
    expect(reused).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'this code was already used' },
    });
    const wrong = await mfaOtp(token, code === '000000' ? '111111' : '000000');
    expect(wrong).toMatchObject({
      status: 400,
      body: { error_description: 'the second factor is not right' },
    });
    const other = await fx.client({ grantTypes: ['password', ...MFA_GRANTS] });
    const elsewhere = await tokenRequest(
      h.url,
      { grant_type: MFA_OTP_GRANT, mfa_token: token, otp: totpCode(secret, nextStep()) },
      { basic: { id: other.id, secret: other.secret! } },
    );
    expect(elsewhere).toMatchObject({
      status: 400,
      body: { error_description: 'invalid or expired mfa_token' },
    });
    // a wrong token, and missing parameters
    expect(await mfaOtp('x'.repeat(43), '123456')).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await mfaOtp(token, '')).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const events = await mfaEvents(u.id);
    expect(events.map((e) => [e.reason, e.details.mfa_reason, e.details.factor])).toEqual([
      ['mfa_failed', 'reused_code', 'totp'],
      ['mfa_failed', 'wrong_code', 'totp'],
    ]);
  });

  it('a recovery code works once; the second use is refused', async () => {
    const u = await fx.user();
    const { codes } = await enrol(u);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    const r = await mfaRecovery(await mfaRequired(u), codes[3].toUpperCase().replace(/-/g, ' '));
    expect(r.status).toBe(200);
    expect(decodeJwt(r.body.id_token as string)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
    const again = await mfaRecovery(await mfaRequired(u), codes[3]);
    expect(again).toMatchObject({ status: 400, body: { error_description: 'this code was already used' } });
    expect((await mfaRecovery(await mfaRequired(u), codes[4])).status).toBe(200);
    // stored hashed: no code in the row
    const row = await fx.ds.one<{ t: string }>(
      `SELECT row_to_json(a)::text AS t FROM user_authenticators a WHERE user_id = $1 AND type = 'recovery_codes'`,
      [u.id],
    );
    for (const c of codes) {
      expect(row!.t).not.toContain(c);
      expect(row!.t).not.toContain(c.replace(/-/g, ''));
    }
  });

  it('the failure budget: 5 wrong factors lock the second step, even the right code, until the lock ends', async () => {
    const u = await fx.user();
    const { secret, codes } = await enrol(u);
    const token = await mfaRequired(u);
    for (let i = 0; i < 4; i++) {
      expect((await mfaOtp(token, '000001')).body.error_description).toBe('the second factor is not right');
    }
    expect((await mfaRecovery(token, 'aaaa-bbbb-cccc-dddd')).body.error_description).toBe(
      'too many wrong second factors: try again later',
    );
    const locked = await mfaOtp(token, totpCode(secret, nextStep()));
    expect(locked).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'too many wrong second factors: try again later' },
    });
    expect((await mfaRecovery(token, codes[0])).status).toBe(400);
    const events = await mfaEvents(u.id);
    expect(events.map((e) => e.details.mfa_reason)).toEqual([
      'wrong_code',
      'wrong_code',
      'wrong_code',
      'wrong_code',
      'locked',
      'locked',
      'locked',
    ]);
    // 15 minutes later (the token itself has expired by then: a new sign-in)
    now += 15 * 60_000 + 1000;
    expect((await mfaOtp(await mfaRequired(u), totpCode(secret, nextStep()))).status).toBe(200);
  });

  it('policy: off skips the second step; required without an authenticator says enrolment needs the browser', async () => {
    const u = await fx.user();
    await enrol(u);
    const offClient = await fx.client({ grantTypes: ['password', ...MFA_GRANTS] });
    await fx.ds.exec(`UPDATE clients SET mfa = 'off' WHERE id = $1`, [offClient.id]);
    const off = await tokenRequest(
      h.url,
      { grant_type: 'password', username: u.email, password: u.password, scope: 'openid' },
      { basic: { id: offClient.id, secret: offClient.secret! } },
    );
    expect(off.status).toBe(200);
    expect(decodeJwt(off.body.id_token as string)).toMatchObject({ amr: ['pwd'], acr: ACR_PWD });

    const fresh = await fx.user();
    await fx.ds.exec(`UPDATE instances SET mfa = 'required' WHERE id = $1`, [await fx.instanceId()]);
    try {
      const r = await password(fresh);
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('mfa_required');
      expect(r.body.mfa_token).toBeUndefined();
      expect(String(r.body.error_description)).toContain('browser');
      // the client's own policy comes first
      const viaOff = await tokenRequest(
        h.url,
        { grant_type: 'password', username: fresh.email, password: fresh.password },
        { basic: { id: offClient.id, secret: offClient.secret! } },
      );
      expect(viaOff.status).toBe(200);
    } finally {
      await fx.ds.exec(`UPDATE instances SET mfa = NULL WHERE id = $1`, [await fx.instanceId()]);
    }
  });

  it('no factor secret, code or mfa_token in any log line', async () => {
    const u = await fx.user();
    const { secret, codes } = await enrol(u);
    const logs = captureLogs();
    let token = '';
    let code = '';
    try {
      token = await mfaRequired(u);
      await mfaOtp(token, '999999');
      code = totpCode(secret, nextStep());
      expect((await mfaOtp(token, code)).status).toBe(200);
      await mfaRecovery(await mfaRequired(u), codes[0]);
    } finally {
      logs.restore();
    }
    expect(logs.lines.length).toBeGreaterThan(0);
    const all = logs.lines.join('\n');
    for (const s of [secret, token, code, codes[0], codes[0].replace(/-/g, '')]) expect(all).not.toContain(s);
  });
});

/** Every line the token server and its HTTP foundation log, at the most detailed level, kept here. */
function captureLogs(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const loggers = [
    (h.tokenServer as unknown as { log: Logger }).log,
    h.built.app.get<HttpFoundation>(HTTP_FOUNDATION).logger,
  ];
  const undo = loggers.map((log) => {
    const stream = (log as unknown as Record<symbol, { write: (s: string) => boolean }>)[
      pino.symbols.streamSym
    ];
    const write = stream.write;
    const level = log.level;
    stream.write = (line: string) => (lines.push(line), true);
    log.level = 'trace';
    return () => {
      stream.write = write;
      log.level = level;
    };
  });
  return { lines, restore: () => undo.forEach((u) => u()) };
}
