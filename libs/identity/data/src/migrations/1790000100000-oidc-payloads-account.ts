import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Token artifacts by user: blocking or deleting a user revokes its grants and tokens, and a user's aggregations
 * count its live tokens, both by `payload->>'accountId'`. Without this index each was a scan of every artifact.
 */
export class OidcPayloadsAccount1790000100000 implements MigrationInterface {
  name = 'OidcPayloadsAccount1790000100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_oidc_payloads_account ON oidc_payloads ((payload->>'accountId'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_oidc_payloads_account`);
  }
}
