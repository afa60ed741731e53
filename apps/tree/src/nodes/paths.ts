/**
 * Node paths as stored in `tree_nodes.path` (`bytea`, migration 1790000400000): the version-local labels of the
 * node's ancestors and of the node itself, root first, each as 4 bytes big-endian. Labels are positive and below
 * 2^31, so comparing paths byte by byte compares their labels one by one: `ORDER BY path` is the depth-first walk
 * and a subtree is a contiguous range.
 */
export type NodePath = Buffer;

/** Bytes per label. */
export const LABEL_BYTES = 4;

/** The path of the given labels (root first). */
export function encodePath(labels: readonly number[]): NodePath {
  const b = Buffer.allocUnsafe(labels.length * LABEL_BYTES);
  labels.forEach((label, i) => b.writeInt32BE(label, i * LABEL_BYTES));
  return b;
}

/** The labels of a path, root first. */
export function decodePath(path: NodePath): number[] {
  const labels: number[] = [];
  for (let i = 0; i < path.length; i += LABEL_BYTES) labels.push(path.readInt32BE(i));
  return labels;
}

/** Number of labels of a path: the node's depth + 1. */
export function pathLength(path: NodePath): number {
  return path.length / LABEL_BYTES;
}

/** The path extended by one label. */
export function childPath(path: NodePath, label: number): NodePath {
  const b = Buffer.allocUnsafe(path.length + LABEL_BYTES);
  path.copy(b);
  b.writeInt32BE(label, path.length);
  return b;
}

/** The first path after every path of the subtree rooted at `path` (exclusive upper bound): last label + 1. */
export function subtreeEnd(path: NodePath): NodePath {
  const end = Buffer.from(path);
  const last = end.length - LABEL_BYTES;
  end.writeInt32BE(end.readInt32BE(last) + 1, last);
  return end;
}

/** True when `path` is `root` itself or lies below it. */
export function isInSubtree(path: NodePath, root: NodePath): boolean {
  return path.length >= root.length && path.subarray(0, root.length).equals(root);
}
