import { TreeNode } from './nodes/tree-node.entity.js';
import { TreeSettings } from './settings/settings.entity.js';
import {
  TreeNodeTranslation,
  TreeTranslation,
  TreeVersionTranslation,
} from './translations/translation.entity.js';
import { Tree } from './trees/tree.entity.js';
import { TreeVersion } from './versions/tree-version.entity.js';

/** Every TypeORM entity of apps/tree (the drift test compares them with the migrations). */
export const treeEntities = [
  Tree,
  TreeVersion,
  TreeNode,
  TreeTranslation,
  TreeVersionTranslation,
  TreeNodeTranslation,
  TreeSettings,
];
