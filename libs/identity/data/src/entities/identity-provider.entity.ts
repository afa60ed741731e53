import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';

/**
 * An OpenID Connect provider a tenant trusts (Tenant Identity Providers): token exchange (RFC 8693) accepts its ID
 * tokens and JWT access tokens, verified against its JWKS, for the users of the tenant.
 */
@Entity({ name: 'tenant_identity_providers' })
@Unique('uq_tenant_identity_providers_issuer', ['tenantId', 'issuer'])
@Index('ix_tenant_identity_providers_issuer', ['instanceId', 'issuer'])
@ForeignKey(() => Tenant, ['tenantId'], ['id'], {
  name: 'fk_tenant_identity_providers_tenant',
  onDelete: 'CASCADE',
})
export class TenantIdentityProvider extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_tenant_identity_providers' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_tenant_identity_providers_instance' })
  instanceId: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  /** The kind of provider (document 2's `identity_provider`: `oidc`, `google`, ...). */
  @Column('text', { name: 'identity_provider' })
  identityProvider: string;

  @Column('text')
  name: string;

  /** The `iss` of its tokens. */
  @Column('text')
  issuer: string;

  /** Our client id at the provider: the `aud` of the ID tokens it issues for us. */
  @Column('text', { name: 'client_id' })
  clientId: string;

  /** Sealed with the SecretBox; shown once, in the create answer. */
  @Column('text', { name: 'client_secret_enc', nullable: true })
  clientSecretEnc: string | null;

  /** Where its signing keys are; null: the `jwks_uri` of `<issuer>/.well-known/openid-configuration`. */
  @Column('text', { name: 'jwks_uri', nullable: true })
  jwksUri: string | null;

  @Column('boolean', { default: true })
  enabled: boolean;
}
