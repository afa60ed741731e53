import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Sql } from '@gatehouse/db';

// A grant deleted (or updated) before its expiry announces `user:<accountId>` on the identity change feed by a
// trigger of oidc_payloads (identity migration 1790000700000): every other token server replica drops it from its
// cache; this process drops it at once through `onGrantGone`.

interface Row {
  payload: AdapterPayload;
  consumed_at: Date | null;
}

const withConsumed = (row: Row | undefined): AdapterPayload | undefined => {
  if (!row) return undefined;
  if (!row.consumed_at) return row.payload;
  return { ...row.payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) };
};

const LIVE = '(expires_at IS NULL OR expires_at > now())';

/**
 * How long an expired artifact stays findable, per model. oidc-provider reads a device code with `ignoreExpiration`
 * and answers an expired one `expired_token` (RFC 8628); gone from the store it would be `invalid_grant` ("not
 * found"), so a device polling just after expiry never learned why. Every other model: none (the provider never
 * accepts an expired artifact, and the store forgets it at once).
 */
export function storeGraceSec(model: string): number {
  return model === 'DeviceCode' ? 600 : 0;
}

/**
 * oidc-provider artifacts in PostgreSQL: table `oidc_payloads` (model, id, payload jsonb, grant_id, user_code, uid,
 * expires_at, consumed_at; primary key (model, id)), one adapter per model name. Expired rows are never returned
 * and are removed by `purgeExpired` (run periodically by the token server).
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
    await this.sql.rows(
      `INSERT INTO oidc_payloads (model, id, payload, grant_id, user_code, uid, expires_at)
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
         user_code = EXCLUDED.user_code, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`,
      [
        this.model,
        id,
        JSON.stringify(payload),
        payload.grantId ?? null,
        payload.userCode ?? null,
        payload.uid ?? null,
        expiresAt,
      ],
    );
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const rows = await this.sql.rows<Row>(
      `SELECT payload, consumed_at FROM oidc_payloads WHERE model = $1 AND id = $2 AND ${LIVE}`,
      [this.model, id],
    );
    return withConsumed(rows[0]);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const rows = await this.sql.rows<Row>(
      `SELECT payload, consumed_at FROM oidc_payloads WHERE model = $1 AND uid = $2 AND ${LIVE} LIMIT 1`,
      [this.model, uid],
    );
    return withConsumed(rows[0]);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const rows = await this.sql.rows<Row>(
      `SELECT payload, consumed_at FROM oidc_payloads WHERE model = $1 AND user_code = $2 AND ${LIVE} LIMIT 1`,
      [this.model, userCode],
    );
    return withConsumed(rows[0]);
  }

  /**
   * Marks the artifact used, atomically: of two requests racing with one refresh token (or code), exactly one
   * consumes it. The other lost the race after reading it unused, which is reuse all the same: its grant is revoked
   * (as oidc-provider does for a token it reads consumed) and the request fails with invalid_grant.
   */
  async consume(id: string): Promise<void> {
    const won = await this.sql.rows<{ id: string }>(
      `UPDATE oidc_payloads SET consumed_at = now()
        WHERE model = $1 AND id = $2 AND consumed_at IS NULL RETURNING id`,
      [this.model, id],
    );
    if (won.length) return;
    const [row] = await this.sql.rows<{ grant_id: string | null }>(
      'SELECT grant_id FROM oidc_payloads WHERE model = $1 AND id = $2',
      [this.model, id],
    );
    if (row?.grant_id) {
      await this.sql.rows(`DELETE FROM oidc_payloads WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)`, [
        row.grant_id,
      ]);
      this.onGrantGone(row.grant_id);
    }
    throw new errors.InvalidGrant('grant request is invalid');
  }

  async destroy(id: string): Promise<void> {
    await this.sql.rows('DELETE FROM oidc_payloads WHERE model = $1 AND id = $2', [this.model, id]);
    if (this.model === 'Grant') this.onGrantGone(id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.sql.rows('DELETE FROM oidc_payloads WHERE model = $1 AND grant_id = $2', [
      this.model,
      grantId,
    ]);
  }
}

/** Delete expired artifacts in batches; returns how many rows went. */
export async function purgeExpiredPayloads(sql: Sql, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await sql.rows<{ n: number }>(
      `WITH gone AS (
         DELETE FROM oidc_payloads WHERE ctid IN (
           SELECT ctid FROM oidc_payloads WHERE expires_at <= now() LIMIT $1)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [batch],
    );
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < batch) return total;
  }
}
