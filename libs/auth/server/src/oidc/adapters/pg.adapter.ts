import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Sql } from '@gatehouse/db';
import {
  consumeOidcPayload,
  deleteGrant,
  deleteOidcPayload,
  deleteOidcPayloadsOfGrant,
  findOidcPayload,
  findOidcPayloadByUid,
  findOidcPayloadByUserCode,
  grantIdOfOidcPayload,
  storeGraceSec,
  upsertOidcPayload,
  type OidcPayloadRow,
} from '@gatehouse/identity-data';

// A grant deleted (or updated) before its expiry announces `user:<accountId>` on the identity change feed by a
// trigger of oidc_payloads (identity migration 1790000700000): every other token server replica drops it from its
// cache; this process drops it at once through `onGrantGone`.

const withConsumed = (row: OidcPayloadRow<AdapterPayload> | undefined): AdapterPayload | undefined => {
  if (!row) return undefined;
  if (!row.consumed_at) return row.payload;
  return { ...row.payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) };
};

/**
 * oidc-provider artifacts in PostgreSQL, one adapter per model name; the table and its statements are
 * @gatehouse/identity-data's oidc-payloads module. Expired rows are never returned and are removed by
 * `purgeExpiredPayloads` (run periodically by the token server).
 */
export class PgAdapter implements Adapter {
  constructor(
    private readonly sql: Sql,
    readonly model: string,
    /** Told of every grant this process deletes (the token server's cache drops it at once). */
    private readonly onGrantGone: (grantId: string) => void = () => undefined,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const expiresAt = expiresIn
      ? new Date(Date.now() + (expiresIn + storeGraceSec(this.model)) * 1000)
      : null;
    await upsertOidcPayload(this.sql, this.model, id, payload, expiresAt);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const rows = await findOidcPayload<AdapterPayload>(this.sql, this.model, id);
    return withConsumed(rows[0]);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const rows = await findOidcPayloadByUid<AdapterPayload>(this.sql, this.model, uid);
    return withConsumed(rows[0]);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const rows = await findOidcPayloadByUserCode<AdapterPayload>(this.sql, this.model, userCode);
    return withConsumed(rows[0]);
  }

  /**
   * Marks the artifact used, atomically: of two requests racing with one refresh token (or code), exactly one
   * consumes it. The other lost the race after reading it unused, which is reuse all the same: its grant is revoked
   * (as oidc-provider does for a token it reads consumed) and the request fails with invalid_grant.
   */
  async consume(id: string): Promise<void> {
    const won = await consumeOidcPayload(this.sql, this.model, id);
    if (won.length) return;
    const [row] = await grantIdOfOidcPayload(this.sql, this.model, id);
    if (row?.grant_id) {
      await deleteGrant(this.sql, row.grant_id);
      this.onGrantGone(row.grant_id);
    }
    throw new errors.InvalidGrant('grant request is invalid');
  }

  async destroy(id: string): Promise<void> {
    await deleteOidcPayload(this.sql, this.model, id);
    if (this.model === 'Grant') this.onGrantGone(id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await deleteOidcPayloadsOfGrant(this.sql, this.model, grantId);
  }
}

// Re-exported for the token server, which imports it from here.
export { purgeExpiredPayloads } from '@gatehouse/identity-data';
