import type { Sql } from '@gatehouse/db';

export interface TreeProblems {
  /** Nodes whose parent_id, path and depth disagree (parent missing, in another version, path not parent's + own label). */
  badParent: string[];
  /** Nodes whose depth differs from the number of parent_id steps to a root, or that never reach one (a cycle). */
  badDepth: string[];
  /** Nodes whose leaf flag is wrong. */
  badLeaf: string[];
  /** Nodes whose id is not tree_node_id(version, own label). */
  badId: string[];
  /** node_count of the version minus the actual number of nodes. */
  countDrift: number;
}

/**
 * Checks a version's tree by two independent routes: the stored paths, and a walk up parent_id (a recursive CTE
 * bounded at 10,000 steps, so a cycle shows up as a node that never reaches a root).
 */
export async function treeProblems(ds: Sql, versionId: string): Promise<TreeProblems> {
  const ids = async (sql: string) => ((await ds.rows(sql, [versionId])) as { id: string }[]).map((r) => r.id);
  const badParent = await ids(
    `SELECT n.id FROM tree_nodes n LEFT JOIN tree_nodes p ON p.id = n.parent_id
      WHERE n.tree_version_id = $1
        AND (   (n.parent_id IS NULL) <> (length(n.path) = 4)
             OR (n.parent_id IS NOT NULL AND (p.id IS NULL OR p.tree_version_id <> n.tree_version_id
                                              OR p.path <> substring(n.path for length(n.path) - 4))))`,
  );
  const badDepth = await ids(
    `WITH RECURSIVE up AS (
       SELECT n.id AS start, n.parent_id AS at, 0 AS steps FROM tree_nodes n WHERE n.tree_version_id = $1
       UNION ALL
       SELECT up.start, p.parent_id, up.steps + 1 FROM up JOIN tree_nodes p ON p.id = up.at WHERE up.steps < 10000),
     reach AS (SELECT start, max(steps) FILTER (WHERE at IS NULL) AS depth FROM up GROUP BY start)
     SELECT n.id FROM tree_nodes n LEFT JOIN reach r ON r.start = n.id
      WHERE n.tree_version_id = $1 AND n.depth IS DISTINCT FROM r.depth`,
  );
  const badLeaf = await ids(
    `SELECT n.id FROM tree_nodes n WHERE n.tree_version_id = $1
        AND n.leaf <> NOT EXISTS (SELECT 1 FROM tree_nodes c WHERE c.parent_id = n.id)`,
  );
  const badId = await ids(
    `SELECT n.id FROM tree_nodes n WHERE n.tree_version_id = $1 AND n.id <> tree_node_id($1, (tree_path_labels(n.path))[length(n.path) / 4])`,
  );
  const [{ drift }] = (await ds.rows(
    `SELECT v.node_count - (SELECT count(*)::int FROM tree_nodes n WHERE n.tree_version_id = v.id) AS drift
       FROM tree_versions v WHERE v.id = $1`,
    [versionId],
  )) as { drift: number }[];
  return { badParent, badDepth, badLeaf, badId, countDrift: drift };
}

export const NO_PROBLEMS: TreeProblems = {
  badParent: [],
  badDepth: [],
  badLeaf: [],
  badId: [],
  countDrift: 0,
};
