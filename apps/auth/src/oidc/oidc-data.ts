import {
  clientResourceAccess,
  findClientForOidc,
  findUserByLogin,
  isUuid,
  User,
  type ClientResourceAccess,
  type OidcClientRecord,
  type SecretBox,
} from '@gatehouse/identity-data';
import type { DataSource } from 'typeorm';
import type { Sql } from './adapters/sql.js';

export type { ClientResourceAccess, OidcClientRecord, User };

/**
 * What the token server reads from the identity tables (owned by @gatehouse/identity-data), one round trip per
 * question. Nothing is cached: a rotated secret, a deleted client or a revoked permission counts from the next
 * request on.
 */
export class OidcData {
  constructor(
    private readonly ds: DataSource,
    private readonly sql: Sql,
    private readonly box: SecretBox,
    private readonly onSecretError: (what: string, err: unknown) => void = () => undefined,
  ) {}

  /** The client and its decrypted secret; a secret that cannot be opened (wrong key, tampered) makes it unusable. */
  async findClient(clientId: string): Promise<OidcClientRecord | undefined> {
    try {
      return (await findClientForOidc(this.sql, clientId, this.box)) ?? undefined;
    } catch (err) {
      if ((err as Error).name !== 'SecretBoxError') throw err;
      this.onSecretError(`client ${clientId}`, err);
      return undefined;
    }
  }

  /** The resource of the client's instance with this identifier, whether it is authorized, the granted scopes. */
  async resourceAccess(clientId: string, identifier: string): Promise<ClientResourceAccess | undefined> {
    return (await clientResourceAccess(this.sql, clientId, identifier, this.box)) ?? undefined;
  }

  async findUserById(userId: string): Promise<User | undefined> {
    if (!isUuid(userId)) return undefined;
    return (await this.ds.getRepository(User).findOneBy({ id: userId })) ?? undefined;
  }

  /** A user of the instance by e-mail or user name (case-insensitive) or phone number. */
  async findUserByLogin(instanceId: string, login: string): Promise<User | undefined> {
    return (await findUserByLogin(this.ds, instanceId, login)) ?? undefined;
  }
}
