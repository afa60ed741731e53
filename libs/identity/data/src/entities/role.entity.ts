import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited, type AppMetadataEntry } from './audit.js';
import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';
import { Scope } from './scope.entity.js';
import { User } from './user.entity.js';

/** A named set of permissions, given to users directly (user_roles) or through groups (group_roles). */
@Entity({ name: 'roles' })
@Index('ux_roles_name', { synchronize: false }) // (instance_id, tenant_id, lower(role_name)) NULLS NOT DISTINCT
@Index('ix_roles_tenant', ['tenantId'])
@Index('ux_roles_system_role', { synchronize: false }) // (instance_id, tenant_id, system_role) WHERE NOT NULL
export class Role extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_roles' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_roles_instance' })
  instanceId: string;

  @Column('uuid', { name: 'tenant_id', nullable: true })
  @ForeignKey(() => Tenant, { name: 'fk_roles_tenant' })
  tenantId: string | null;

  @Column('text', { name: 'role_name' })
  roleName: string;

  @Column('text', { name: 'role_description', nullable: true })
  roleDescription: string | null;

  @Column('jsonb', { name: 'app_metadata', default: () => "'[]'" })
  appMetadata: AppMetadataEntry[];

  /**
   * The admin role of an instance (`instance_admin`) or of a tenant (`tenant_admin`), through which instance and
   * tenant admins hold their scopes (admin-roles.ts); null for every other role.
   */
  @Column('text', { name: 'system_role', nullable: true })
  systemRole: 'instance_admin' | 'tenant_admin' | null;
}

/** A scope of a resource granted to a role (deleting the role or the scope drops it). */
@Entity({ name: 'role_permissions' })
@Unique('uq_role_permissions', ['roleId', 'scopeId'])
@Index('ix_role_permissions_role_resource', ['roleId', 'resourceId'])
@Index('ix_role_permissions_resource_scope', ['resourceId', 'scopeId'])
@ForeignKey(() => Role, ['roleId'], ['id'], { name: 'fk_role_permissions_role', onDelete: 'CASCADE' })
@ForeignKey(() => Scope, ['resourceId', 'scopeId'], ['resourceId', 'id'], {
  name: 'fk_role_permissions_scope',
  onDelete: 'CASCADE',
})
export class RolePermission extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_role_permissions' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_role_permissions_instance' })
  instanceId: string;

  @Column('uuid', { name: 'role_id' })
  roleId: string;

  @Column('uuid', { name: 'resource_id' })
  resourceId: string;

  @Column('uuid', { name: 'scope_id' })
  scopeId: string;
}

/** A scope of a resource granted to a user directly. */
@Entity({ name: 'user_permissions' })
@Unique('uq_user_permissions', ['userId', 'scopeId'])
@Index('ix_user_permissions_user_resource', ['userId', 'resourceId'])
@Index('ix_user_permissions_resource_scope', ['resourceId', 'scopeId'])
@ForeignKey(() => User, ['userId'], ['id'], { name: 'fk_user_permissions_user', onDelete: 'CASCADE' })
@ForeignKey(() => Scope, ['resourceId', 'scopeId'], ['resourceId', 'id'], {
  name: 'fk_user_permissions_scope',
  onDelete: 'CASCADE',
})
export class UserPermission extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_user_permissions' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_user_permissions_instance' })
  instanceId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  @Column('uuid', { name: 'resource_id' })
  resourceId: string;

  @Column('uuid', { name: 'scope_id' })
  scopeId: string;
}

/** A role given to a user directly (Role Members, User Roles). */
@Entity({ name: 'user_roles' })
@Unique('uq_user_roles', ['userId', 'roleId'])
@Index('ix_user_roles_role', ['roleId'])
@ForeignKey(() => User, ['userId'], ['id'], { name: 'fk_user_roles_user', onDelete: 'CASCADE' })
@ForeignKey(() => Role, ['roleId'], ['id'], { name: 'fk_user_roles_role', onDelete: 'CASCADE' })
export class UserRole extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_user_roles' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_user_roles_instance' })
  instanceId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  @Column('uuid', { name: 'role_id' })
  roleId: string;
}
