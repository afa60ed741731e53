import { randomUUID } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/**
 * The storage contract oidc-provider relies on, run against every store we support (PostgreSQL, Redis).
 * `make(model)` returns that store's adapter for a model name.
 */
export function adapterContract(storeName: string, make: () => (model: string) => Adapter): void {
  describe(`oidc adapter contract: ${storeName}`, () => {
    let factory: (model: string) => Adapter;
    beforeAll(() => {
      factory = make();
    });
    const id = () => randomUUID().replace(/-/g, '');
    const payload = (extra: Partial<AdapterPayload> = {}): AdapterPayload => ({
      jti: id(),
      kind: 'AccessToken',
      clientId: 'client-1',
      accountId: 'user-1',
      scope: 'openid profile',
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + 60,
      ...extra,
    });

    it('stores and finds a payload by id; an unknown id is undefined', async () => {
      const a = factory('AccessToken');
      const key = id();
      const p = payload({ jti: key, extra: { nested: { a: [1, 2] } } });
      await a.upsert(key, p, 60);
      expect(await a.find(key)).toEqual(p);
      expect(await a.find(id())).toBeUndefined();
    });

    it('upsert replaces the payload', async () => {
      const a = factory('Session');
      const key = id();
      await a.upsert(key, payload({ kind: 'Session', uid: 'u-' + key, accountId: 'a' }), 60);
      await a.upsert(key, payload({ kind: 'Session', uid: 'u-' + key, accountId: 'b' }), 60);
      expect((await a.find(key))?.accountId).toBe('b');
    });

    it('keeps models apart: the same id under two models is two artifacts', async () => {
      const key = id();
      await factory('AccessToken').upsert(key, payload({ scope: 'a' }), 60);
      await factory('ClientCredentials').upsert(key, payload({ kind: 'ClientCredentials', scope: 'b' }), 60);
      expect((await factory('AccessToken').find(key))?.scope).toBe('a');
      expect((await factory('ClientCredentials').find(key))?.scope).toBe('b');
      await factory('AccessToken').destroy(key);
      expect(await factory('AccessToken').find(key)).toBeUndefined();
      expect(await factory('ClientCredentials').find(key)).toBeDefined();
    });

    it('an expired artifact is not found', async () => {
      const a = factory('AuthorizationCode');
      const key = id();
      await a.upsert(key, payload({ kind: 'AuthorizationCode' }), 1);
      const written = Date.now();
      expect(await a.find(key)).toBeDefined();
      // The 1 s lifetime is the rule under test (the stores expire by the wall clock): wait until it has passed.
      await new Promise((r) => setTimeout(r, Math.max(0, written + 1_100 - Date.now())));
      expect(await a.find(key)).toBeUndefined();
    });

    it('consume marks the artifact consumed (epoch seconds) and keeps it', async () => {
      const a = factory('RefreshToken');
      const key = id();
      await a.upsert(key, payload({ kind: 'RefreshToken', grantId: 'g-' + key }), 60);
      expect((await a.find(key))?.consumed).toBeUndefined();
      const before = Math.floor(Date.now() / 1000) - 1;
      await a.consume(key);
      const found = await a.find(key);
      expect(typeof found?.consumed).toBe('number');
      expect(found!.consumed).toBeGreaterThanOrEqual(before);
      expect(found?.grantId).toBe('g-' + key);
    });

    it('finds by uid and by user code', async () => {
      const s = factory('Interaction');
      const key = id();
      const uid = 'uid-' + key;
      await s.upsert(key, payload({ kind: 'Interaction', uid }), 60);
      expect((await s.findByUid(uid))?.jti).toBeDefined();
      expect(await s.findByUid('nope-' + key)).toBeUndefined();

      const d = factory('DeviceCode');
      const userCode = 'ABCD-' + key.slice(0, 4);
      await d.upsert(key, payload({ kind: 'DeviceCode', userCode }), 60);
      expect((await d.findByUserCode(userCode))?.userCode).toBe(userCode);
      expect(await d.findByUserCode('ZZZZ-' + key)).toBeUndefined();
    });

    it('destroy removes the artifact', async () => {
      const a = factory('AccessToken');
      const key = id();
      await a.upsert(key, payload(), 60);
      await a.destroy(key);
      expect(await a.find(key)).toBeUndefined();
    });

    it("revokeByGrantId removes that model's artifacts of the grant and nothing else", async () => {
      const at = factory('AccessToken');
      const rt = factory('RefreshToken');
      const grantId = 'grant-' + id();
      const other = 'grant-' + id();
      const [a1, a2, a3, r1] = [id(), id(), id(), id()];
      await at.upsert(a1, payload({ grantId }), 60);
      await at.upsert(a2, payload({ grantId }), 60);
      await at.upsert(a3, payload({ grantId: other }), 60);
      await rt.upsert(r1, payload({ kind: 'RefreshToken', grantId }), 60);
      await at.revokeByGrantId(grantId);
      expect(await at.find(a1)).toBeUndefined();
      expect(await at.find(a2)).toBeUndefined();
      expect(await at.find(a3)).toBeDefined();
      expect(await rt.find(r1)).toBeDefined();
      await rt.revokeByGrantId(grantId);
      expect(await rt.find(r1)).toBeUndefined();
    });

    it('an artifact without expiry stays', async () => {
      const g = factory('Grant');
      const key = id();
      await g.upsert(key, payload({ kind: 'Grant' }));
      expect(await g.find(key)).toBeDefined();
    });
  });
}
