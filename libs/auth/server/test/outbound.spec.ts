import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startAuth, type AuthHarness } from './support/auth-app.js';
import { Fixtures, tokenRequest, type TestClient } from './support/fixtures.js';
import { HostileUpstream, type HugeMode } from './support/hostile-upstream.js';
import { LocalIssuer } from '@gatehouse/testing';

/**
 * Every fetch the token server makes to an identity provider (discovery documents, key sets) goes through one
 * outbound policy: https only, the resolved address checked and pinned, an operator allow-list for development;
 * bodies read with a byte cap, in bounded time, a bounded number at once; one generic error to the caller.
 *
 * Here the allow-list names two origins only (the real local issuer and a hostile one): every other port on this
 * machine stands for an internal service that a tenant administrator must not reach through us.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const GENERIC = 'the identity provider could not be reached';

let h: AuthHarness;
let fx: Fixtures;
let issuer: LocalIssuer;
let hostile: HostileUpstream;
/** An internal service: answers the issuer's real key set to whoever asks, and counts who did. */
let victim: Server;
let victimHits = 0;
let victimUrl: string;
const upstreamClientId = `gatehouse-${randomBytes(4).toString('hex')}`;
const tag = () => randomBytes(4).toString('hex');

beforeAll(async () => {
  issuer = await LocalIssuer.start();
  hostile = await HostileUpstream.start();
  victim = createServer((_req, res) => {
    victimHits++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: issuer.keys.map((k) => k.publicJwk) }));
  });
  await new Promise<void>((resolve) => victim.listen(0, '127.0.0.1', resolve));
  victimUrl = `http://127.0.0.1:${(victim.address() as AddressInfo).port}`;
  h = await startAuth({
    OUTBOUND_ALLOWLIST: `${issuer.url}, ${hostile.url}`,
    OUTBOUND_TIMEOUT_MS: '2000',
  });
  fx = new Fixtures(h);
});
afterAll(async () => {
  await h?.close();
  await issuer?.stop();
  await hostile?.stop();
  victim?.closeAllConnections();
  await new Promise<void>((resolve) => (victim ? victim.close(() => resolve()) : resolve()));
});

/** A tenant with one provider (issuer, jwks_uri as stored, e.g. written before today's validation) and a client. */
async function providerClient(o: { issuer: string; jwksUri: string | null }): Promise<TestClient> {
  const instanceId = await fx.instanceId();
  const [t] = await fx.ds.rows<{ id: string }>(
    `INSERT INTO tenants (instance_id, name) VALUES ($1, $2) RETURNING id`,
    [instanceId, `tenant-${tag()}`],
  );
  await fx.ds.exec(
    `INSERT INTO tenant_identity_providers (instance_id, tenant_id, identity_provider, name, issuer, client_id, jwks_uri)
     VALUES ($1, $2, 'oidc', $3, $4, $5, $6)`,
    [instanceId, t.id, `idp-${tag()}`, o.issuer, upstreamClientId, o.jwksUri],
  );
  const c = await fx.client({ grantTypes: ['token_exchange'] });
  await fx.ds.exec(`UPDATE clients SET tenant_id = $2, is_global = false WHERE id = $1`, [c.id, t.id]);
  return c;
}

/** Token exchange of an ID token of `iss` (signed with the local issuer's real key) at client `c`. */
async function exchange(c: TestClient, iss: string) {
  const token = await issuer.idToken(upstreamClientId, `sub-${tag()}`, {}, { issuer: iss });
  return tokenRequest(
    h.url,
    { grant_type: GRANT, subject_token: token, subject_token_type: ID_TOKEN },
    { basic: { id: c.id, secret: c.secret! } },
  );
}

/** A provider whose discovery document (served by the hostile upstream, an allow-listed origin) names `jwksUri`. */
async function discovering(jwksUri: string) {
  const iss = `${hostile.url}/d-${tag()}`;
  hostile.discovery(new URL(iss).pathname, { issuer: iss, jwks_uri: jwksUri });
  return { iss, client: await providerClient({ issuer: iss, jwksUri: null }) };
}

const expectGeneric = (r: { status: number; body: Record<string, unknown> }) => {
  expect(r.status).toBe(400);
  expect(r.body).toMatchObject({
    error: 'invalid_grant',
    code: 'invalid_grant',
    error_description: GENERIC,
  });
};

/** Largest growth of this process's RSS while `work` runs, in MiB (sampled every few milliseconds). */
async function rssGrowthMiB(work: () => Promise<unknown>): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage.rss();
  let peak = base;
  const sample = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(sample);
  }
  peak = Math.max(peak, process.memoryUsage.rss());
  return (peak - base) / 2 ** 20;
}

describe('hole 3: SSRF through identity providers', () => {
  it('an allow-listed provider still works (discovery and a configured jwks_uri)', async () => {
    const c = await providerClient({ issuer: issuer.url, jwksUri: null });
    expect((await exchange(c, issuer.url)).status).toBe(200);
    const d = await discovering(issuer.jwksUri);
    expect((await exchange(d.client, d.iss)).status).toBe(200);
  });

  it('a discovered jwks_uri on loopback, private, link-local or mapped addresses is never fetched', async () => {
    const port = new URL(victimUrl).port;
    const targets = [
      `${victimUrl}/jwks`, // another port of this machine
      `http://localhost:${port}/jwks`, // a name that resolves to loopback
      `https://localhost:${port}/jwks`,
      `http://[::ffff:127.0.0.1]:${port}/jwks`, // IPv4-mapped IPv6
      `http://[::1]:${port}/jwks`,
      `http://0.0.0.0:${port}/jwks`,
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'https://10.0.0.7/jwks',
      'https://192.168.1.1/jwks',
      'https://100.64.0.1/jwks',
      'https://[fd00::1]/jwks',
      'https://[fe80::1]/jwks',
    ];
    for (const target of targets) {
      const d = await discovering(target);
      const r = await exchange(d.client, d.iss);
      expect([target, r.status, r.body.error_description]).toEqual([target, 400, GENERIC]);
    }
    expect(victimHits).toBe(0);
  });

  it('a configured jwks_uri is checked the same way; one answer whatever happened (no port-scanning oracle)', async () => {
    const answers = new Set<string>();
    for (const jwksUri of [
      `${victimUrl}/jwks`, // open port, refused by the policy
      'http://127.0.0.1:1/jwks', // closed port
      `${hostile.url}/nothing`, // 404 of an allowed origin
      `${issuer.url}/.well-known/openid-configuration`, // JSON, not a key set
      'https://idp.invalid/jwks', // no such name
    ]) {
      const r = await exchange(await providerClient({ issuer: issuer.url, jwksUri }), issuer.url);
      expectGeneric(r);
      answers.add(JSON.stringify(r.body));
      expect(JSON.stringify(r.body)).not.toMatch(
        /127\.0\.0\.1|localhost|idp\.invalid|ECONNREFUSED|404|jwks/i,
      );
    }
    expect(answers.size).toBe(1);
    expect(victimHits).toBe(0);
  });
});

describe('hole 4: upstream documents read whole', () => {
  const modes: HugeMode[] = ['length', 'chunked', 'close', 'lying'];

  it('a 100 MB key set (honest, chunked, close-delimited or lying length) grows RSS < 50 MB and answers the generic error', async () => {
    // warm up the exchange path first, so that what is measured is the document
    expect(
      (await exchange(await providerClient({ issuer: issuer.url, jwksUri: null }), issuer.url)).status,
    ).toBe(200);
    for (const mode of modes) {
      const c = await providerClient({ issuer: issuer.url, jwksUri: `${hostile.url}/huge/${mode}/${tag()}` });
      let r!: Awaited<ReturnType<typeof exchange>>;
      const grew = await rssGrowthMiB(async () => {
        r = await exchange(c, issuer.url);
      });
      expect([mode, grew < 50 ? 'under 50 MB' : `${Math.round(grew)} MB`]).toEqual([mode, 'under 50 MB']);
      expectGeneric(r);
    }
  });

  it('three at once, and a 100 MB discovery document, stay under 50 MB too', async () => {
    const clients = await Promise.all(
      (['length', 'chunked', 'close'] as HugeMode[]).map((mode) =>
        providerClient({ issuer: issuer.url, jwksUri: `${hostile.url}/huge/${mode}/${tag()}` }),
      ),
    );
    const iss = `${hostile.url}/huge/chunked/d-${tag()}`; // its discovery document is the huge body
    const disc = await providerClient({ issuer: iss, jwksUri: null });
    let answers: Awaited<ReturnType<typeof exchange>>[] = [];
    const grew = await rssGrowthMiB(async () => {
      answers = await Promise.all([...clients.map((c) => exchange(c, issuer.url)), exchange(disc, iss)]);
    });
    expect(grew).toBeLessThan(50);
    answers.forEach(expectGeneric);
  });

  it('a provider that trickles its answer is cut off by the total timeout', async () => {
    const c = await providerClient({ issuer: issuer.url, jwksUri: `${hostile.url}/huge/slow/${tag()}` });
    const started = Date.now();
    expectGeneric(await exchange(c, issuer.url));
    expect(Date.now() - started).toBeLessThan(4500); // OUTBOUND_TIMEOUT_MS is 2000 here
  });

  it('concurrent exchanges of one provider share one fetch; a failed fetch is not repeated at once', async () => {
    const path = `/huge/length/${tag()}`;
    const c = await providerClient({ issuer: issuer.url, jwksUri: `${hostile.url}${path}` });
    const answers = await Promise.all([0, 1, 2, 3, 4].map(() => exchange(c, issuer.url)));
    answers.forEach(expectGeneric);
    expectGeneric(await exchange(c, issuer.url));
    expect(hostile.hits.get(path)).toBe(1);
  });
});
