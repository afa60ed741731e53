import { Column, CreateDateColumn, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Instance } from './instance.entity.js';
import { User } from './user.entity.js';
import { Client } from './client.entity.js';

/** A one-time code of passwordless sign-in, kept as a keyed hash; used once, 5 attempts, 5 minutes. */
@Entity({ name: 'one_time_codes' })
@Index('ix_one_time_codes_user_client', ['userId', 'clientId'])
@Index('ix_one_time_codes_expires', ['expiresAt'])
@ForeignKey(() => User, ['userId'], ['id'], { name: 'fk_one_time_codes_user', onDelete: 'CASCADE' })
@ForeignKey(() => Client, ['clientId'], ['id'], { name: 'fk_one_time_codes_client', onDelete: 'CASCADE' })
export class OneTimeCode {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_one_time_codes' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_one_time_codes_instance' })
  instanceId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  /** Null for a code of the person rather than of a client (the account page's phone verification). */
  @Column('uuid', { name: 'client_id', nullable: true })
  clientId: string | null;

  /** `email` or `sms` (sign-in codes), a link's purpose, or `phone_verification` (the number in `params.phone`). */
  @Column('text')
  channel: string;

  @Column('text', { name: 'code_hash' })
  codeHash: string;

  @Column('text', { nullable: true })
  scope: string | null;

  /** The authorization request a sign-in link continues (redirect_uri, response_type, scope, state, PKCE). */
  @Column('jsonb', { nullable: true })
  params: Record<string, string> | null;

  @Column('integer', { default: 0 })
  attempts: number;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;

  @Column('timestamptz', { name: 'consumed_at', nullable: true })
  consumedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
