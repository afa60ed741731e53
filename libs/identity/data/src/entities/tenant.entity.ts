import { Check, Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { MfaPolicy } from './mfa-policy.js';
import { Audited, type AppMetadataEntry } from './audit.js';
import { Instance } from './instance.entity.js';

@Entity({ name: 'tenants' })
@Check('ck_tenants_mfa', `mfa IN ('off', 'optional', 'required')`)
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

  /** MFA policy (`off`, `optional`, `required`); null inherits (docs/security.md "Second factors"). */
  @Column('text', { nullable: true })
  mfa: MfaPolicy | null;
}
