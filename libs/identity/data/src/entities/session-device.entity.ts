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
 * The browser of a session (oidc-provider's, by its public uid): user agent and source address as last seen, and
 * when. The account page's "where you are signed in" list. Rows go with their user; a row whose session is gone is
 * purged by the token server.
 */
@Entity({ name: 'session_devices' })
@Index('ix_session_devices_user', ['userId'])
@Index('ix_session_devices_last_seen', ['lastSeenAt'])
export class SessionDevice {
  @PrimaryColumn('text', { name: 'session_uid', primaryKeyConstraintName: 'pk_session_devices' })
  sessionUid: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_session_devices_instance' })
  instanceId: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_session_devices_user' })
  user?: Relation<User>;

  @Column('text', { name: 'user_agent', nullable: true })
  userAgent: string | null;

  @Column('text', { nullable: true })
  ip: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;

  @Column('timestamptz', { name: 'last_seen_at', default: () => 'now()' })
  lastSeenAt: Date;
}
