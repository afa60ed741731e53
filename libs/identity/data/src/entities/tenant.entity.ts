import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Audited, type AppMetadataEntry } from './audit.js';
import { Instance } from './instance.entity.js';

@Entity({ name: 'tenants' })
@Index('ux_tenants_name', { synchronize: false }) // (instance_id, lower(name))
export class Tenant extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_tenants' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_tenants_instance' })
  instanceId: string;

  @Column('text')
  name: string;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('jsonb', { name: 'app_metadata', default: () => "'[]'" })
  appMetadata: AppMetadataEntry[];
}
