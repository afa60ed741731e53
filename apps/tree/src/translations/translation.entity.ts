import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { Audited } from '@gatehouse/db';
import { Tree } from '../trees/tree.entity.js';
import { TreeVersion } from '../versions/tree-version.entity.js';

const LANGUAGE_CHECK = `language IN ('en_US', 'en_UK', 'mn_MN')`;

abstract class TranslationColumns extends Audited {
  @Column('text')
  language: string;

  @Column('text', { nullable: true })
  name: string | null;

  @Column('text', { nullable: true })
  description: string | null;
}

@Entity({ name: 'tree_translations' })
@Unique('uq_tree_translations_language', ['treeId', 'language'])
@Check('ck_tree_translations_language', LANGUAGE_CHECK)
export class TreeTranslation extends TranslationColumns {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_tree_translations' })
  id: string;

  @Column('uuid', { name: 'tree_id' })
  treeId: string;

  @ManyToOne(() => Tree, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'tree_id', foreignKeyConstraintName: 'fk_tree_translations_tree' })
  tree?: Relation<Tree>;
}

@Entity({ name: 'tree_version_translations' })
@Unique('uq_tree_version_translations_language', ['treeVersionId', 'language'])
@Check('ck_tree_version_translations_language', LANGUAGE_CHECK)
export class TreeVersionTranslation extends TranslationColumns {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_tree_version_translations' })
  id: string;

  @Column('uuid', { name: 'tree_version_id' })
  treeVersionId: string;

  @ManyToOne(() => TreeVersion, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'tree_version_id', foreignKeyConstraintName: 'fk_tree_version_translations_version' })
  treeVersion?: Relation<TreeVersion>;
}

/** No foreign key to tree_nodes (see the migration): deleted set-based with their nodes. */
@Entity({ name: 'tree_node_translations' })
@Unique('uq_tree_node_translations_language', ['treeNodeId', 'language'])
@Check('ck_tree_node_translations_language', LANGUAGE_CHECK)
@Index('ix_tree_node_translations_version', ['treeVersionId'])
export class TreeNodeTranslation extends TranslationColumns {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_tree_node_translations' })
  id: string;

  @Column('uuid', { name: 'tree_version_id' })
  treeVersionId: string;

  @Column('uuid', { name: 'tree_node_id' })
  treeNodeId: string;
}
