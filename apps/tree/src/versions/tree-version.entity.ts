import {
  Column,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { Audited } from '@gatehouse/db';
import { Tree } from '../trees/tree.entity.js';

@Entity({ name: 'tree_versions' })
@Unique('uq_tree_versions_version', ['treeId', 'version'])
export class TreeVersion extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_tree_versions' })
  id: string;

  @Column('uuid', { name: 'tree_id' })
  treeId: string;

  @ManyToOne(() => Tree, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'tree_id', foreignKeyConstraintName: 'fk_tree_versions_tree' })
  tree?: Relation<Tree>;

  @Column('text')
  version: string;

  @Column('text', { nullable: true })
  name: string | null;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('jsonb', { default: () => "'{}'" })
  metadata: Record<string, unknown>;

  @Column('boolean', { default: true })
  enabled: boolean;

  /** Last node label handed out in this version (labels are never reused). */
  @Column('integer', { name: 'next_label', default: 0 })
  nextLabel: number;

  /** Number of nodes, kept by every structural write (under the version row lock). */
  @Column('integer', { name: 'node_count', default: 0 })
  nodeCount: number;
}
