import type { Redis } from 'ioredis';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import { storeGraceSec } from '@gatehouse/identity-data';

/** The token server's Redis key prefix when none is given (tests give their own). */
export const DEFAULT_REDIS_PREFIX = 'gh:oidc:';

/**
 * oidc-provider artifacts in Redis (ioredis), for the short-lived models when REDIS_URL is set. Each artifact is a
 * hash `{prefix}{model}:{id}` with fields `payload` (JSON) and `consumed` (epoch seconds), expiring with the
 * artifact; side indexes map a grant id to its artifacts (a set), a uid and a user code to an id.
 */
export class RedisAdapter implements Adapter {
  constructor(
    private readonly redis: Redis,
    readonly model: string,
    private readonly prefix = DEFAULT_REDIS_PREFIX,
  ) {}

  private key(id: string): string {
    return `${this.prefix}${this.model}:${id}`;
  }

  private grantKey(grantId: string): string {
    return `${this.prefix}grant:${grantId}`;
  }

  async upsert(id: string, payload: AdapterPayload, ttl?: number): Promise<void> {
    // Kept past its expiry only where oidc-provider must still see it expire (device codes: expired_token).
    const expiresIn = ttl ? ttl + storeGraceSec(this.model) : ttl;
    const key = this.key(id);
    const multi = this.redis.multi();
    multi.del(key);
    multi.hset(key, 'payload', JSON.stringify(payload));
    if (expiresIn) multi.expire(key, expiresIn);
    if (payload.grantId) {
      const gk = this.grantKey(payload.grantId);
      multi.sadd(gk, key);
      // The index lives as long as its longest-lived member: set a TTL on a new index, only ever extend it.
      if (expiresIn) {
        multi.expire(gk, expiresIn, 'NX');
        multi.expire(gk, expiresIn, 'GT');
      }
    }
    if (payload.userCode) {
      const uk = `${this.prefix}userCode:${payload.userCode}`;
      if (expiresIn) multi.set(uk, id, 'EX', expiresIn);
      else multi.set(uk, id);
    }
    if (payload.uid) {
      const uk = `${this.prefix}uid:${payload.uid}`;
      if (expiresIn) multi.set(uk, id, 'EX', expiresIn);
      else multi.set(uk, id);
    }
    await multi.exec();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const data = await this.redis.hgetall(this.key(id));
    if (!data?.payload) return undefined;
    const payload = JSON.parse(data.payload) as AdapterPayload;
    if (data.consumed) return { ...payload, consumed: Number(data.consumed) };
    return payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(`${this.prefix}uid:${uid}`);
    return id ? this.find(id) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(`${this.prefix}userCode:${userCode}`);
    return id ? this.find(id) : undefined;
  }

  async consume(id: string): Promise<void> {
    const key = this.key(id);
    // Only an existing artifact can be consumed (HSET on a missing key would create a payload-less hash).
    if (!(await this.redis.exists(key))) return;
    // Atomic: of two requests racing with one code, exactly one consumes it; the other is refused.
    const won = await this.redis.hsetnx(key, 'consumed', String(Math.floor(Date.now() / 1000)));
    if (!won) throw new errors.InvalidGrant('grant request is invalid');
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    const gk = this.grantKey(grantId);
    const keys = await this.redis.smembers(gk);
    const own = keys.filter((k) => k.startsWith(`${this.prefix}${this.model}:`));
    const multi = this.redis.multi();
    if (own.length) {
      multi.del(...own);
      multi.srem(gk, ...own);
    }
    await multi.exec();
  }
}
