/** The state of a list page (search, sort, paging, chosen columns) and the list query it makes. */
export interface ListState {
  search: string;
  sort?: { field: string; dir: 'asc' | 'desc' };
  offset: number;
  limit: number;
  /** Columns shown (the `fields` asked for, with `id` always). */
  fields: string[];
}

/** A string literal of the `q` grammar ('' escapes a quote). */
export const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** A `q` clause finding `text` (case-insensitive, anywhere) in any of `fields`; undefined for no text. */
export function searchClause(fields: readonly string[], text: string): string | undefined {
  const t = text.trim();
  if (!t || !fields.length) return undefined;
  const pattern = literal(`%${t}%`);
  return fields.map((f) => `${f} ilike ${pattern}`).join(' or ');
}

/** The query parameters of a list operation for `state`. */
export function listQuery(
  state: ListState,
  searchFields: readonly string[],
): { q?: string; sort?: string; offset: number; limit: number; total_count: true; fields?: string } {
  const q = searchClause(searchFields, state.search);
  const fields = [...new Set(['id', ...state.fields])];
  return {
    ...(q ? { q } : {}),
    ...(state.sort ? { sort: `${state.sort.field}:${state.sort.dir}` } : {}),
    offset: state.offset,
    limit: state.limit,
    total_count: true,
    ...(state.fields.length ? { fields: fields.join(',') } : {}),
  };
}

/** The next sort when a column header is pressed: ascending, descending, then none. */
export function nextSort(current: ListState['sort'], field: string): ListState['sort'] {
  if (current?.field !== field) return { field, dir: 'asc' };
  return current.dir === 'asc' ? { field, dir: 'desc' } : undefined;
}

/** "21-30 of 95" numbers of a page; `total` may be unknown. */
export function pageRange(
  offset: number,
  count: number,
  total?: number,
): { from: number; to: number; total?: number } {
  return { from: count ? offset + 1 : 0, to: offset + count, total };
}
