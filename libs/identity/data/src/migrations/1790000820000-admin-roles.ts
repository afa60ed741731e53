import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Admin roles: `roles.system_role` marks the role through which instance admins (`instance_admin`, one per
 * instance, every scope of the instance's system resources) and tenant admins (`tenant_admin`, one per tenant,
 * the management scopes of a tenant) hold their power. At most one of each kind per instance and tenant. The roles
 * themselves are created by the bootstrap (existing instances: at the next start) and when an instance or the
 * first admin of a tenant is made, not here: a migration does not know the scopes a release seeds.
 */
export class AdminRoles1790000820000 implements MigrationInterface {
  name = 'AdminRoles1790000820000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE roles ADD COLUMN system_role text`);
    await q.query(
      `CREATE UNIQUE INDEX ux_roles_system_role ON roles (instance_id, tenant_id, system_role) NULLS NOT DISTINCT
        WHERE system_role IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ux_roles_system_role`);
    await q.query(`ALTER TABLE roles DROP COLUMN system_role`);
  }
}
