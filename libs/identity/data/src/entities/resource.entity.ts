import {
  Column,
  CreateDateColumn,
  Entity,
  ForeignKey,
  Index,
  OneToMany,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import type { AppMetadataEntry } from './audit.js';
import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';
// By entity name, not class: scope.entity.ts imports this file (no import cycle between the two).
import type { Scope } from './scope.entity.js';

/**
 * A resource (API). `resource_metadata` of the seeds is stored as columns so it can be indexed and queried;
 * the presentation layer rebuilds the object. Audit pair is `created_date` / `updated_date` (document 1).
 */
@Entity({ name: 'resources' })
@Unique('uq_resources_identifier_url', ['instanceId', 'identifierUrl'])
@Index('ix_resources_tenant', ['tenantId'])
export class Resource {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_resources' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_resources_instance' })
  instanceId: string;

  @Column('uuid', { name: 'tenant_id', nullable: true })
  @ForeignKey(() => Tenant, { name: 'fk_resources_tenant' })
  tenantId: string | null;

  @Column('text', { name: 'resource_type' })
  resourceType: string;

  @Column('text', { name: 'resource_name' })
  resourceName: string;

  @Column('text', { name: 'resource_description', nullable: true })
  resourceDescription: string | null;

  /** The audience (RFC 8707 resource indicator) of tokens for this resource. */
  @Column('text', { name: 'identifier_url', nullable: true })
  identifierUrl: string | null;

  @Column('boolean', { name: 'is_system', default: false })
  isSystem: boolean;

  @Column('text', { name: 'signing_algorithm', default: 'ES256' })
  signingAlgorithm: string;

  /** SecretBox ciphertext of the HS256 signing secret (null for asymmetric algorithms). */
  @Column('text', { name: 'signing_secret_enc', nullable: true })
  signingSecretEnc: string | null;

  /** Access token lifetime in seconds. */
  @Column('integer', { name: 'token_lifetime', default: 86400 })
  tokenLifetime: number;

  @Column('boolean', { name: 'rbac_enabled', default: false })
  rbacEnabled: boolean;

  @Column('boolean', { name: 'scopes_added', default: false })
  scopesAdded: boolean;

  @Column('boolean', { name: 'skip_consent_for_first_party', default: true })
  skipConsentForFirstParty: boolean;

  @Column('jsonb', { name: 'app_metadata', default: () => "'[]'" })
  appMetadata: AppMetadataEntry[];

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_date', type: 'timestamptz' })
  createdDate: Date;

  @Column('uuid', { name: 'updated_by', nullable: true })
  updatedBy: string | null;

  @UpdateDateColumn({ name: 'updated_date', type: 'timestamptz' })
  updatedDate: Date;

  @OneToMany('Scope', (s: Scope) => s.resource)
  scopes?: Relation<Scope>[];
}
