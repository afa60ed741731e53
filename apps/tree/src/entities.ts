/** Every TypeORM entity of apps/tree (the drift test compares them with the migrations). */
export const treeEntities = [];
