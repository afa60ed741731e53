import {
  Column,
  Entity,
  ForeignKey,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { Resource } from './resource.entity.js';

@Entity({ name: 'scopes' })
@Unique('uq_scopes_name', ['resourceId', 'scopeName'])
// Target of client_permissions' (resource_id, scope_id) foreign key: a permission's scope belongs to its resource.
@Unique('uq_scopes_resource_id', ['resourceId', 'id'])
export class Scope extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_scopes' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_scopes_instance' })
  instanceId: string;

  @Column('uuid', { name: 'resource_id' })
  resourceId: string;

  @ManyToOne(() => Resource, (r) => r.scopes, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'resource_id', foreignKeyConstraintName: 'fk_scopes_resource' })
  resource?: Relation<Resource>;

  @Column('text', { name: 'scope_name' })
  scopeName: string;

  @Column('text', { name: 'scope_description', nullable: true })
  scopeDescription: string | null;
}
