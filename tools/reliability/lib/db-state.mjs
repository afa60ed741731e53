// A fingerprint of every row of a database: proves that a rejected request wrote nothing (rows inserted, changed
// or deleted all change it). One statement; cheap on the suite's small databases.
import pg from 'pg';

/**
 * Tables whose writes a rejected request may legitimately cause, excluded from the comparison:
 * - `login_failures`: a refused password counts toward the lockout (docs/security.md);
 * - `oidc_payloads`: oidc-provider's artifacts; the token server's rejected requests write none, but sessions and
 *   interactions of the browser flows are artifacts too;
 * - `cache_subscribers`: each token server's heartbeat row (every 500 ms, exact cache invalidation),
 *   liveness rather than data: it changes whether or not a request comes.
 * Everything else must be unchanged.
 */
export const WRITES_ALLOWED_ON_REJECTION = [
  'login_failures',
  'oidc_payloads',
  'migrations',
  'cache_subscribers',
];

export async function fingerprinter(dbUrl) {
  const client = new pg.Client({ connectionString: dbUrl });
  client.on('error', () => undefined);
  await client.connect();
  const { rows } = await client.query(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY c.relname`,
  );
  const tables = rows.map((r) => r.relname).filter((t) => !WRITES_ALLOWED_ON_REJECTION.includes(t));
  // Row order does not matter: sum of 64-bit hashes of each row's text, plus the count, per table.
  const sql = tables
    .map(
      (t) =>
        `SELECT '${t}' AS t, count(*)::bigint AS n, coalesce(sum(hashtextextended(x::text, 0)), 0)::text AS h FROM public."${t}" x`,
    )
    .join(' UNION ALL ');
  return {
    tables,
    /** @returns {Promise<Map<string, string>>} */
    async take() {
      const res = await client.query(sql);
      return new Map(res.rows.map((r) => [r.t, `${r.n}:${r.h}`]));
    },
    /** Names of the tables that differ between two fingerprints. */
    diff(a, b) {
      return tables.filter((t) => a.get(t) !== b.get(t));
    },
    close: () => client.end(),
  };
}
