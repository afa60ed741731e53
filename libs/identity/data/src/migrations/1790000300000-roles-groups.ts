import type { MigrationInterface, QueryRunner } from 'typeorm';

const audit = `
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_by uuid,
  updated_at timestamptz NOT NULL DEFAULT now()`;

/**
 * Roles, groups and the permission sources of users. A user's effective scopes on a resource are its own
 * permissions, its roles' permissions, and the permissions of the roles of every group it is in or that group's
 * ancestors. `group_closure` keeps the ancestry of nested groups (a DAG: a group may have several parents) with
 * the number of paths between two groups, so un-nesting one path keeps what another path still gives, and a user's
 * effective scopes are one indexed query whatever the depth. Every group has its own row (ancestor = descendant).
 */
export class RolesGroups1790000300000 implements MigrationInterface {
  name = 'RolesGroups1790000300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE roles (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        tenant_id uuid,
        role_name text NOT NULL,
        role_description text,
        app_metadata jsonb NOT NULL DEFAULT '[]',${audit},
        CONSTRAINT pk_roles PRIMARY KEY (id),
        CONSTRAINT fk_roles_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_roles_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )`);
    // One name per (instance, tenant); global roles (no tenant) form one group of their own.
    await q.query(
      `CREATE UNIQUE INDEX ux_roles_name ON roles (instance_id, tenant_id, lower(role_name)) NULLS NOT DISTINCT`,
    );
    await q.query(`CREATE INDEX ix_roles_tenant ON roles (tenant_id)`);

    await q.query(`
      CREATE TABLE role_permissions (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        role_id uuid NOT NULL,
        resource_id uuid NOT NULL,
        scope_id uuid NOT NULL,${audit},
        CONSTRAINT pk_role_permissions PRIMARY KEY (id),
        CONSTRAINT uq_role_permissions UNIQUE (role_id, scope_id),
        CONSTRAINT fk_role_permissions_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_role_permissions_role FOREIGN KEY (role_id) REFERENCES roles (id) ON DELETE CASCADE,
        CONSTRAINT fk_role_permissions_scope FOREIGN KEY (resource_id, scope_id)
          REFERENCES scopes (resource_id, id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX ix_role_permissions_role_resource ON role_permissions (role_id, resource_id)`,
    );
    await q.query(
      `CREATE INDEX ix_role_permissions_resource_scope ON role_permissions (resource_id, scope_id)`,
    );

    await q.query(`
      CREATE TABLE user_permissions (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        user_id uuid NOT NULL,
        resource_id uuid NOT NULL,
        scope_id uuid NOT NULL,${audit},
        CONSTRAINT pk_user_permissions PRIMARY KEY (id),
        CONSTRAINT uq_user_permissions UNIQUE (user_id, scope_id),
        CONSTRAINT fk_user_permissions_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_user_permissions_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT fk_user_permissions_scope FOREIGN KEY (resource_id, scope_id)
          REFERENCES scopes (resource_id, id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX ix_user_permissions_user_resource ON user_permissions (user_id, resource_id)`,
    );
    await q.query(
      `CREATE INDEX ix_user_permissions_resource_scope ON user_permissions (resource_id, scope_id)`,
    );

    await q.query(`
      CREATE TABLE user_roles (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        user_id uuid NOT NULL,
        role_id uuid NOT NULL,${audit},
        CONSTRAINT pk_user_roles PRIMARY KEY (id),
        CONSTRAINT uq_user_roles UNIQUE (user_id, role_id),
        CONSTRAINT fk_user_roles_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_user_roles_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT fk_user_roles_role FOREIGN KEY (role_id) REFERENCES roles (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_user_roles_role ON user_roles (role_id)`);

    await q.query(`
      CREATE TABLE groups (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        tenant_id uuid,
        group_name text NOT NULL,
        group_description text,
        app_metadata jsonb NOT NULL DEFAULT '[]',${audit},
        CONSTRAINT pk_groups PRIMARY KEY (id),
        CONSTRAINT fk_groups_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_groups_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX ux_groups_name ON groups (instance_id, tenant_id, lower(group_name)) NULLS NOT DISTINCT`,
    );
    await q.query(`CREATE INDEX ix_groups_tenant ON groups (tenant_id)`);

    await q.query(`
      CREATE TABLE group_members (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        group_id uuid NOT NULL,
        user_id uuid NOT NULL,${audit},
        CONSTRAINT pk_group_members PRIMARY KEY (id),
        CONSTRAINT uq_group_members UNIQUE (group_id, user_id),
        CONSTRAINT fk_group_members_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_group_members_group FOREIGN KEY (group_id) REFERENCES groups (id) ON DELETE CASCADE,
        CONSTRAINT fk_group_members_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_group_members_user ON group_members (user_id)`);

    await q.query(`
      CREATE TABLE group_roles (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        group_id uuid NOT NULL,
        role_id uuid NOT NULL,${audit},
        CONSTRAINT pk_group_roles PRIMARY KEY (id),
        CONSTRAINT uq_group_roles UNIQUE (group_id, role_id),
        CONSTRAINT fk_group_roles_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_group_roles_group FOREIGN KEY (group_id) REFERENCES groups (id) ON DELETE CASCADE,
        CONSTRAINT fk_group_roles_role FOREIGN KEY (role_id) REFERENCES roles (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_group_roles_role ON group_roles (role_id)`);

    // A nesting: child_id is a member group of parent_id (Nested Groups).
    await q.query(`
      CREATE TABLE group_children (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        parent_id uuid NOT NULL,
        child_id uuid NOT NULL,${audit},
        CONSTRAINT pk_group_children PRIMARY KEY (id),
        CONSTRAINT uq_group_children UNIQUE (parent_id, child_id),
        CONSTRAINT fk_group_children_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_group_children_parent FOREIGN KEY (parent_id) REFERENCES groups (id) ON DELETE CASCADE,
        CONSTRAINT fk_group_children_child FOREIGN KEY (child_id) REFERENCES groups (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_group_children_child ON group_children (child_id)`);

    // Ancestry: `paths` distinct nesting paths lead from ancestor_id down to descendant_id (1 for the group itself).
    await q.query(`
      CREATE TABLE group_closure (
        descendant_id uuid NOT NULL,
        ancestor_id uuid NOT NULL,
        instance_id uuid NOT NULL,
        paths bigint NOT NULL,
        CONSTRAINT pk_group_closure PRIMARY KEY (descendant_id, ancestor_id),
        CONSTRAINT fk_group_closure_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_group_closure_descendant FOREIGN KEY (descendant_id) REFERENCES groups (id) ON DELETE CASCADE,
        CONSTRAINT fk_group_closure_ancestor FOREIGN KEY (ancestor_id) REFERENCES groups (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_group_closure_ancestor ON group_closure (ancestor_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'group_closure',
      'group_children',
      'group_roles',
      'group_members',
      'groups',
      'user_roles',
      'user_permissions',
      'role_permissions',
      'roles',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
