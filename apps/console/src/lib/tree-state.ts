/**
 * The node tree of one tree version as the console holds it: only the levels it has fetched (children of a node,
 * page by page), which of them are expanded, and which row has the keyboard focus. Pure functions over plain
 * objects: the page keeps one `TreeState` in React state; tests drive these functions directly.
 *
 * A level is keyed by its parent's id, the roots by `ROOT`. The rows shown are the roots and, under every expanded
 * node whose level is loaded, its children: WAI-ARIA tree view rows with aria-level, aria-posinset, aria-setsize.
 */
export const ROOT = '';

export interface TreeNodeInfo {
  id: string;
  code: string;
  name: string;
  leaf: boolean;
  parentId: string | null;
}

export interface Level {
  ids: string[];
  /** All children of the parent (total_count), when known. */
  total?: number;
  hasMore: boolean;
}

export interface TreeState {
  nodes: Record<string, TreeNodeInfo>;
  levels: Record<string, Level>;
  expanded: Record<string, boolean>;
  /** Levels being fetched (a first page or the next one). */
  loading: Record<string, boolean>;
  /** The row with tabindex 0 (a node id, or `more:<parent>` for a level's "load more" row). */
  focus?: string;
}

export type TreeRow =
  | {
      kind: 'node';
      key: string;
      id: string;
      node: TreeNodeInfo;
      level: number;
      posinset: number;
      setsize: number;
      expanded: boolean;
      loading: boolean;
    }
  | { kind: 'more'; key: string; parent: string; level: number; left?: number; loading: boolean };

export const emptyTree = (): TreeState => ({ nodes: {}, levels: {}, expanded: {}, loading: {} });

export const moreKey = (parent: string) => `more:${parent}`;

/** A page of a level arrived: the first page replaces the level, a later one is appended. */
export function addLevel(
  s: TreeState,
  parent: string,
  items: TreeNodeInfo[],
  page: { offset: number; hasMore: boolean; total?: number },
): TreeState {
  const nodes = { ...s.nodes };
  for (const n of items) nodes[n.id] = n;
  const before = page.offset > 0 ? (s.levels[parent]?.ids ?? []) : [];
  const seen = new Set(before);
  const ids = [...before, ...items.map((n) => n.id).filter((id) => !seen.has(id))];
  const levels = { ...s.levels, [parent]: { ids, hasMore: page.hasMore, total: page.total } };
  // a parent whose level came back empty is a leaf now (its last child went elsewhere)
  if (parent !== ROOT && nodes[parent] && page.offset === 0) {
    nodes[parent] = { ...nodes[parent], leaf: ids.length === 0 };
  }
  const loading = { ...s.loading };
  delete loading[parent];
  const focus = s.focus ?? ids[0];
  // a version with one root (the usual case) shows its first level at once
  const expanded =
    parent === ROOT && page.offset === 0 && ids.length === 1 && !nodes[ids[0]].leaf && !s.levels[ROOT]
      ? { ...s.expanded, [ids[0]]: true }
      : s.expanded;
  return { ...s, nodes, levels, loading, focus, expanded };
}

export function setLoading(s: TreeState, parent: string, on: boolean): TreeState {
  const loading = { ...s.loading };
  if (on) loading[parent] = true;
  else delete loading[parent];
  return { ...s, loading };
}

export function setExpanded(s: TreeState, id: string, on: boolean): TreeState {
  const expanded = { ...s.expanded };
  if (on) expanded[id] = true;
  else delete expanded[id];
  return { ...s, expanded };
}

/** Whether a node's children must be fetched before it can show them expanded. */
export const needsLevel = (s: TreeState, id: string): boolean =>
  !s.nodes[id]?.leaf && !s.levels[id] && !s.loading[id];

/** The rows on screen, in order. */
export function visibleRows(s: TreeState): TreeRow[] {
  const rows: TreeRow[] = [];
  const walk = (parent: string, level: number) => {
    const lv = s.levels[parent];
    if (!lv) return;
    const setsize = Math.max(lv.total ?? lv.ids.length, lv.ids.length);
    lv.ids.forEach((id, i) => {
      const node = s.nodes[id];
      if (!node) return;
      const expanded = !!s.expanded[id] && !node.leaf;
      rows.push({
        kind: 'node',
        key: id,
        id,
        node,
        level,
        posinset: i + 1,
        setsize,
        expanded,
        loading: !!s.loading[id],
      });
      if (expanded) walk(id, level + 1);
    });
    if (lv.hasMore) {
      rows.push({
        kind: 'more',
        key: moreKey(parent),
        parent,
        level,
        left: lv.total !== undefined ? lv.total - lv.ids.length : undefined,
        loading: !!s.loading[parent],
      });
    }
  };
  walk(ROOT, 1);
  return rows;
}

/** What a key press on the focused row asks for (WAI-ARIA tree view keyboard interaction). */
export type TreeAction =
  | { type: 'focus'; key: string }
  | { type: 'expand'; id: string }
  | { type: 'collapse'; id: string }
  | { type: 'select'; id: string }
  | { type: 'more'; parent: string }
  | { type: 'none' };

export function keyAction(s: TreeState, rows: TreeRow[], key: string): TreeAction {
  const i = rows.findIndex((r) => r.key === s.focus);
  if (i < 0) return rows.length ? { type: 'focus', key: rows[0].key } : { type: 'none' };
  const row = rows[i];
  const parentRow = (): TreeAction => {
    const parent = row.kind === 'node' ? row.node.parentId : row.parent || null;
    return parent && rows.some((r) => r.key === parent) ? { type: 'focus', key: parent } : { type: 'none' };
  };
  switch (key) {
    case 'ArrowDown':
      return i + 1 < rows.length ? { type: 'focus', key: rows[i + 1].key } : { type: 'none' };
    case 'ArrowUp':
      return i > 0 ? { type: 'focus', key: rows[i - 1].key } : { type: 'none' };
    case 'Home':
      return { type: 'focus', key: rows[0].key };
    case 'End':
      return { type: 'focus', key: rows[rows.length - 1].key };
    case 'ArrowRight':
      if (row.kind !== 'node' || row.node.leaf) return { type: 'none' };
      if (!row.expanded) return { type: 'expand', id: row.id };
      return i + 1 < rows.length && rows[i + 1].level > row.level
        ? { type: 'focus', key: rows[i + 1].key }
        : { type: 'none' };
    case 'ArrowLeft':
      if (row.kind === 'node' && row.expanded) return { type: 'collapse', id: row.id };
      return parentRow();
    case 'Enter':
    case ' ':
      return row.kind === 'more' ? { type: 'more', parent: row.parent } : { type: 'select', id: row.id };
    default:
      return { type: 'none' };
  }
}

/**
 * Opens the way to a deep node: `ancestors` root first (the node's own id last is allowed), each level already
 * added with addLevel. Every ancestor is expanded; the focus goes to the last id.
 */
export function openPath(s: TreeState, path: string[]): TreeState {
  let next = s;
  path.slice(0, -1).forEach((id) => (next = setExpanded(next, id, true)));
  return path.length ? { ...next, focus: path[path.length - 1] } : next;
}

/** The ids from the root down to `id` (inclusive), as far as the loaded nodes know them. */
export function pathTo(s: TreeState, id: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (let cur: string | null = id; cur && s.nodes[cur] && !seen.has(cur); cur = s.nodes[cur].parentId) {
    seen.add(cur);
    out.unshift(cur);
  }
  return out;
}

/** Forget fetched levels (after a write changed them): they are fetched again when shown. */
export function dropLevels(s: TreeState, parents: (string | null)[]): TreeState {
  const levels = { ...s.levels };
  for (const p of parents) delete levels[p ?? ROOT];
  return { ...s, levels };
}

/** A node was renamed or changed: its new name and code, in place. */
export function updateNode(s: TreeState, id: string, patch: Partial<TreeNodeInfo>): TreeState {
  const n = s.nodes[id];
  if (!n) return s;
  return { ...s, nodes: { ...s.nodes, [id]: { ...n, ...patch } } };
}

/** A node (and so its subtree) was deleted: out of its parent's level; the parent may become a leaf. */
export function removeNode(s: TreeState, id: string): TreeState {
  const n = s.nodes[id];
  if (!n) return s;
  const key = n.parentId ?? ROOT;
  const lv = s.levels[key];
  const nodes = { ...s.nodes };
  delete nodes[id];
  const levels = { ...s.levels };
  delete levels[id];
  if (lv) {
    const ids = lv.ids.filter((x) => x !== id);
    levels[key] = { ...lv, ids, total: lv.total !== undefined ? lv.total - 1 : undefined };
    if (n.parentId && nodes[n.parentId] && ids.length === 0 && !lv.hasMore) {
      nodes[n.parentId] = { ...nodes[n.parentId], leaf: true };
    }
  }
  const rows = visibleRows(s);
  const at = rows.findIndex((r) => r.key === id);
  const focus = s.focus === id ? (n.parentId ?? rows[at - 1]?.key ?? rows[at + 1]?.key) : s.focus;
  return { ...s, nodes, levels, focus };
}

/**
 * A node moved under `newParent` (null: a root): both levels are fetched again, the new parent is no leaf any more
 * and is expanded, so the moved node shows in its new place.
 */
export function moveNode(s: TreeState, id: string, newParent: string | null): TreeState {
  const n = s.nodes[id];
  if (!n) return s;
  let next = dropLevels(s, [n.parentId, newParent]);
  next = updateNode(next, id, { parentId: newParent });
  if (newParent) {
    next = updateNode(next, newParent, { leaf: false });
    next = setExpanded(next, newParent, true);
  }
  return { ...next, focus: id };
}

/** A child was created under `parent` (null: a root): the level is fetched again and the parent expanded. */
export function childAdded(s: TreeState, parent: string | null): TreeState {
  let next = dropLevels(s, [parent]);
  if (parent) {
    next = updateNode(next, parent, { leaf: false });
    next = setExpanded(next, parent, true);
  }
  return next;
}

/** The levels that are shown (expanded, or the roots) but not fetched yet: what the page fetches next. */
export function missingLevels(s: TreeState): string[] {
  const out: string[] = [];
  const walk = (parent: string) => {
    const lv = s.levels[parent];
    if (!lv) {
      if (!s.loading[parent]) out.push(parent);
      return;
    }
    for (const id of lv.ids) if (s.expanded[id] && s.nodes[id] && !s.nodes[id].leaf) walk(id);
  };
  walk(ROOT);
  return out;
}
