import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { User } from './user.entity.js';

/** A user who administers an instance (document 2's Instance `admins`); a user of that instance. */
@Entity({ name: 'instance_admins' })
@Unique('uq_instance_admins', ['instanceId', 'userId'])
@Index('ix_instance_admins_user', ['userId'])
@ForeignKey(() => Instance, ['instanceId'], ['id'], {
  name: 'fk_instance_admins_instance',
  onDelete: 'CASCADE',
})
@ForeignKey(() => User, ['userId'], ['id'], { name: 'fk_instance_admins_user', onDelete: 'CASCADE' })
export class InstanceAdmin extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_instance_admins' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  instanceId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;
}
