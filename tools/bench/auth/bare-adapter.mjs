// The minimal PostgreSQL adapter of the bare oidc-provider baselines (bare-provider.mjs, bare-codeflow-provider.mjs):
// one table, the payload as jsonb, the calls oidc-provider makes on the benchmarks' paths and nothing more. With
// `uid`, a column and an index for findByUid (sessions by uid, which the code flow needs).

/**
 * Creates the table (if missing) and returns the adapter class oidc-provider is given.
 * @param {import('pg').Pool} pool
 * @param {string} table
 * @param {{ uid?: boolean }} [opts]
 */
export async function minimalPgAdapter(pool, table, { uid = false } = {}) {
  await pool.query(`CREATE TABLE IF NOT EXISTS ${table} (
    model text NOT NULL, id text NOT NULL, payload jsonb NOT NULL, grant_id text,${uid ? ' uid text,' : ''}
    expires_at timestamptz, PRIMARY KEY (model, id))`);
  if (uid) await pool.query(`CREATE INDEX IF NOT EXISTS ${table}_uid ON ${table} (model, uid)`);
  const upsert = uid
    ? `INSERT INTO ${table} (model, id, payload, grant_id, uid, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at`
    : `INSERT INTO ${table} (model, id, payload, grant_id, expires_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at`;
  const live = '(expires_at IS NULL OR expires_at > now())';

  return class MinimalPgAdapter {
    constructor(model) {
      this.model = model;
    }
    async upsert(id, payload, expiresIn) {
      const expires = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
      await pool.query(
        upsert,
        uid
          ? [this.model, id, payload, payload.grantId ?? null, payload.uid ?? null, expires]
          : [this.model, id, payload, payload.grantId ?? null, expires],
      );
    }
    async find(id) {
      const r = await pool.query(`SELECT payload FROM ${table} WHERE model = $1 AND id = $2 AND ${live}`, [
        this.model,
        id,
      ]);
      return r.rows[0]?.payload;
    }
    async findByUid(value) {
      if (!uid) return undefined;
      const r = await pool.query(`SELECT payload FROM ${table} WHERE model = $1 AND uid = $2 AND ${live}`, [
        this.model,
        value,
      ]);
      return r.rows[0]?.payload;
    }
    async findByUserCode() {}
    async consume(id) {
      await pool.query(
        `UPDATE ${table} SET payload = payload || '{"consumed":1}' WHERE model = $1 AND id = $2`,
        [this.model, id],
      );
    }
    async destroy(id) {
      await pool.query(`DELETE FROM ${table} WHERE model = $1 AND id = $2`, [this.model, id]);
    }
    async revokeByGrantId(grantId) {
      await pool.query(`DELETE FROM ${table} WHERE model = $1 AND grant_id = $2`, [this.model, grantId]);
    }
  };
}
