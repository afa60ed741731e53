import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Audited, type AppMetadataEntry } from './audit.js';
import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';

/** OIDC `address` claim. */
export interface UserAddress {
  country?: string;
  postal_code?: string;
  region?: string;
  locality?: string;
  street_address?: string;
  formatted?: string;
}

/**
 * A user. Logins (e-mail, user name, phone) are unique per instance, e-mail and user name case-insensitively
 * (expression indexes in the migration). `password_hash` is an argon2id PHC string; never log, never list.
 */
@Entity({ name: 'users' })
@Index('ux_users_email', { synchronize: false }) // (instance_id, lower(user_email))
@Index('ux_users_name', { synchronize: false }) // (instance_id, lower(user_name))
@Index('ux_users_phone', ['instanceId', 'phoneNumber'], { unique: true })
@Index('ix_users_tenant', ['tenantId'])
export class User extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_users' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_users_instance' })
  instanceId: string;

  @Column('uuid', { name: 'tenant_id', nullable: true })
  @ForeignKey(() => Tenant, { name: 'fk_users_tenant' })
  tenantId: string | null;

  @Column('text', { name: 'user_email', nullable: true })
  userEmail: string | null;

  @Column('text', { name: 'user_name', nullable: true })
  userName: string | null;

  /** E.164 phone number. */
  @Column('text', { name: 'phone_number', nullable: true })
  phoneNumber: string | null;

  @Column('text', { name: 'password_hash', nullable: true })
  passwordHash: string | null;

  /** Full name (document 2's `user_fullName`, OIDC `name`). */
  @Column('text', { nullable: true })
  name: string | null;

  @Column('text', { name: 'given_name', nullable: true })
  givenName: string | null;

  @Column('text', { name: 'family_name', nullable: true })
  familyName: string | null;

  @Column('text', { name: 'middle_name', nullable: true })
  middleName: string | null;

  @Column('text', { nullable: true })
  nickname: string | null;

  @Column('text', { nullable: true })
  picture: string | null;

  @Column('text', { nullable: true })
  gender: string | null;

  @Column('date', { nullable: true })
  birthdate: string | null;

  @Column('text', { nullable: true })
  locale: string | null;

  @Column('text', { nullable: true })
  zoneinfo: string | null;

  @Column('jsonb', { nullable: true })
  address: UserAddress | null;

  @Column('boolean', { name: 'email_verified', default: false })
  emailVerified: boolean;

  @Column('boolean', { name: 'phone_verified', default: false })
  phoneVerified: boolean;

  @Column('boolean', { name: 'is_blocked', default: false })
  isBlocked: boolean;

  @Column('boolean', { name: 'is_invited', default: false })
  isInvited: boolean;

  @Column('timestamptz', { name: 'invited_at', nullable: true })
  invitedAt: Date | null;

  /** Consecutive failed password logins since the last success or lock (brute-force protection). */
  @Column('integer', { name: 'failed_login_count', default: 0 })
  failedLoginCount: number;

  @Column('timestamptz', { name: 'locked_until', nullable: true })
  lockedUntil: Date | null;

  @Column('timestamptz', { name: 'last_login_at', nullable: true })
  lastLoginAt: Date | null;

  /** Successful logins (document 2's `aggregates.logins`). */
  @Column('integer', { name: 'login_count', default: 0 })
  loginCount: number;

  @Column('jsonb', { name: 'app_metadata', default: () => "'[]'" })
  appMetadata: AppMetadataEntry[];

  @Column('jsonb', { name: 'user_metadata', default: () => "'{}'" })
  userMetadata: Record<string, unknown>;
}
