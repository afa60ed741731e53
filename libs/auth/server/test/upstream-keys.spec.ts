import { jwtVerify } from 'jose';
import { OutboundFetcher, OutboundPolicy } from '@gatehouse/outbound';
import { UpstreamKeys, UpstreamKeysError, type UpstreamKeysOptions } from '../src/oidc/upstream-keys.js';
import { LocalIssuer } from '@gatehouse/testing';

/** The JWKS cache of token exchange against a real local issuer: fetched once, refreshed on an unknown kid, bounded. */
let issuer: LocalIssuer;

beforeAll(async () => {
  issuer = await LocalIssuer.start();
});
afterAll(async () => {
  await issuer?.stop();
});

/** The local issuer listens on 127.0.0.1 over http: the allow-list of development admits it. */
const fetcher = () => new OutboundFetcher({ policy: new OutboundPolicy({ allowlist: '127.0.0.1' }) });
const upstream = (opts: Partial<UpstreamKeysOptions> = {}) => new UpstreamKeys({ fetcher: fetcher() }, opts);

const verify = (keys: UpstreamKeys, token: string, uri = issuer.jwksUri) =>
  jwtVerify(token, keys.resolver(uri));

describe('UpstreamKeys', () => {
  it('fetches a key set once, then serves it from the cache', async () => {
    const keys = upstream();
    const before = issuer.hits.get('/jwks') ?? 0;
    for (let i = 0; i < 3; i++) await verify(keys, await issuer.idToken('aud', `s${i}`));
    expect(issuer.hits.get('/jwks')).toBe(before + 1);
  });

  it('fetches again for an unknown kid (rotation), at most once per kid, and not within minRefreshMs', async () => {
    const keys = upstream({ minRefreshMs: 0 });
    await verify(keys, await issuer.idToken('aud', 's'));
    await issuer.rotate();
    const before = issuer.hits.get('/jwks')!;
    await verify(keys, await issuer.idToken('aud', 's'));
    expect(issuer.hits.get('/jwks')).toBe(before + 1);

    const forged = await issuer.idToken('aud', 's', {}, { key: await LocalIssuer.foreignKey() });
    await expect(verify(keys, forged)).rejects.toThrow(/no applicable key/i);
    await expect(verify(keys, forged)).rejects.toThrow(/no applicable key/i);
    expect(issuer.hits.get('/jwks')).toBe(before + 2); // the second try of that kid fetched nothing

    const slow = upstream({ minRefreshMs: 60_000 });
    await verify(slow, await issuer.idToken('aud', 's'));
    await issuer.rotate();
    const after = issuer.hits.get('/jwks')!;
    await expect(verify(slow, await issuer.idToken('aud', 's'))).rejects.toThrow(/no applicable key/i);
    expect(issuer.hits.get('/jwks')).toBe(after);
  });

  it('keeps at most maxEntries key sets and discovers a jwks_uri', async () => {
    const keys = upstream({ maxEntries: 2 });
    const token = await issuer.idToken('aud', 's');
    const uris = [1, 2, 3].map((i) => `${issuer.jwksUri}?n=${i}`);
    for (const uri of uris) await verify(keys, token, uri);
    const before = issuer.hits.get('/jwks')!;
    await verify(keys, token, uris[2]); // kept
    expect(issuer.hits.get('/jwks')).toBe(before);
    await verify(keys, token, uris[0]); // evicted: fetched again
    expect(issuer.hits.get('/jwks')).toBe(before + 1);

    expect(await keys.jwksUriOf({ issuer: `${issuer.url}/`, jwks_uri: null })).toBe(issuer.jwksUri);
    expect(await keys.jwksUriOf({ issuer: issuer.url, jwks_uri: 'https://keys.test/jwks' })).toBe(
      'https://keys.test/jwks',
    );
  });

  it('an unreachable or malformed key set is an UpstreamKeysError', async () => {
    const keys = upstream({ failureTtlMs: 0 });
    const token = await issuer.idToken('aud', 's');
    await expect(verify(keys, token, `${issuer.url}/missing`)).rejects.toBeInstanceOf(UpstreamKeysError);
    await expect(verify(keys, token, 'http://127.0.0.1:1/jwks')).rejects.toBeInstanceOf(UpstreamKeysError);
    await expect(
      verify(keys, token, `${issuer.url}/.well-known/openid-configuration`),
    ).rejects.toBeInstanceOf(UpstreamKeysError);
    await expect(keys.jwksUriOf({ issuer: `${issuer.url}/nothing`, jwks_uri: null })).rejects.toBeInstanceOf(
      UpstreamKeysError,
    );
  });

  it('logs the detail of a failure (the caller answers a generic error) and does not refetch it at once', async () => {
    const logged: { obj: object; msg: string }[] = [];
    const keys = new UpstreamKeys(
      { fetcher: fetcher(), log: { warn: (obj, msg) => logged.push({ obj, msg }) } },
      { failureTtlMs: 60_000 },
    );
    const token = await issuer.idToken('aud', 's');
    const uri = `${issuer.url}/missing-${Date.now()}`;
    await expect(verify(keys, token, uri)).rejects.toBeInstanceOf(UpstreamKeysError);
    await expect(verify(keys, token, uri)).rejects.toBeInstanceOf(UpstreamKeysError);
    expect(issuer.hits.get(new URL(uri).pathname)).toBe(1);
    expect(logged).toEqual([
      { obj: { err: `${uri}: answered 404` }, msg: 'identity provider keys could not be fetched' },
    ]);
    const strict = new UpstreamKeys({ fetcher: new OutboundFetcher() });
    await expect(verify(strict, token)).rejects.toThrow(/refused: not an https URL/);
  });
});
