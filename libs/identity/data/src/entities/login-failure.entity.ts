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
 * Brute-force protection keyed by account AND source address (Keycloak's and Auth0's model): failed password logins
 * of one user from one address, and the lock they set. A lock from one address never keeps the user out from
 * another, so nobody can lock an account (the admin's) by failing on purpose. Rows go with their user; the token
 * server purges rows no failure has touched for a day and whose lock has run out.
 */
@Entity({ name: 'login_failures' })
@Index('ix_login_failures_updated', ['updatedAt'])
export class LoginFailure {
  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'pk_login_failures' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_login_failures_user' })
  user?: Relation<User>;

  /** The source address of the attempts (the forwarded one behind a trusted proxy). */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_login_failures' })
  source: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_login_failures_instance' })
  instanceId: string;

  /** Consecutive failures since the last success or lock. */
  @Column('integer', { name: 'failed_count', default: 0 })
  failedCount: number;

  @Column('timestamptz', { name: 'locked_until', nullable: true })
  lockedUntil: Date | null;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}
