import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `GET /logs` of a caller that is not global reads its tenant's events only (`tenant_id = $t`, newest first). The
 * instance index would read every event of the instance to find a small tenant's page; this one reads the page.
 * Partial: events of no tenant (most token events of global clients) are never looked up by tenant.
 */
export class EventsTenantIndex1795800000500 implements MigrationInterface {
  name = 'EventsTenantIndex1795800000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX ix_events_tenant_time ON events (tenant_id, created_at DESC) WHERE tenant_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_events_tenant_time`);
  }
}
