import { TokenServerUnavailableError, TokenValidator } from '../src/index.js';
import { isoIn, TokenInfoServer } from './tokeninfo-server.js';

describe('TokenValidator against a /tokeninfo server', () => {
  let server: TokenInfoServer;
  let clock: number;
  const validator = (over: Partial<ConstructorParameters<typeof TokenValidator>[0]> = {}) =>
    new TokenValidator({
      authUrl: server.url,
      cacheTtlSec: 60,
      negativeTtlSec: 5,
      now: () => clock,
      ...over,
    });

  beforeEach(async () => {
    server = await new TokenInfoServer().start();
    clock = Date.now();
  });
  afterEach(() => server.stop());

  it('posts the token as a form field and as its own bearer credential, and maps the answer', async () => {
    server.tokens.set('tok-1', {
      active: true,
      client_id: 'c1',
      sub: 'u1',
      scope: 'trees:read trees:write',
      aud: 'urn:gatehouse:tree',
      exp: isoIn(300),
      tenant_id: 't1',
      username: 'jane@example.com',
      token_type: 'Bearer',
    });
    const caller = await validator().validate('tok-1');
    expect(caller).toMatchObject({
      clientId: 'c1',
      sub: 'u1',
      scopes: ['trees:read', 'trees:write'],
      audience: ['urn:gatehouse:tree'],
      tenantId: 't1',
      username: 'jane@example.com',
    });
    expect(caller!.expiresAt).toBeInstanceOf(Date);
    expect(server.seen).toEqual([
      { token: 'tok-1', authorization: 'Bearer tok-1', contentType: 'application/x-www-form-urlencoded' },
    ]);
  });

  it('caches an active token up to the TTL, and never past its expiry', async () => {
    server.tokens.set('long', { active: true, client_id: 'c', scope: '', aud: 'a', exp: isoIn(3600) });
    server.tokens.set('short', { active: true, client_id: 'c', scope: '', aud: 'a', exp: isoIn(10) });
    const v = validator();
    await v.validate('long');
    await v.validate('short');
    clock += 9_000;
    await v.validate('long');
    await v.validate('short');
    expect(server.seen).toHaveLength(2); // both from the cache
    clock += 2_000; // 'short' expired at +10 s
    await v.validate('short');
    expect(server.seen).toHaveLength(3);
    clock += 50_000; // 'long' past the 60 s TTL
    await v.validate('long');
    expect(server.seen).toHaveLength(4);
    expect(v.stats).toMatchObject({ hits: 2, remoteCalls: 4 });
  });

  it('caches inactive results for the negative TTL only', async () => {
    const v = validator();
    expect(await v.validate('unknown')).toBeNull();
    expect(await v.validate('unknown')).toBeNull();
    expect(server.seen).toHaveLength(1);
    clock += 5_001;
    server.tokens.set('unknown', { active: true, client_id: 'c', aud: 'a', exp: isoIn(600) });
    expect(await v.validate('unknown')).not.toBeNull();
    expect(server.seen).toHaveLength(2);
  });

  it('treats an already expired answer and a 400/401 as inactive', async () => {
    server.tokens.set('stale', { active: true, client_id: 'c', aud: 'a', exp: isoIn(-5) });
    expect(await validator().validate('stale')).toBeNull();
    server.status = 401;
    expect(await validator().validate('other')).toBeNull();
  });

  it('collapses concurrent look-ups of one token into one call', async () => {
    server.tokens.set('hot', { active: true, client_id: 'c', aud: 'a', exp: isoIn(600) });
    server.delayMs = 100;
    const v = validator();
    const results = await Promise.all(Array.from({ length: 20 }, () => v.validate('hot')));
    expect(results.every((r) => r?.clientId === 'c')).toBe(true);
    expect(server.seen).toHaveLength(1);
    expect(v.stats.joined).toBe(19);
  });

  it('never sends malformed tokens to the token server', async () => {
    const v = validator();
    for (const bad of ['', 'has space', 'a\nb', 'x'.repeat(9000), 'é'])
      expect(await v.validate(bad)).toBeNull();
    expect(server.seen).toHaveLength(0);
  });

  it('reports an unreachable, failing, slow or confused token server, and caches none of it', async () => {
    const v = validator({ timeoutMs: 200 });
    server.status = 503;
    await expect(v.validate('t')).rejects.toBeInstanceOf(TokenServerUnavailableError);
    server.status = 200;
    server.rawBody = 'not json';
    await expect(v.validate('t')).rejects.toThrow('without JSON');
    server.rawBody = '{"hello":1}';
    await expect(v.validate('t')).rejects.toThrow('unexpected body');
    server.rawBody = undefined;
    server.delayMs = 500;
    await expect(v.validate('t')).rejects.toThrow('timed out');
    server.delayMs = 0;
    const url = server.url;
    await server.stop();
    const down = new TokenValidator({ authUrl: url, cacheTtlSec: 60, negativeTtlSec: 5 });
    await expect(down.validate('t')).rejects.toThrow(/unreachable \(ECONNREFUSED\)/);
    expect(v.size).toBe(0);
  });

  it('reads the audience from a JWT when /tokeninfo leaves it out', async () => {
    const jwt = [
      Buffer.from('{"alg":"RS256","typ":"at+jwt"}').toString('base64url'),
      Buffer.from(JSON.stringify({ aud: ['urn:x', 'urn:y'], client_id: 'c' })).toString('base64url'),
      'sig',
    ].join('.');
    server.tokens.set(jwt, { active: true, client_id: 'c', scope: 'a', exp: isoIn(60) });
    expect((await validator().validate(jwt))?.audience).toEqual(['urn:x', 'urn:y']);
  });

  it('bounds the cache, evicting the oldest entries', async () => {
    const v = validator({ maxEntries: 3 });
    for (const t of ['a', 'b', 'c', 'd']) {
      server.tokens.set(t, { active: true, client_id: 'c', aud: 'x', exp: isoIn(600) });
      await v.validate(t);
    }
    expect(v.size).toBe(3);
    await v.validate('a'); // evicted: asks again
    expect(server.seen).toHaveLength(5);
  });
});
