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
import { User } from './user.entity.js';
import { TenantIdentityProvider } from './identity-provider.entity.js';

/** A link of a user to an identity provider account (document 2's `identities`). */
@Entity({ name: 'user_identities' })
@Unique('uq_user_identities_issuer', ['instanceId', 'issuer', 'providerUserId'])
@Index('ix_user_identities_user', ['userId'])
@Index('ix_user_identities_identity_provider', ['identityProviderId'])
@ForeignKey(() => TenantIdentityProvider, ['identityProviderId'], ['id'], {
  name: 'fk_user_identities_identity_provider',
  onDelete: 'SET NULL',
})
export class UserIdentity extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_user_identities' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_user_identities_instance' })
  instanceId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_user_identities_user' })
  user?: Relation<User>;

  /** Identity provider name (document 2's `identity_provider`). */
  @Column('text')
  provider: string;

  /** The user's id at the provider (document 2's `user_identifier`). */
  @Column('text', { name: 'provider_user_id' })
  providerUserId: string;

  /** Profile data from the provider (document 2's `identity_data`). */
  @Column('jsonb', { default: () => "'{}'" })
  profile: Record<string, unknown>;

  /** The tenant identity provider that made it (null once that provider was deleted). */
  @Column('uuid', { name: 'identity_provider_id', nullable: true })
  identityProviderId: string | null;

  /** The provider's issuer: with `providerUserId` (its `sub`) the account at the provider. */
  @Column('text', { nullable: true })
  issuer: string | null;

  @Column('timestamptz', { name: 'last_sign_in_at', nullable: true })
  lastSignInAt: Date | null;
}
