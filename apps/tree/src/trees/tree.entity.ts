import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited } from '@gatehouse/db';

@Entity({ name: 'trees' })
@Unique('uq_trees_code', ['instanceId', 'code'])
export class Tree extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_trees' })
  id: string;

  /** The instance of the tree (the nil uuid for the default instance: migration 1790000500000). */
  @Column('uuid', { name: 'instance_id' })
  instanceId: string;

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
