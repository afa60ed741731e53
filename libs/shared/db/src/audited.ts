import { Column, CreateDateColumn, UpdateDateColumn } from 'typeorm';

/**
 * `created_by`, `created_at`, `updated_by`, `updated_at` as the seeds name them, shared by the identity and tree
 * entities (identity's resources keep their own pair).
 */
export abstract class Audited {
  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('uuid', { name: 'updated_by', nullable: true })
  updatedBy: string | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
