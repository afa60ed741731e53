import type { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { PgAdapter } from './pg.adapter.js';
import { RedisAdapter } from './redis.adapter.js';
import type { Sql } from '@gatehouse/db';

/**
 * Artifacts that live minutes, not days, and may be lost on a Redis restart without harm: they go to Redis when
 * REDIS_URL is set. Grants, refresh tokens and sessions always stay in PostgreSQL (a restart keeps them).
 */
export const SHORT_LIVED_MODELS: ReadonlySet<string> = new Set([
  'AccessToken',
  'ClientCredentials',
  'AuthorizationCode',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'Interaction',
  'PushedAuthorizationRequest',
  'ReplayDetection',
]);

/** Read-only source of client metadata (the identity tables), standing in for the Client model's adapter. */
export interface ClientSource {
  find(clientId: string): Promise<AdapterPayload | undefined>;
}

class ClientAdapter implements Adapter {
  constructor(private readonly source: ClientSource) {}
  find(id: string) {
    return this.source.find(id);
  }
  async upsert(): Promise<void> {
    throw new Error('clients are managed through the identity API, not the token server');
  }
  async findByUid(): Promise<undefined> {
    return undefined;
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  // Clients have no consumable, destroyable or grant-bound artifacts: nothing to do.
  async consume(): Promise<void> {
    return undefined;
  }
  async destroy(): Promise<void> {
    return undefined;
  }
  async revokeByGrantId(): Promise<void> {
    return undefined;
  }
}

export interface AdapterStores {
  sql: Sql;
  redis?: Redis;
  redisPrefix?: string;
  clients: ClientSource;
  /** Told of every grant this process deletes. */
  onGrantGone?: (grantId: string) => void;
}

/** oidc-provider `adapter` option: one adapter instance per model name. */
export function createAdapterFactory(stores: AdapterStores): (model: string) => Adapter {
  return (model: string) => {
    if (model === 'Client') return new ClientAdapter(stores.clients);
    if (stores.redis && SHORT_LIVED_MODELS.has(model))
      return new RedisAdapter(stores.redis, model, stores.redisPrefix);
    return new PgAdapter(stores.sql, model, stores.onGrantGone);
  };
}
