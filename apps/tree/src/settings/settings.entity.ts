import { Check, Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** The settings of one instance (the nil uuid for the default instance: migration 1790000500000). */
@Entity({ name: 'tree_settings' })
@Check('ck_tree_settings_environment', `environment IN ('development', 'staging', 'production')`)
export class TreeSettings {
  @PrimaryColumn('uuid', { name: 'instance_id', primaryKeyConstraintName: 'pk_tree_settings' })
  instanceId: string;

  @Column('text', { default: 'development' })
  environment: string;

  @Column('uuid', { name: 'updated_by', nullable: true })
  updatedBy: string | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
