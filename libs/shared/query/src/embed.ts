/*
 * Batched child embedding (`expand=all`): a page's children of one kind come from one statement for all its
 * parents; these helpers hand each parent its own, in the statement's order, in one pass over the rows.
 */

/**
 * The children in `rows` by their parent's id, in row order, each turned into its record by `toRecord` (once per
 * row). With `parents`, every one of those ids has an entry (empty when it has no children).
 */
export function groupByParent<R, T = R>(
  rows: readonly R[],
  parentOf: (row: R) => string,
  toRecord?: (row: R) => T,
  parents?: Iterable<string>,
): Map<string, T[]> {
  const out = new Map<string, T[]>();
  if (parents) for (const id of parents) out.set(id, []);
  for (const row of rows) {
    const key = parentOf(row);
    const record = toRecord ? toRecord(row) : (row as unknown as T);
    const list = out.get(key);
    if (list) list.push(record);
    else out.set(key, [record]);
  }
  return out;
}

/** Sets `field` of each parent record to its children in `groups` (an empty list when it has none). */
export function embedChildren<P extends { id: string }, K extends keyof P>(
  parents: readonly P[],
  field: K,
  groups: ReadonlyMap<string, NonNullable<P[K]> & readonly unknown[]>,
): void {
  for (const parent of parents) parent[field] = (groups.get(parent.id) ?? []) as P[K];
}
