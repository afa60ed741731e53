import { Check, Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** The one settings row (id 1, created by the migration). */
@Entity({ name: 'tree_settings' })
@Check('ck_tree_settings_single', 'id = 1')
@Check('ck_tree_settings_environment', `environment IN ('development', 'staging', 'production')`)
export class TreeSettings {
  @PrimaryColumn('smallint', { primaryKeyConstraintName: 'pk_tree_settings', default: 1 })
  id: number;

  @Column('text', { default: 'development' })
  environment: string;

  @Column('uuid', { name: 'updated_by', nullable: true })
  updatedBy: string | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
