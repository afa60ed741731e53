import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A message queued for delivery (libs/identity/delivery): e-mail or SMS, delivered by a worker of its `queue` (the
 * sending service) with retries; `payload` is dropped once delivered or given up.
 */
@Entity({ name: 'delivery_outbox' })
@Index('ix_delivery_outbox_due', ['queue', 'status', 'nextAttemptAt'])
@Index('ix_delivery_outbox_finished', ['finishedAt'])
export class DeliveryOutboxMessage {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_delivery_outbox' })
  id: string;

  @Column('text')
  queue: string;

  /** `email` or `sms`. */
  @Column('text')
  channel: string;

  /** What the message is (signup-verification, invitation, otp ...), for the log. */
  @Column('text')
  kind: string;

  @Column('text')
  recipient: string;

  /** `{subject, text, html}`; null once delivered or given up. */
  @Column('jsonb', { nullable: true })
  payload: Record<string, string> | null;

  /** `pending`, `sent` or `failed`. */
  @Column('text', { default: 'pending' })
  status: string;

  @Column('integer', { default: 0 })
  attempts: number;

  @Column('timestamptz', { name: 'next_attempt_at', default: () => 'now()' })
  nextAttemptAt: Date;

  /** A short reason (an SMTP code, an HTTP status), never the message. */
  @Column('text', { name: 'last_error', nullable: true })
  lastError: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { name: 'finished_at', nullable: true })
  finishedAt: Date | null;
}

/** Sign-ups counted in one window of one bucket (`a:<instance>:<address>` per hour, `i:<instance>` per minute). */
@Entity({ name: 'signup_counters' })
@Index('ix_signup_counters_window_end', ['windowEnd'])
export class SignupCounter {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_signup_counters' })
  bucket: string;

  @PrimaryColumn('timestamptz', { name: 'window_start', primaryKeyConstraintName: 'pk_signup_counters' })
  windowStart: Date;

  @Column('timestamptz', { name: 'window_end' })
  windowEnd: Date;

  @Column('integer', { default: 0 })
  count: number;
}
