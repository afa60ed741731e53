import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Db } from '@gatehouse/db';
import { testRedisUrl, type TestDatabase } from '@gatehouse/testing';
import { PgAdapter, purgeExpiredPayloads } from '../src/oidc/adapters/pg.adapter.js';
import { RedisAdapter } from '../src/oidc/adapters/redis.adapter.js';
import { createAdapterFactory, SHORT_LIVED_MODELS } from '../src/oidc/adapters/adapter-factory.js';
import { adapterContract } from './support/adapter-suite.js';
import { authTestDatabase } from './support/auth-app.js';

let db: TestDatabase;
let sql: Db;
let redis: Redis;
const prefix = `gh:test:${randomBytes(4).toString('hex')}:`;

beforeAll(async () => {
  // The oidc_payloads table as the identity migrations create it.
  db = await authTestDatabase();
  sql = new Db({ url: db.url, poolMax: 4 });
  redis = new Redis(testRedisUrl(), { lazyConnect: false, maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await sql.close();
  await db.drop();
});

adapterContract('PostgreSQL', () => (model) => new PgAdapter(sql, model));
adapterContract('Redis', () => (model) => new RedisAdapter(redis, model, prefix));

describe('PostgreSQL adapter specifics', () => {
  it('purges expired rows and leaves live ones', async () => {
    const a = new PgAdapter(sql, 'AccessToken');
    await a.upsert('purge-live', { jti: 'purge-live' }, 600);
    await a.upsert('purge-dead', { jti: 'purge-dead' }, 600);
    await sql.rows(
      "UPDATE oidc_payloads SET expires_at = now() - interval '1 second' WHERE id = 'purge-dead'",
    );
    const removed = await purgeExpiredPayloads(sql);
    expect(removed).toBeGreaterThanOrEqual(1);
    const rows = await sql.rows<{ id: string }>("SELECT id FROM oidc_payloads WHERE id LIKE 'purge-%'");
    expect(rows.map((r) => r.id)).toEqual(['purge-live']);
  });

  it('writes the indexed columns (grant_id, uid, user_code, expires_at)', async () => {
    const a = new PgAdapter(sql, 'DeviceCode');
    await a.upsert('cols-1', { grantId: 'g1', uid: 'u1', userCode: 'UC-1' }, 60);
    const [row] = await sql.rows<{ grant_id: string; uid: string; user_code: string; expires_at: Date }>(
      "SELECT grant_id, uid, user_code, expires_at FROM oidc_payloads WHERE model = 'DeviceCode' AND id = 'cols-1'",
    );
    expect(row).toMatchObject({ grant_id: 'g1', uid: 'u1', user_code: 'UC-1' });
    // A device code stays in the store 600 s past its expiry, so a late poll still learns expired_token.
    const ttl = (new Date(row.expires_at).getTime() - Date.now()) / 1000;
    expect(ttl).toBeGreaterThan(650);
    expect(ttl).toBeLessThanOrEqual(661);
    const other = new PgAdapter(sql, 'AccessToken');
    await other.upsert('cols-2', { grantId: 'g2' }, 60);
    const [at] = await sql.rows<{ expires_at: Date }>(
      "SELECT expires_at FROM oidc_payloads WHERE model = 'AccessToken' AND id = 'cols-2'",
    );
    expect((new Date(at.expires_at).getTime() - Date.now()) / 1000).toBeLessThanOrEqual(61);
  });
});

describe('adapter factory', () => {
  const clients = { find: async (id: string) => (id === 'c1' ? { client_id: 'c1' } : undefined) };

  it('keeps everything in PostgreSQL without Redis', () => {
    const f = createAdapterFactory({ sql, clients });
    expect(f('AccessToken')).toBeInstanceOf(PgAdapter);
    expect(f('RefreshToken')).toBeInstanceOf(PgAdapter);
  });

  it('puts short-lived artifacts in Redis and grants and refresh tokens in PostgreSQL', () => {
    const f = createAdapterFactory({ sql, redis, redisPrefix: prefix, clients });
    for (const m of SHORT_LIVED_MODELS) expect(f(m)).toBeInstanceOf(RedisAdapter);
    for (const m of ['Grant', 'RefreshToken', 'Session']) expect(f(m)).toBeInstanceOf(PgAdapter);
  });

  it('reads clients from the client source and refuses to write them', async () => {
    const f = createAdapterFactory({ sql, clients });
    expect(await f('Client').find('c1')).toEqual({ client_id: 'c1' });
    expect(await f('Client').find('c2')).toBeUndefined();
    await expect(f('Client').upsert('c3', {}, 1)).rejects.toThrow(/identity API/);
  });
});
