import { Check, Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { MfaPolicy } from './mfa-policy.js';
import { Audited, type AppMetadataEntry } from './audit.js';
import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';

/** `clients.client_metadata` (document 1 common client metadata, plus document 2's `app_type` and `mobile`). */
export interface ClientMetadata {
  grant_types?: string[];
  /** Contents not fixed by the seeds; the token server reads `callbacks` and `logout_urls` (@gatehouse/oidc-clients). */
  urls?: Record<string, unknown>;
  refresh_token?: { expiration_enabled?: boolean; expiration_lifetime?: number };
  id_token?: { expiration_lifetime?: number };
  oauth?: Record<string, unknown>;
  saml?: Record<string, unknown>;
  wsfed?: Record<string, unknown>;
  app_type?: string;
  mobile?: Record<string, unknown>;
  [key: string]: unknown;
}

@Entity({ name: 'clients' })
@Check('ck_clients_mfa', `mfa IN ('off', 'optional', 'required')`)
@Index('ux_clients_name', { synchronize: false }) // (instance_id, tenant_id, lower(client_name)) NULLS NOT DISTINCT
@Index('ux_clients_default', ['instanceId'], { unique: true, where: 'is_default' })
@Index('ix_clients_tenant', ['tenantId'])
export class Client extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_clients' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_clients_instance' })
  instanceId: string;

  @Column('uuid', { name: 'tenant_id', nullable: true })
  @ForeignKey(() => Tenant, { name: 'fk_clients_tenant' })
  tenantId: string | null;

  @Column('text', { name: 'client_name' })
  clientName: string;

  @Column('text', { name: 'client_type', nullable: true })
  clientType: string | null;

  @Column('text', { name: 'client_description', nullable: true })
  clientDescription: string | null;

  /** SecretBox ciphertext of the client secret (null for a public client). Never log, never list. */
  @Column('text', { name: 'client_secret_enc', nullable: true })
  clientSecretEnc: string | null;

  @Column('timestamptz', { name: 'client_secret_expires_at', nullable: true })
  clientSecretExpiresAt: Date | null;

  @Column('jsonb', { name: 'client_metadata', default: () => "'{}'" })
  clientMetadata: ClientMetadata;

  @Column('jsonb', { name: 'app_metadata', default: () => "'[]'" })
  appMetadata: AppMetadataEntry[];

  @Column('boolean', { name: 'is_public', default: false })
  isPublic: boolean;

  @Column('boolean', { name: 'is_first_party', default: false })
  isFirstParty: boolean;

  @Column('boolean', { name: 'is_global', default: true })
  isGlobal: boolean;

  /** The bootstrap client of the instance: it cannot be deleted. */
  @Column('boolean', { name: 'is_default', default: false })
  isDefault: boolean;

  /** MFA policy (`off`, `optional`, `required`); null inherits (docs/security.md "Second factors"). */
  @Column('text', { nullable: true })
  mfa: MfaPolicy | null;
}
