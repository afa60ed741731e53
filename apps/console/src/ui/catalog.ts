import { useGet } from './hooks';

interface Named {
  id: string;
  [k: string]: unknown;
}

/** id → name of the first 100 records of a list (the pickers' choices; more: use the list page's search). */
export function useNames(path: string, nameField: string, enabled = true) {
  const q = useGet<{ items: Named[] }>(
    path,
    { query: { limit: 100, fields: `id,${nameField}`, sort: `${nameField}:asc` } },
    enabled,
  );
  const items = (q.data?.items ?? []).map((r) => ({ id: r.id, name: String(r[nameField] ?? r.id) }));
  return { items, name: (id: string) => items.find((i) => i.id === id)?.name ?? id, query: q };
}

export interface ScopeInfo {
  id: string;
  scope_name: string;
  resource_id: string;
  resource_name: string;
  identifier_url: string | null;
}

/** Every scope of the first 100 resources, by id (GET /resources?expand=all embeds their scopes). */
export function useScopeCatalog(enabled = true) {
  const q = useGet<{
    items: {
      id: string;
      resource_name: string;
      identifier_url?: string | null;
      resource_metadata?: { identifier_url?: string | null };
      scopes?: { id: string; scope_name: string }[];
    }[];
  }>('/api/v1/resources', { query: { limit: 100, expand: 'all' } }, enabled);
  const scopes: ScopeInfo[] = (q.data?.items ?? []).flatMap((r) =>
    (r.scopes ?? []).map((s) => ({
      id: s.id,
      scope_name: s.scope_name,
      resource_id: r.id,
      resource_name: r.resource_name,
      identifier_url: r.resource_metadata?.identifier_url ?? r.identifier_url ?? null,
    })),
  );
  return { scopes, byId: new Map(scopes.map((s) => [s.id, s])), query: q };
}
