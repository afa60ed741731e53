import { Check, Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';
import { Audited } from '../common/audit.entity.js';

/**
 * A node: adjacency list (`parent_id`) plus materialized path of version-local integer labels (see the
 * migration). No foreign keys and no TypeORM tree entity: the service writes nodes set-based in SQL.
 */
@Entity({ name: 'tree_nodes' })
@Unique('uq_tree_nodes_code', ['treeVersionId', 'code'])
@Unique('uq_tree_nodes_path', ['treeVersionId', 'path'])
@Check('ck_tree_nodes_depth', 'depth >= 0 AND depth = cardinality(path) - 1')
@Index('ix_tree_nodes_parent', ['parentId'])
@Index('ix_tree_nodes_depth', ['treeVersionId', 'depth'])
export class TreeNode extends Audited {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'pk_tree_nodes' })
  id: string;

  @Column('uuid', { name: 'tree_id' })
  treeId: string;

  @Column('uuid', { name: 'tree_version_id' })
  treeVersionId: string;

  @Column('text')
  code: string;

  @Column('text')
  name: string;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('jsonb', { default: () => "'{}'" })
  metadata: Record<string, unknown>;

  @Column('integer')
  depth: number;

  @Column('boolean', { default: true })
  leaf: boolean;

  @Column('uuid', { name: 'parent_id', nullable: true })
  parentId: string | null;

  @Column('integer', { array: true })
  path: number[];

  @Column('boolean', { default: true })
  enabled: boolean;
}
