import { Check, Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';

/**
 * A webhook that receives the audit trail of its instance (or, when `tenant_id` is set, of that tenant): signed
 * deliveries in order, at least once, from a cursor into the events table (migration 1795800000100).
 */
@Entity({ name: 'log_streams' })
@Unique('uq_log_streams_name', ['instanceId', 'name'])
@Check('ck_log_streams_status', `status IN ('active', 'paused')`)
@Index('ix_log_streams_due', ['status', 'nextAttemptAt'])
@ForeignKey(() => Tenant, ['tenantId'], ['id'], { name: 'fk_log_streams_tenant', onDelete: 'CASCADE' })
export class LogStream extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_log_streams' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_log_streams_instance' })
  instanceId: string;

  @Column('uuid', { name: 'tenant_id', nullable: true })
  tenantId: string | null;

  @Column('text')
  name: string;

  @Column('text')
  url: string;

  /** The event types delivered; empty: all. */
  @Column('text', { name: 'event_types', array: true, default: () => "'{}'" })
  eventTypes: string[];

  /** The signing secret, sealed with the SecretBox; answered once, when it is made. */
  @Column('text', { name: 'secret_enc' })
  secretEnc: string;

  @Column('text', { default: 'active' })
  status: string;

  @Column('text', { name: 'paused_reason', nullable: true })
  pausedReason: string | null;

  /** The writing transaction of the last event delivered (events.txid, an xid8, as a number). */
  @Column('bigint', { name: 'cursor_txid' })
  cursorTxid: string;

  @Column('bigint', { name: 'cursor_seq', default: 0 })
  cursorSeq: string;

  @Column('integer', { default: 0 })
  failures: number;

  @Column('timestamptz', { name: 'next_attempt_at', default: () => 'now()' })
  nextAttemptAt: Date;

  @Column('timestamptz', { name: 'lease_until', nullable: true })
  leaseUntil: Date | null;

  @Column('text', { name: 'last_error', nullable: true })
  lastError: string | null;

  @Column('timestamptz', { name: 'last_delivered_at', nullable: true })
  lastDeliveredAt: Date | null;
}
