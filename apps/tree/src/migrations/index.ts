import { TreeSchema1790000100000 } from './1790000100000-tree-schema.js';
import { TreeCreateNode1790000200000 } from './1790000200000-tree-create-node.js';

/** Every migration of apps/tree, in order. */
export const treeMigrations = [TreeSchema1790000100000, TreeCreateNode1790000200000];
