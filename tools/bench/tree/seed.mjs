// The tree benchmarks' generated version: FANOUT children a node down to level DEPTH (10 and 6: 1,111,111 nodes),
// written by one INSERT ... SELECT straight into tree_nodes (minutes through the API, about a minute this way).
// Used by tools/bench/tree/run.mjs and tools/bench/console/tree-view.mjs.

/** Nodes of a generated version: the sum of fanout^d for d = 0..depth. */
export const totalNodes = (fanout, depth) =>
  Array.from({ length: depth + 1 }, (_, d) => fanout ** d).reduce((a, b) => a + b, 0);

/** Label of the first node of level `d` (level-order labels, the root is 1). */
export const firstLabel = (fanout, d) => (fanout ** d - 1) / (fanout - 1) + 1;

/**
 * Replaces the nodes of `version` (an API answer: `id`, `tree_id`) by the generated tree. Node i of level d has the
 * label first(d) + i, code `N<label>`, name `Node <label>`, id tree_node_id(version, label). `q` runs SQL on the tree
 * database. Answers the milliseconds the INSERT took.
 * @param {(text: string, params?: unknown[]) => Promise<unknown>} q
 * @param {{ id: string; tree_id: string }} version
 * @param {number} fanout
 * @param {number} depth
 */
export async function seedGeneratedVersion(q, version, fanout, depth) {
  const total = totalNodes(fanout, depth);
  // The generated tree has its own root (label 1): it takes the place of the root the version was created with.
  await q(`DELETE FROM tree_nodes WHERE tree_version_id = $1`, [version.id]);
  const t0 = performance.now();
  await q(
    `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, depth, leaf, parent_id, path)
     SELECT tree_node_id($1::uuid, g.label::int), $2, $1, 'N' || g.label, 'Node ' || g.label, NULL, g.d, g.d = $4,
            CASE WHEN g.d = 0 THEN NULL ELSE tree_path_node_id($1::uuid, substring(g.path for 4 * g.d)) END, g.path
       FROM (SELECT lv.d, (lv.first + i)::int AS label,
                    (SELECT string_agg(int4send(((power($3::numeric, k) - 1) / ($3 - 1))::int + 1
                                                + (i / power($3::numeric, lv.d - k)::bigint)::int), ''::bytea ORDER BY k)
                       FROM generate_series(0, lv.d) k) AS path
               FROM (SELECT d, ((power($3::numeric, d) - 1) / ($3 - 1))::int + 1 AS first, power($3::numeric, d)::bigint AS size
                       FROM generate_series(0, $4) d) lv,
                    generate_series(0, lv.size - 1) i) g
      ORDER BY g.path`,
    [version.id, version.tree_id, fanout, depth],
  );
  const ms = performance.now() - t0;
  await q(`UPDATE tree_versions SET next_label = $2, node_count = $2 WHERE id = $1`, [version.id, total]);
  return ms;
}
