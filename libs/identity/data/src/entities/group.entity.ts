import { Column, Entity, ForeignKey, Index, PrimaryColumn, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited, type AppMetadataEntry } from './audit.js';
import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';
import { User } from './user.entity.js';
import { Role } from './role.entity.js';

/** A set of users (and of nested groups) that hold the roles of the group and of its ancestors. */
@Entity({ name: 'groups' })
@Index('ux_groups_name', { synchronize: false }) // (instance_id, tenant_id, lower(group_name)) NULLS NOT DISTINCT
@Index('ix_groups_tenant', ['tenantId'])
export class Group extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_groups' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_groups_instance' })
  instanceId: string;

  @Column('uuid', { name: 'tenant_id', nullable: true })
  @ForeignKey(() => Tenant, { name: 'fk_groups_tenant' })
  tenantId: string | null;

  @Column('text', { name: 'group_name' })
  groupName: string;

  @Column('text', { name: 'group_description', nullable: true })
  groupDescription: string | null;

  @Column('jsonb', { name: 'app_metadata', default: () => "'[]'" })
  appMetadata: AppMetadataEntry[];
}

/** A user in a group (Group Members, User Groups). */
@Entity({ name: 'group_members' })
@Unique('uq_group_members', ['groupId', 'userId'])
@Index('ix_group_members_user', ['userId'])
@ForeignKey(() => Group, ['groupId'], ['id'], { name: 'fk_group_members_group', onDelete: 'CASCADE' })
@ForeignKey(() => User, ['userId'], ['id'], { name: 'fk_group_members_user', onDelete: 'CASCADE' })
export class GroupMember extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_group_members' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_group_members_instance' })
  instanceId: string;

  @Column('uuid', { name: 'group_id' })
  groupId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;
}

/** A role of a group: every member of the group or of a group nested in it holds it. */
@Entity({ name: 'group_roles' })
@Unique('uq_group_roles', ['groupId', 'roleId'])
@Index('ix_group_roles_role', ['roleId'])
@ForeignKey(() => Group, ['groupId'], ['id'], { name: 'fk_group_roles_group', onDelete: 'CASCADE' })
@ForeignKey(() => Role, ['roleId'], ['id'], { name: 'fk_group_roles_role', onDelete: 'CASCADE' })
export class GroupRole extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_group_roles' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_group_roles_instance' })
  instanceId: string;

  @Column('uuid', { name: 'group_id' })
  groupId: string;

  @Column('uuid', { name: 'role_id' })
  roleId: string;
}

/** A nesting: `child_id` is a group inside `parent_id` (Nested Groups). */
@Entity({ name: 'group_children' })
@Unique('uq_group_children', ['parentId', 'childId'])
@Index('ix_group_children_child', ['childId'])
@ForeignKey(() => Group, ['parentId'], ['id'], { name: 'fk_group_children_parent', onDelete: 'CASCADE' })
@ForeignKey(() => Group, ['childId'], ['id'], { name: 'fk_group_children_child', onDelete: 'CASCADE' })
export class GroupChild extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_group_children' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_group_children_instance' })
  instanceId: string;

  @Column('uuid', { name: 'parent_id' })
  parentId: string;

  @Column('uuid', { name: 'child_id' })
  childId: string;
}

/**
 * The ancestry of nested groups, kept by the nesting operations: `paths` distinct nesting paths lead from
 * `ancestor_id` down to `descendant_id`; every group has its own row (paths 1).
 */
@Entity({ name: 'group_closure' })
@Index('ix_group_closure_ancestor', ['ancestorId'])
@ForeignKey(() => Group, ['descendantId'], ['id'], {
  name: 'fk_group_closure_descendant',
  onDelete: 'CASCADE',
})
@ForeignKey(() => Group, ['ancestorId'], ['id'], { name: 'fk_group_closure_ancestor', onDelete: 'CASCADE' })
export class GroupClosure {
  @PrimaryColumn('uuid', { name: 'descendant_id', primaryKeyConstraintName: 'pk_group_closure' })
  descendantId: string;

  @PrimaryColumn('uuid', { name: 'ancestor_id', primaryKeyConstraintName: 'pk_group_closure' })
  ancestorId: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_group_closure_instance' })
  instanceId: string;

  /** bigint: paths multiply along diamonds of nestings. */
  @Column('bigint')
  paths: string;
}
