import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** oidc-provider artifacts (one table for every model; written by apps/auth's adapter). */
@Entity({ name: 'oidc_payloads' })
// Partial: most artifacts (client_credentials tokens) carry none of these columns.
@Index('ix_oidc_payloads_uid', ['model', 'uid'], { where: 'uid IS NOT NULL' })
@Index('ix_oidc_payloads_user_code', ['model', 'userCode'], { where: 'user_code IS NOT NULL' })
@Index('ix_oidc_payloads_grant_id', ['grantId'], { where: 'grant_id IS NOT NULL' })
@Index('ix_oidc_payloads_expires_at', ['expiresAt'])
@Index('ix_oidc_payloads_account', { synchronize: false }) // ((payload->>'accountId'))
export class OidcPayload {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_oidc_payloads' })
  model: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_oidc_payloads' })
  id: string;

  @Column('jsonb')
  payload: Record<string, unknown>;

  @Column('text', { name: 'grant_id', nullable: true })
  grantId: string | null;

  @Column('text', { name: 'user_code', nullable: true })
  userCode: string | null;

  @Column('text', { nullable: true })
  uid: string | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt: Date | null;

  @Column('timestamptz', { name: 'consumed_at', nullable: true })
  consumedAt: Date | null;
}
