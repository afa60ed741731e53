import { Column, CreateDateColumn, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { Instance } from './instance.entity.js';

/** One row per completed one-time seeding step (`default-instance`): a restart never seeds again. */
@Entity({ name: 'bootstrap_markers' })
export class BootstrapMarker {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_bootstrap_markers' })
  name: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_bootstrap_markers_instance' })
  instanceId: string;

  /** Ids the step created, e.g. `{ client_id, admin_user_id }`. */
  @Column('jsonb', { default: () => "'{}'" })
  details: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
