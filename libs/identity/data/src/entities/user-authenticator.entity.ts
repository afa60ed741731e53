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

/** Kinds of authenticator: an app (`totp`), its recovery codes, a passkey (`webauthn`). */
export type AuthenticatorType = 'totp' | 'recovery_codes' | 'webauthn';

/**
 * A second factor of a user: a TOTP app (its sealed secret and the last time step it accepted), a set of recovery
 * codes (the SHA-256 of each one, marked once used) or a passkey (its credential id, public key and signature
 * counter). `confirmedAt` null: an enrolment waiting for its first code.
 */
@Entity({ name: 'user_authenticators' })
@Index('ix_user_authenticators_user', ['userId'])
@Index('ux_user_authenticators_credential', ['credentialId'], {
  unique: true,
  where: 'credential_id IS NOT NULL',
})
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

  /** Passkey: the WebAuthn credential id (base64url), unique across the server. */
  @Column('text', { name: 'credential_id', nullable: true })
  credentialId: string | null;

  /** Passkey: the COSE public key (base64url). */
  @Column('text', { name: 'public_key', nullable: true })
  publicKey: string | null;

  /** Passkey: the authenticator's signature counter at its last use (an assertion must move it on, or be 0). */
  @Column('bigint', { name: 'sign_count', nullable: true })
  signCount: string | null;

  /** Passkey: the transports the browser reported at registration. */
  @Column('text', { array: true, nullable: true })
  transports: string[] | null;

  /** Passkey: backup eligible (a synced passkey, amr `swk`), else bound to its device (amr `hwk`). */
  @Column('boolean', { name: 'backup_eligible', nullable: true })
  backupEligible: boolean | null;
}

/** A WebAuthn ceremony's challenge: single use (deleted by the answer), short-lived, bound to what started it. */
@Entity({ name: 'webauthn_challenges' })
@Index('ix_webauthn_challenges_expires', ['expiresAt'])
@Index('ix_webauthn_challenges_binding', ['binding', 'purpose'])
@Check('ck_webauthn_challenges_purpose', `purpose IN ('register', 'authenticate')`)
export class WebauthnChallenge {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_webauthn_challenges' })
  challenge: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_webauthn_challenges_instance', onDelete: 'CASCADE' })
  instanceId: string;

  @Column('text')
  purpose: 'register' | 'authenticate';

  /** The interaction's uid, or `account:` and a hash of the account page's session. */
  @Column('text')
  binding: string;

  /** The user the ceremony is for (registration, second factor); null for a passwordless sign-in. */
  @Column('uuid', { name: 'user_id', nullable: true })
  userId: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_webauthn_challenges_user' })
  user?: Relation<User>;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;
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
