import {
  Column,
  Entity,
  ForeignKey,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { Client } from './client.entity.js';
import { Resource } from './resource.entity.js';

/** A resource authorized to a client. Deleting it cascades to the client's permissions on that resource. */
@Entity({ name: 'client_resources' })
@Unique('uq_client_resources', ['clientId', 'resourceId'])
@Index('ix_client_resources_resource', ['resourceId'])
export class ClientResource extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_client_resources' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_client_resources_instance' })
  instanceId: string;

  @Column('uuid', { name: 'client_id' })
  clientId: string;

  @ManyToOne(() => Client, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'client_id', foreignKeyConstraintName: 'fk_client_resources_client' })
  client?: Relation<Client>;

  @Column('uuid', { name: 'resource_id' })
  resourceId: string;

  @ManyToOne(() => Resource, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'resource_id', foreignKeyConstraintName: 'fk_client_resources_resource' })
  resource?: Relation<Resource>;
}
