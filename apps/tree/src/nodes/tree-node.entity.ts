import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { Audited } from '@gatehouse/db';

/**
 * A node: adjacency list (`parent_id`) plus materialized path of version-local integer labels (see the
 * migrations). No foreign keys and no TypeORM tree entity: the service writes nodes set-based in SQL.
 *
 * The table is partitioned by LIST (tree_version_id), one partition per version (migration 1790000300000).
 * TypeORM cannot express partitioning: this entity describes the partitioned parent (its columns, primary key,
 * CHECK and parent index, which every partition has too); the partitions themselves are created and dropped by the
 * service, each with its own unique index on `code`, index on `path` and index on `depth` (migration 1790000700000,
 * `tree_nodes_attach`). Nor can it express the index option `deduplicate_items = off` of ix_tree_nodes_parent (the
 * drift check does not compare index options).
 */
@Entity({ name: 'tree_nodes' })
@Check('ck_tree_nodes_depth', 'depth >= 0 AND length(path) = 4 * (depth + 1)')
@Index('ix_tree_nodes_parent', ['parentId'])
export class TreeNode extends Audited {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'pk_tree_nodes' })
  id: string;

  /** First column of the primary key `(tree_version_id, id)`: the partition key must be part of it. */
  @PrimaryColumn('uuid', { name: 'tree_version_id', primaryKeyConstraintName: 'pk_tree_nodes' })
  treeVersionId: string;

  @Column('uuid', { name: 'tree_id' })
  treeId: string;

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

  /** The labels root first, 4 bytes big-endian each (migration 1790000400000; `paths.ts`). */
  @Column('bytea')
  path: Buffer;

  @Column('boolean', { default: true })
  enabled: boolean;
}
