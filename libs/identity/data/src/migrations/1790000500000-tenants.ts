import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenant Admins: users who administer a tenant. A user administers a tenant of its instance when it is a
 * user of that tenant or a global user (no tenant); the rule is the API's (a user of another tenant: 409). Deleting
 * the tenant or the user drops the link. Tenant names are unique in their instance already (ux_tenants_name).
 */
export class Tenants1790000500000 implements MigrationInterface {
  name = 'Tenants1790000500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tenant_admins (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        tenant_id uuid NOT NULL,
        user_id uuid NOT NULL,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_tenant_admins PRIMARY KEY (id),
        CONSTRAINT uq_tenant_admins UNIQUE (tenant_id, user_id),
        CONSTRAINT fk_tenant_admins_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_tenant_admins_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id) ON DELETE CASCADE,
        CONSTRAINT fk_tenant_admins_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    // The tenants a user administers (its record's `tenants` child).
    await q.query(`CREATE INDEX ix_tenant_admins_user ON tenant_admins (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tenant_admins`);
  }
}
