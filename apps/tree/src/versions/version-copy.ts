import type { Sql } from '../common/sql.js';

/**
 * Copies every node of `sourceVersionId` (with node translations and the version's own translations) into the empty version `targetVersionId` of
 * tree `targetTreeId`. Labels and paths are copied verbatim (they are version-local), so ids and parent ids of the
 * copies are computed from them: two INSERT ... SELECT statements, no per-row work in the application. The caller
 * holds a share lock on the source version, so both statements see the same nodes.
 */
export async function copyVersionContent(
  sql: Sql,
  sourceVersionId: string,
  targetVersionId: string,
  targetTreeId: string,
  actorId: string | null,
): Promise<void> {
  await sql.exec(
    `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf, parent_id,
                             path, enabled, created_by, updated_by)
     SELECT tree_node_id($2, n.path[cardinality(n.path)]), $3, $2, n.code, n.name, n.description, n.metadata, n.depth,
            n.leaf, CASE WHEN n.parent_id IS NULL THEN NULL ELSE tree_node_id($2, n.path[cardinality(n.path) - 1]) END,
            n.path, n.enabled, $4, $4
       FROM tree_nodes n WHERE n.tree_version_id = $1`,
    [sourceVersionId, targetVersionId, targetTreeId, actorId],
  );
  await sql.exec(
    `INSERT INTO tree_node_translations (tree_version_id, tree_node_id, language, name, description, created_by, updated_by)
     SELECT $2, tree_node_id($2, n.path[cardinality(n.path)]), t.language, t.name, t.description, $3, $3
       FROM tree_node_translations t JOIN tree_nodes n ON n.id = t.tree_node_id
      WHERE t.tree_version_id = $1`,
    [sourceVersionId, targetVersionId, actorId],
  );
  await sql.exec(
    `INSERT INTO tree_version_translations (tree_version_id, language, name, description, created_by, updated_by)
     SELECT $2, t.language, t.name, t.description, $3, $3 FROM tree_version_translations t WHERE t.tree_version_id = $1`,
    [sourceVersionId, targetVersionId, actorId],
  );
}

/** Deletes the nodes and node translations of the given versions (set-based; they have no foreign keys). */
export async function deleteVersionNodes(sql: Sql, versionIds: string[]): Promise<void> {
  if (versionIds.length === 0) return;
  await sql.exec(`DELETE FROM tree_node_translations WHERE tree_version_id = ANY($1::uuid[])`, [versionIds]);
  await sql.exec(`DELETE FROM tree_nodes WHERE tree_version_id = ANY($1::uuid[])`, [versionIds]);
}
