import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every tree version contains at least one root node (document 3). From now on a version is created with one
 * (versions.service / trees.service: createRootNode); this gives one to each version stored empty before, built the
 * same way: the tree's code, name and description, the tree's translations as the node's, the version's next label.
 * `created_by` stays null: no user made it. Versions that have nodes already have a root (every node reaches one).
 */
export class TreeVersionRoots1790000600000 implements MigrationInterface {
  name = 'TreeVersionRoots1790000600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      WITH empty AS (
        SELECT v.id, v.tree_id, v.next_label + 1 AS label FROM tree_versions v
         WHERE v.next_label < 2147483646 AND to_regclass(tree_nodes_partition(v.id)) IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM tree_nodes n WHERE n.tree_version_id = v.id)),
      bumped AS (
        UPDATE tree_versions v SET next_label = e.label, node_count = 1 FROM empty e WHERE v.id = e.id),
      roots AS (
        INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf,
                                parent_id, path)
        SELECT tree_node_id(e.id, e.label), t.id, e.id, t.code, t.name, t.description, '{}', 0, true, NULL,
               int4send(e.label)
          FROM empty e JOIN trees t ON t.id = e.tree_id
        RETURNING id, tree_id, tree_version_id)
      INSERT INTO tree_node_translations (tree_version_id, tree_node_id, language, name, description)
      SELECT r.tree_version_id, r.id, tr.language, tr.name, tr.description
        FROM roots r JOIN tree_translations tr ON tr.tree_id = r.tree_id`);
  }

  /**
   * Keeps the roots: by now they are ordinary nodes (renamed, with children), and the schema before this
   * migration holds them as well.
   */
  down(): Promise<void> {
    return Promise.resolve();
  }
}
