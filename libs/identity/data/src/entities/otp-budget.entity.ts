import {
  Column,
  Entity,
  ForeignKey,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { Instance } from './instance.entity.js';
import { User } from './user.entity.js';

/**
 * Wrong one-time codes of one account across all its codes (Auth0's passwordless brute-force protection): the
 * count in the current window, and the lock the budget's end sets (each lock longer than the one before, as
 * `lock_count` says). Rows go with their user; the token server purges rows untouched for a day, lock over.
 */
@Entity({ name: 'otp_failures' })
@Index('ix_otp_failures_updated', ['updatedAt'])
export class OtpFailure {
  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'pk_otp_failures' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_otp_failures_user' })
  user?: Relation<User>;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_otp_failures_instance' })
  instanceId: string;

  /** Wrong codes since `window_start`. */
  @Column('integer', { name: 'failed_count', default: 0 })
  failedCount: number;

  @Column('timestamptz', { name: 'window_start', default: () => 'now()' })
  windowStart: Date;

  @Column('timestamptz', { name: 'locked_until', nullable: true })
  lockedUntil: Date | null;

  /** Locks so far (the next one lasts 2^lock_count times the first). */
  @Column('integer', { name: 'lock_count', default: 0 })
  lockCount: number;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}

/**
 * Messages with a one-time code or sign-in link sent to one account (`u:<user id>`) or one destination (`d:<keyed
 * hash of the address>`, across instances): the last one, and how many since `hour_start`.
 */
@Entity({ name: 'otp_sends' })
@Index('ix_otp_sends_last', ['lastSentAt'])
export class OtpSend {
  @PrimaryColumn('text', { name: 'send_key', primaryKeyConstraintName: 'pk_otp_sends' })
  sendKey: string;

  @Column('timestamptz', { name: 'hour_start' })
  hourStart: Date;

  @Column('integer', { name: 'hour_count', default: 0 })
  hourCount: number;

  @Column('timestamptz', { name: 'last_sent_at' })
  lastSentAt: Date;
}
