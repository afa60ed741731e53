import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { User } from './user.entity.js';
import { Client } from './client.entity.js';

/**
 * A ticket: a single-use link to a page of the token server that sets the user's password (`password_change`) or
 * verifies its e-mail (`email_verification`). Only the keyed hash of its token is stored.
 */
@Entity({ name: 'tickets' })
@Index('ux_tickets_token_hash', ['tokenHash'], { unique: true })
@Index('ix_tickets_user', ['userId'])
@Index('ix_tickets_client', ['clientId'])
@Index('ix_tickets_expires', ['expiresAt'])
@ForeignKey(() => User, ['userId'], ['id'], { name: 'fk_tickets_user', onDelete: 'CASCADE' })
@ForeignKey(() => Client, ['clientId'], ['id'], { name: 'fk_tickets_client', onDelete: 'SET NULL' })
export class Ticket extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_tickets' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_tickets_instance' })
  instanceId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  /** `password_change` or `email_verification`. */
  @Column('text')
  kind: string;

  /** HMAC-SHA256 (base64url) of the link's token; the token itself is never stored. */
  @Column('text', { name: 'token_hash' })
  tokenHash: string;

  /** The client the ticket was made for (named in the invitation), if any. */
  @Column('uuid', { name: 'client_id', nullable: true })
  clientId: string | null;

  /** Where the page sends the user after success (absolute http(s) URL); none: a success page. */
  @Column('text', { name: 'result_url', nullable: true })
  resultUrl: string | null;

  /** The user's e-mail when the ticket was made: only that address is verified through it. */
  @Column('text', { name: 'user_email', nullable: true })
  userEmail: string | null;

  /** A password-change ticket that also marks the e-mail verified (invitations: the e-mailed link proves it). */
  @Column('boolean', { name: 'mark_email_verified', default: false })
  markEmailVerified: boolean;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;

  @Column('timestamptz', { name: 'used_at', nullable: true })
  usedAt: Date | null;
}
