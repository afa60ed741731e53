import {
  Check,
  Column,
  Entity,
  ForeignKey,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { User } from './user.entity.js';

/** Kinds of authenticator (`webauthn` is reserved for passkeys, not built yet). */
export type AuthenticatorType = 'totp' | 'recovery_codes' | 'webauthn';

/**
 * A second factor of a user: a TOTP app (its sealed secret and the last time step it accepted) or a set of recovery
 * codes (the SHA-256 of each one, marked once used). `confirmedAt` null: an enrolment waiting for its first code.
 */
@Entity({ name: 'user_authenticators' })
@Index('ix_user_authenticators_user', ['userId'])
@Check('ck_user_authenticators_type', `type IN ('totp', 'recovery_codes', 'webauthn')`)
export class UserAuthenticator extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_user_authenticators' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_user_authenticators_instance' })
  instanceId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_user_authenticators_user' })
  user?: Relation<User>;

  @Column('text')
  type: AuthenticatorType;

  @Column('text')
  name: string;

  /** TOTP: the base32 secret sealed with the SecretBox (sealedIn.totpSecret). */
  @Column('text', { name: 'secret_enc', nullable: true })
  secretEnc: string | null;

  /** TOTP: the last time step (unix time / 30 s) a code was accepted for; a step is accepted once. */
  @Column('bigint', { name: 'last_step', nullable: true })
  lastStep: string | null;

  /** Recovery codes: SHA-256 (hex) of `<row id>:<code>` of each code, `used:<hash>` once used. */
  @Column('text', { name: 'code_hashes', array: true, nullable: true })
  codeHashes: string[] | null;

  @Column('timestamptz', { name: 'confirmed_at', nullable: true })
  confirmedAt: Date | null;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt: Date | null;
}

/** Wrong second factors of one account in the current window, and the lock the budget's end sets. */
@Entity({ name: 'mfa_failures' })
@Index('ix_mfa_failures_updated', ['updatedAt'])
export class MfaFailure {
  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'pk_mfa_failures' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_mfa_failures_user' })
  user?: Relation<User>;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_mfa_failures_instance' })
  instanceId: string;

  @Column('integer', { name: 'failed_count', default: 0 })
  failedCount: number;

  @Column('timestamptz', { name: 'window_start', default: () => 'now()' })
  windowStart: Date;

  @Column('timestamptz', { name: 'locked_until', nullable: true })
  lockedUntil: Date | null;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}
