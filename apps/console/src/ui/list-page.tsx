import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useEffect, useId, useState, type ReactNode } from 'react';
import { unwrap } from '../lib/api';
import { listQuery, nextSort, pageRange, type ListState } from '../lib/list';
import type { Group } from '../lib/scopes';
import { useApp, useGrants, useT } from './app-context';
import { ErrorBox, Loading } from './kit';

export type Row = Record<string, unknown> & { id: string };

export interface Column {
  field: string;
  label: string;
  sortable?: boolean;
  render?(row: Row): ReactNode;
}

export interface Envelope {
  items: Row[];
  count: number;
  total_count?: number;
  has_more: boolean;
  offset: number;
  limit: number;
}

/**
 * A list of the management API: search (`q`, ilike over `searchFields`), sort by a column header (whitelisted
 * attributes), paging with the total, and a fields picker (`fields`: only the chosen columns are asked for).
 */
export function ListTable({
  group,
  path,
  columns,
  searchFields,
  defaultFields,
  rowLink,
  caption,
  service = 'identity',
}: {
  group: Group | 'trees';
  service?: 'identity' | 'tree';
  path: string;
  columns: Column[];
  searchFields: string[];
  defaultFields: string[];
  rowLink(row: Row): { to: string; params: Record<string, string> };
  caption: string;
}) {
  const t = useT();
  const { api } = useApp();
  const grants = useGrants();
  const searchId = useId();
  const [state, setState] = useState<ListState>({ search: '', offset: 0, limit: 10, fields: defaultFields });
  const [typed, setTyped] = useState('');
  // search as one types, once typing pauses
  useEffect(() => {
    const h = setTimeout(
      () => setState((s) => (s.search === typed ? s : { ...s, search: typed, offset: 0 })),
      250,
    );
    return () => clearTimeout(h);
  }, [typed]);
  const query = useQuery({
    queryKey: [service, path, state],
    queryFn: async () =>
      unwrap(
        await (api[service] as typeof api.identity).GET(
          path as never,
          { params: { query: listQuery(state, searchFields) } } as never,
        ),
      ) as Envelope,
    placeholderData: keepPreviousData,
    enabled: grants.read(group),
  });
  const shown = columns.filter((c) => state.fields.includes(c.field));
  const data = query.data;
  const range = data ? pageRange(data.offset, data.count, data.total_count) : undefined;
  const [first] = shown;
  return (
    <div className="list">
      <div className="list-tools">
        <div className="search">
          <label htmlFor={searchId}>{t('search')}</label>
          <input id={searchId} type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
        </div>
        <details className="fields-picker">
          <summary>{t('columns')}</summary>
          <fieldset>
            <legend className="visually-hidden">{t('columns')}</legend>
            {columns.map((c) => (
              <label key={c.field} className="check">
                <input
                  type="checkbox"
                  checked={state.fields.includes(c.field)}
                  disabled={c.field === columns[0]?.field}
                  onChange={(e) =>
                    setState((s) => ({
                      ...s,
                      fields: e.target.checked
                        ? columns.map((x) => x.field).filter((f) => f === c.field || s.fields.includes(f))
                        : s.fields.filter((f) => f !== c.field),
                    }))
                  }
                />
                {c.label}
              </label>
            ))}
          </fieldset>
        </details>
      </div>
      {query.error ? <ErrorBox error={query.error} scope={`${group}:read`} /> : null}
      {query.isPending && grants.read(group) ? <Loading /> : null}
      {data ? (
        <>
          <table>
            <caption className="visually-hidden">{caption}</caption>
            <thead>
              <tr>
                {shown.map((c) => {
                  const sorted = state.sort?.field === c.field ? state.sort.dir : undefined;
                  return (
                    <th
                      key={c.field}
                      scope="col"
                      aria-sort={
                        sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : undefined
                      }
                    >
                      {c.sortable ? (
                        <button
                          type="button"
                          className="sort"
                          onClick={() =>
                            setState((s) => ({ ...s, sort: nextSort(s.sort, c.field), offset: 0 }))
                          }
                        >
                          {c.label}
                          <span aria-hidden="true">
                            {sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}
                          </span>
                        </button>
                      ) : (
                        c.label
                      )}
                    </th>
                  );
                })}
              </tr>
            </thead>
            <tbody>
              {data.items.map((row) => (
                <tr key={row.id}>
                  {shown.map((c) => (
                    <td key={c.field}>
                      {c === first ? (
                        <Link {...rowLink(row)}>
                          {c.render ? c.render(row) : String(row[c.field] ?? row.id)}
                        </Link>
                      ) : c.render ? (
                        c.render(row)
                      ) : (
                        String(row[c.field] ?? '')
                      )}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          {data.items.length === 0 ? <p>{t('none')}</p> : null}
          <nav className="pager" aria-label={caption}>
            <button
              type="button"
              className="secondary"
              disabled={state.offset === 0}
              onClick={() => setState((s) => ({ ...s, offset: Math.max(0, s.offset - s.limit) }))}
            >
              {t('previous')}
            </button>
            <span aria-live="polite">
              {range ? t('pageOf', { from: range.from, to: range.to, total: range.total ?? '?' }) : ''}
            </span>
            <button
              type="button"
              className="secondary"
              disabled={!data.has_more}
              onClick={() => setState((s) => ({ ...s, offset: s.offset + s.limit }))}
            >
              {t('next')}
            </button>
          </nav>
        </>
      ) : null}
    </div>
  );
}
