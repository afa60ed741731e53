import { type Sql } from '@gatehouse/db';
import { allowBulkStatements } from '../common/tree-db.js';

/**
 * Creates the (empty) partition of tree_nodes for a new version (migration 1790000300000): every version has one
 * from its creation on, and a node of a version without one is refused.
 */
export async function createVersionPartition(sql: Sql, versionId: string): Promise<void> {
  await sql.exec(`SELECT tree_nodes_add_partition($1)`, [versionId]);
}

/**
 * Gives a new version its root node (document 3: every version contains at least one root node): code, name and
 * description of the tree as it is now, and the tree's translations as the node's, so the root reads in every
 * language as the tree does. It takes the version's first label. The version's partition must exist.
 */
export async function createRootNode(
  sql: Sql,
  versionId: string,
  treeId: string,
  actorId: string | null,
): Promise<void> {
  const label = (await sql.one<{ label: number }>(
    `UPDATE tree_versions SET next_label = next_label + 1, node_count = node_count + 1 WHERE id = $1
     RETURNING next_label AS label`,
    [versionId],
  ))!.label;
  await sql.exec(
    `WITH root AS (
       INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf,
                               parent_id, path, created_by, updated_by)
       SELECT tree_node_id($1, $3), t.id, $1, t.code, t.name, t.description, '{}', 0, true, NULL, int4send($3::int),
              $4, $4
         FROM trees t WHERE t.id = $2
       RETURNING id)
     INSERT INTO tree_node_translations (tree_version_id, tree_node_id, language, name, description, created_by,
                                         updated_by)
     SELECT $1, root.id, tr.language, tr.name, tr.description, $4, $4
       FROM root JOIN tree_translations tr ON tr.tree_id = $2`,
    [versionId, treeId, label, actorId],
  );
}

/**
 * Copies every node of `sourceVersionId` (with node translations and the version's own translations) into the new
 * version `targetVersionId` of tree `targetTreeId`, which has no partition yet. Labels and paths are copied verbatim
 * (they are version-local), so ids and parent ids of the copies are computed from them: `tree_nodes_copy_version`
 * fills the target's partition with one INSERT ... SELECT while it is a standalone table without indexes, builds
 * its indexes and attaches it (see the migration). The caller holds a share lock on the source version, so every
 * statement sees the same nodes.
 */
export async function copyVersionContent(
  sql: Sql,
  sourceVersionId: string,
  targetVersionId: string,
  targetTreeId: string,
  actorId: string | null,
): Promise<void> {
  await allowBulkStatements(sql);
  await sql.exec(`SELECT tree_nodes_copy_version($1, $2, $3, $4)`, [
    sourceVersionId,
    targetVersionId,
    targetTreeId,
    actorId,
  ]);
  await sql.exec(
    `INSERT INTO tree_node_translations (tree_version_id, tree_node_id, language, name, description, created_by, updated_by)
     SELECT $2, tree_path_node_id($2, n.path), t.language, t.name, t.description, $3, $3
       FROM tree_node_translations t JOIN tree_nodes n ON n.tree_version_id = $1 AND n.id = t.tree_node_id
      WHERE t.tree_version_id = $1`,
    [sourceVersionId, targetVersionId, actorId],
  );
  await sql.exec(
    `INSERT INTO tree_version_translations (tree_version_id, language, name, description, created_by, updated_by)
     SELECT $2, t.language, t.name, t.description, $3, $3 FROM tree_version_translations t WHERE t.tree_version_id = $1`,
    [sourceVersionId, targetVersionId, actorId],
  );
}

/**
 * Deletes the nodes and node translations of the given versions: the translations set-based, the nodes by dropping
 * each version's partition (this takes an ACCESS EXCLUSIVE lock on tree_nodes until the transaction ends).
 */
export async function deleteVersionNodes(sql: Sql, versionIds: string[]): Promise<void> {
  if (versionIds.length === 0) return;
  await sql.exec(`DELETE FROM tree_node_translations WHERE tree_version_id = ANY($1::uuid[])`, [versionIds]);
  await sql.exec(`SELECT tree_nodes_drop_partition(v) FROM unnest($1::uuid[]) v`, [versionIds]);
}
