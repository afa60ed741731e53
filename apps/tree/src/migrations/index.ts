import { TreeSchema1790000100000 } from './1790000100000-tree-schema.js';

/** Every migration of apps/tree, in order. */
export const treeMigrations = [TreeSchema1790000100000];
