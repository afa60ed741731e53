import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';
import { User } from './user.entity.js';

/** A user who administers a tenant (Tenant Admins); deleting the tenant or the user drops it. */
@Entity({ name: 'tenant_admins' })
@Unique('uq_tenant_admins', ['tenantId', 'userId'])
@Index('ix_tenant_admins_user', ['userId'])
@ForeignKey(() => Tenant, ['tenantId'], ['id'], { name: 'fk_tenant_admins_tenant', onDelete: 'CASCADE' })
@ForeignKey(() => User, ['userId'], ['id'], { name: 'fk_tenant_admins_user', onDelete: 'CASCADE' })
export class TenantAdmin extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_tenant_admins' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_tenant_admins_instance' })
  instanceId: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;
}
