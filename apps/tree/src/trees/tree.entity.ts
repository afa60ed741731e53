import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited } from '../common/audit.entity.js';

@Entity({ name: 'trees' })
@Unique('uq_trees_code', ['code'])
export class Tree extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_trees' })
  id: string;

  @Column('text')
  code: string;

  @Column('text')
  name: string;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('jsonb', { default: () => "'{}'" })
  metadata: Record<string, unknown>;

  @Column('boolean', { default: true })
  enabled: boolean;
}
