import { TreeSchema1790000100000 } from './1790000100000-tree-schema.js';
import { TreeCreateNode1790000200000 } from './1790000200000-tree-create-node.js';
import { TreeNodePartitions1790000300000 } from './1790000300000-tree-node-partitions.js';
import { TreeNodeBytePaths1790000400000 } from './1790000400000-tree-node-byte-paths.js';
import { TreeInstances1790000500000 } from './1790000500000-tree-instances.js';
import { TreeVersionRoots1790000600000 } from './1790000600000-tree-version-roots.js';
import { TreeNodeLocalIndexes1790000700000 } from './1790000700000-tree-node-local-indexes.js';

/** Every migration of apps/tree, in order. */
export const treeMigrations = [
  TreeSchema1790000100000,
  TreeCreateNode1790000200000,
  TreeNodePartitions1790000300000,
  TreeNodeBytePaths1790000400000,
  TreeInstances1790000500000,
  TreeVersionRoots1790000600000,
  TreeNodeLocalIndexes1790000700000,
];
