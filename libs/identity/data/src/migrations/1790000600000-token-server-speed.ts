import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Token server speed:
 * - The artifact columns `grant_id`, `uid` and `user_code` of `oidc_payloads` are set on a few models only (a
 *   client_credentials token, the bulk of the table, has none of them), so their indexes become partial
 *   (`WHERE col IS NOT NULL`): smaller, and not written at all for the rows that do not carry the column. Every
 *   look-up by these columns compares them with a value, which implies `IS NOT NULL`, so it still uses them.
 * - New resources default to ES256 (the column default; the management API passes it explicitly). Existing
 *   resources and the seeded system resources keep their algorithm.
 */
export class TokenServerSpeed1790000600000 implements MigrationInterface {
  name = 'TokenServerSpeed1790000600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_oidc_payloads_uid`);
    await q.query(`DROP INDEX ix_oidc_payloads_user_code`);
    await q.query(`DROP INDEX ix_oidc_payloads_grant_id`);
    await q.query(`CREATE INDEX ix_oidc_payloads_uid ON oidc_payloads (model, uid) WHERE uid IS NOT NULL`);
    await q.query(
      `CREATE INDEX ix_oidc_payloads_user_code ON oidc_payloads (model, user_code) WHERE user_code IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX ix_oidc_payloads_grant_id ON oidc_payloads (grant_id) WHERE grant_id IS NOT NULL`,
    );
    await q.query(`ALTER TABLE resources ALTER COLUMN signing_algorithm SET DEFAULT 'ES256'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE resources ALTER COLUMN signing_algorithm SET DEFAULT 'RS256'`);
    await q.query(`DROP INDEX ix_oidc_payloads_uid`);
    await q.query(`DROP INDEX ix_oidc_payloads_user_code`);
    await q.query(`DROP INDEX ix_oidc_payloads_grant_id`);
    await q.query(`CREATE INDEX ix_oidc_payloads_uid ON oidc_payloads (model, uid)`);
    await q.query(`CREATE INDEX ix_oidc_payloads_user_code ON oidc_payloads (model, user_code)`);
    await q.query(`CREATE INDEX ix_oidc_payloads_grant_id ON oidc_payloads (grant_id)`);
  }
}
