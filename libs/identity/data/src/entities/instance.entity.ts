import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { MfaPolicy } from './mfa-policy.js';
import { Audited, type AppMetadataEntry } from './audit.js';

/** One password rule of an instance (document 2's `password_validators`): `rules` holds a regular expression. */
export interface PasswordValidator {
  order: number;
  validator: string;
  description: string;
  rules: string;
}

/** `instances.settings`: document 2's `instance_metadata`. */
export interface InstanceSettings {
  identity_providers?: { identity_provider: string; enabled: boolean }[];
  supported_locales?: string[];
  password_validators?: PasswordValidator[];
  [key: string]: unknown;
}

@Entity({ name: 'instances' })
@Check('ck_instances_mfa', `mfa IN ('off', 'optional', 'required')`)
@Index('ux_instances_default', ['isDefault'], { unique: true, where: 'is_default' })
@Index('ux_instances_name', { synchronize: false }) // (lower(name)), see the migration
export class Instance extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_instances' })
  id: string;

  @Column('text')
  name: string;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('boolean', { name: 'is_default', default: false })
  isDefault: boolean;

  @Column('boolean', { name: 'multi_tenant', default: false })
  multiTenant: boolean;

  @Column('jsonb', { default: () => "'{}'" })
  settings: InstanceSettings;

  @Column('jsonb', { name: 'app_metadata', default: () => "'[]'" })
  appMetadata: AppMetadataEntry[];

  /** MFA policy (`off`, `optional`, `required`); null inherits (docs/security.md "Second factors"). */
  @Column('text', { nullable: true })
  mfa: MfaPolicy | null;
}
