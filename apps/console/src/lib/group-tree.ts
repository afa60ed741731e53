/** Groups and their nesting drawn as a tree: each group under its parents (a group may have several). */
export interface GroupNode {
  id: string;
  name: string;
  children: GroupNode[];
}

/**
 * The forest of `groups` given `edges` (parent id, child id): roots are the groups no edge names as a child.
 * A group with two parents appears under both. A cycle (the API refuses one, but data may be read mid-change)
 * is cut where it would repeat a group already on the path.
 */
export function groupForest(
  groups: readonly { id: string; name: string }[],
  edges: readonly { parent: string; child: string }[],
): GroupNode[] {
  const byId = new Map(groups.map((g) => [g.id, g]));
  const children = new Map<string, string[]>();
  const hasParent = new Set<string>();
  for (const e of edges) {
    if (!byId.has(e.parent) || !byId.has(e.child)) continue;
    children.set(e.parent, [...(children.get(e.parent) ?? []), e.child]);
    hasParent.add(e.child);
  }
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  const build = (id: string, path: Set<string>): GroupNode => {
    const next = new Set(path).add(id);
    return {
      id,
      name: byId.get(id)?.name ?? id,
      children: (children.get(id) ?? [])
        .filter((c) => !next.has(c))
        .map((c) => build(c, next))
        .sort(byName),
    };
  };
  return groups
    .filter((g) => !hasParent.has(g.id))
    .map((g) => build(g.id, new Set()))
    .sort(byName);
}
