import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { toInfo, type Page, type TreeApi, type TreeNode } from '../../lib/tree-api';
import {
  csvRecordCount,
  exportFileName,
  idleProgress,
  percent,
  uploadProgress,
  type ImportProgress,
} from '../../lib/tree-csv';
import {
  addLevel,
  childAdded,
  emptyTree,
  missingLevels,
  moveNode,
  openPath,
  pathTo,
  removeNode,
  ROOT,
  setLoading,
  updateNode,
  type TreeNodeInfo,
  type TreeState,
} from '../../lib/tree-state';
import { useGrants, useT } from '../../ui/app-context';
import { ErrorBox, Loading, Notice, PageHeader } from '../../ui/kit';
import { BackLink, Guard } from '../common';
import { TREE_KEY, useTreeApi, useTreeRefresh } from './common';
import { NodePanel } from './node-panel';
import { NodeTree } from './node-tree';

/** Fetches one page of a level into the state. */
async function fetchLevel(
  api: TreeApi,
  code: string,
  version: string,
  parent: string,
  offset: number,
  setState: (f: (s: TreeState) => TreeState) => void,
  onError: (err: unknown) => void,
) {
  setState((s) => setLoading(s, parent, true));
  try {
    const page = await api.level(code, version, parent, offset);
    setState((s) =>
      addLevel(s, parent, page.items.map(toInfo), {
        offset,
        hasMore: page.has_more,
        total: page.total_count ?? s.levels[parent]?.total,
      }),
    );
  } catch (err) {
    setState((s) => setLoading(s, parent, false));
    onError(err);
  }
}

/**
 * /trees/$code/versions/$version: the version's node tree, fetched a level at a time as nodes are expanded; the
 * selected node (`?node=<id>`, also a link to a deep node: only its ancestors' levels are fetched) in the panel
 * beside it; a search that opens the way to a node; CSV import with progress and export.
 */
export function VersionPage() {
  const t = useT();
  const grants = useGrants();
  const api = useTreeApi();
  const refresh = useTreeRefresh();
  const navigate = useNavigate();
  const { code, version } = useParams({ strict: false }) as { code: string; version: string };
  const search = useSearch({ strict: false }) as { node?: string; path?: string };
  const selected = typeof search.node === 'string' ? search.node : undefined;
  // the ancestors of the selected node, root first, as the link names them (the console's own links do)
  const via = typeof search.path === 'string' ? search.path.split(',').filter(Boolean) : [];
  const viaKey = via.join(',');
  const v = useQuery({
    queryKey: [TREE_KEY, 'version', code, version],
    queryFn: () => api.version(code, version),
  });
  const [state, setState] = useState<TreeState>(emptyTree);
  const [treeError, setTreeError] = useState<unknown>();
  const [moveError, setMoveError] = useState<unknown>();
  const opening = useRef<string | undefined>(undefined);
  const [openTick, setOpenTick] = useState(0);
  const write = grants.write('trees');

  /** What the search already knows of a node it offered (its parent: one step less up the tree). */
  const hints = useRef(new Map<string, TreeNodeInfo>());
  /**
   * Opens the way to a node: its ancestors by parent links, each ancestor's level asked for as soon as the ancestor
   * is known (so the levels load while the walk goes on), then every ancestor expanded and the node focused. A link
   * naming the ancestors (`?path=`) needs no walk: their levels are fetched at once, and if the node is still where
   * the link says (each one in the level before), that is all.
   */
  const openNode = useCallback(
    async (id: string, ancestors: string[]) => {
      opening.current = id;
      setTreeError(undefined);
      const show = (
        parents: string[],
        pages: Page<TreeNode>[],
        path: string[],
        known: Map<string, TreeNodeInfo>,
      ) =>
        setState((s0) => {
          let s = s0;
          parents.forEach((p, i) => {
            const items: TreeNodeInfo[] = pages[i].items.map(toInfo);
            // a node on the way that is not on its level's first page is shown after it
            const want = known.get(path[i]);
            if (want && !items.some((x) => x.id === want.id)) items.push(want);
            s = addLevel(s, p, items, { offset: 0, hasMore: pages[i].has_more, total: pages[i].total_count });
          });
          return openPath(s, path);
        });
      try {
        if (ancestors.length) {
          const parents = [ROOT, ...ancestors];
          const path = [...ancestors, id];
          const pages = await Promise.all(parents.map((p) => api.level(code, version, p, 0)));
          if (path.every((x, i) => pages[i].items.some((n) => n.id === x))) {
            show(parents, pages, path, new Map());
            return;
          }
        }
        const levels = new Map<string, ReturnType<TreeApi['level']>>();
        const level = (p: string) => {
          if (!levels.has(p)) levels.set(p, api.level(code, version, p, 0));
        };
        level(ROOT);
        const known = new Map<string, TreeNodeInfo>();
        let cur = hints.current.get(id) ?? (await api.nodeRow(code, version, id));
        known.set(cur.id, cur);
        const path = [cur.id];
        while (cur.parentId && path.length < 10_000) {
          level(cur.parentId);
          cur = await api.nodeRow(code, version, cur.parentId);
          known.set(cur.id, cur);
          path.unshift(cur.id);
        }
        const parents = [ROOT, ...path.slice(0, -1)];
        const pages = await Promise.all(parents.map((p) => levels.get(p) ?? api.level(code, version, p, 0)));
        show(parents, pages, path, known);
      } catch (err) {
        setTreeError(err);
      } finally {
        opening.current = undefined;
        setOpenTick((n) => n + 1);
      }
    },
    [api, code, version],
  );

  // a link to a node that is not on screen: open the way to it
  useEffect(() => {
    if (selected && !state.nodes[selected] && opening.current !== selected)
      void openNode(selected, viaKey ? viaKey.split(',') : []);
    // only when the selection changes (state.nodes is read, not watched)
  }, [selected, viaKey, openNode]);

  // every level on screen but not fetched yet (the roots at first; a node's children once it is expanded)
  const missing = missingLevels(state)
    .map((p) => p || '<root>')
    .join(' ');
  useEffect(() => {
    if (!missing || opening.current) return;
    for (const parent of missing.split(' ')) {
      void fetchLevel(api, code, version, parent === '<root>' ? ROOT : parent, 0, setState, setTreeError);
    }
  }, [missing, openTick, api, code, version]);

  /** The selection into the URL, with the node's ancestors when they are known: a link that opens in one round. */
  const select = (id: string | undefined) => {
    const ancestors = id ? pathTo(state, id).slice(0, -1) : [];
    const next = id ? { node: id, ...(ancestors.length ? { path: ancestors.join(',') } : {}) } : {};
    void navigate({ to: '.', search: next, replace: true } as never);
  };

  const move = async (id: string, parent: string | null) => {
    await api.updateNode(code, version, id, { parent_id: parent });
    setState((s) => moveNode(s, id, parent));
    await refresh();
  };

  const changes = {
    onCreated: (parent: string | null, _node: TreeNode) => {
      setState((s) => childAdded(s, parent));
      void refresh();
    },
    onUpdated: (node: TreeNode) => {
      setState((s) => updateNode(s, node.id, { name: node.name, code: node.code }));
      void refresh();
    },
    onDeleted: (id: string) => {
      const parent = state.nodes[id]?.parentId ?? undefined;
      setState((s) => removeNode(s, id));
      select(parent);
      void refresh();
    },
    onMove: move,
  };

  return (
    <Guard group="trees">
      <BackLink to={`/trees/${encodeURIComponent(code)}`} label={code} />
      <PageHeader title={t('versionTitle', { tree: code, version })} />
      <ErrorBox error={v.error} scope="trees:read" />
      {v.data ? (
        <p className="meta" id="version-facts">
          {v.data.name ? `${v.data.name} · ` : ''}
          {t('versionFacts', {
            nodes: v.data.aggregations.nodes.toLocaleString(),
            levels: v.data.aggregations.levels,
          })}
        </p>
      ) : null}
      <FindNode
        code={code}
        version={version}
        onOpen={(n) => {
          hints.current.set(n.id, toInfo(n));
          select(n.id);
        }}
      />
      <div className="tree-layout">
        <section aria-labelledby="nodes-h" className="tree-pane">
          <h2 id="nodes-h">{t('treeNodes')}</h2>
          <ErrorBox error={treeError} scope="trees:read" />
          <ErrorBox error={moveError} scope="trees:write" />
          {state.loading[ROOT] && !state.levels[ROOT] ? <Loading /> : null}
          <NodeTree
            state={state}
            setState={setState}
            selected={selected}
            label={t('treeNodes')}
            canMove={write}
            onSelect={(id) => select(id)}
            onLoadMore={(parent) => {
              const offset = state.levels[parent]?.ids.length ?? 0;
              void fetchLevel(api, code, version, parent, offset, setState, setTreeError);
            }}
            onMove={(id, parent) => {
              setMoveError(undefined);
              move(id, parent).catch(setMoveError);
            }}
          />
          {write ? <p className="hint">{t('nodeDragHint')}</p> : null}
        </section>
        <div className="node-side">
          {selected ? (
            <NodePanel code={code} version={version} id={selected} changes={changes} />
          ) : (
            <p className="hint">{t('nodePick')}</p>
          )}
        </div>
      </div>
      <CsvSection
        code={code}
        version={version}
        write={write}
        onImported={() => {
          setState(emptyTree());
          select(undefined);
          void refresh();
        }}
      />
    </Guard>
  );
}

/** Find a node by code or name; choosing one opens the tree down to it. */
function FindNode({ code, version, onOpen }: { code: string; version: string; onOpen(n: TreeNode): void }) {
  const t = useT();
  const api = useTreeApi();
  const id = useId();
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  useEffect(() => {
    const h = setTimeout(() => setSearch(typed.trim()), 250);
    return () => clearTimeout(h);
  }, [typed]);
  const q = useQuery({
    queryKey: [TREE_KEY, 'search', code, version, search],
    queryFn: () => api.search(code, version, search),
    enabled: search !== '',
  });
  return (
    <div className="find-node">
      <div className="search">
        <label htmlFor={id}>{t('nodeFind')}</label>
        <input id={id} type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
      </div>
      <ErrorBox error={q.error} scope="trees:read" />
      {search && q.data ? (
        q.data.items.length ? (
          <ul className="find-results" aria-label={t('nodeFound')}>
            {q.data.items.map((n) => (
              <li key={n.id}>
                <button
                  type="button"
                  className="secondary small"
                  data-node={n.id}
                  onClick={() => {
                    setTyped('');
                    setSearch('');
                    onOpen(n);
                  }}
                >
                  {n.name} <code>{n.code}</code> · {t('nodeDepthN', { n: n.depth })}
                </button>
              </li>
            ))}
          </ul>
        ) : (
          <p>{t('none')}</p>
        )
      ) : null}
    </div>
  );
}

/** CSV export (the service's export, saved as a file) and import with a progress bar. */
function CsvSection({
  code,
  version,
  write,
  onImported,
}: {
  code: string;
  version: string;
  write: boolean;
  onImported(): void;
}) {
  const t = useT();
  const api = useTreeApi();
  const fileId = useId();
  const barId = useId();
  const [exportError, setExportError] = useState<unknown>();
  const [exporting, setExporting] = useState(false);
  const [progress, setProgress] = useState<ImportProgress>(idleProgress);
  const [importError, setImportError] = useState<unknown>();
  const [result, setResult] = useState<{
    imported: number;
    replaced: number;
    nodes: number;
    lines: number;
  }>();
  const doExport = async () => {
    setExportError(undefined);
    setExporting(true);
    try {
      const csv = await api.exportCsv(code, version);
      const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = exportFileName(code, version);
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (err) {
      setExportError(err);
    } finally {
      setExporting(false);
    }
  };
  const doImport = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const d = new FormData(e.currentTarget);
    const file = d.get('file');
    if (!(file instanceof File) || file.size === 0) return;
    setImportError(undefined);
    setResult(undefined);
    setProgress({ phase: 'uploading', sent: 0, total: file.size });
    try {
      const lines = csvRecordCount(await file.text());
      const r = await api.importCsv(code, version, file, d.get('replace') === 'on', (sent, total) =>
        setProgress((p) => uploadProgress(p, sent, total)),
      );
      setProgress((p) => ({ ...p, phase: 'done' }));
      setResult({ ...r, lines });
      onImported();
    } catch (err) {
      setProgress((p) => ({ ...p, phase: 'failed' }));
      setImportError(err);
    }
  };
  const busy = progress.phase === 'uploading' || progress.phase === 'processing';
  return (
    <section aria-labelledby="csv-h" className="csv">
      <h2 id="csv-h">{t('csvTitle')}</h2>
      <p className="hint">{t('csvFormat')}</p>
      <div className="csv-grid">
        <div>
          <h3>{t('csvExport')}</h3>
          <button type="button" id="csv-export" disabled={exporting} onClick={() => void doExport()}>
            {exporting ? t('loading') : t('csvExportButton')}
          </button>
          <ErrorBox error={exportError} scope="trees:read" />
        </div>
        {write ? (
          <form onSubmit={(e) => void doImport(e)} id="csv-import-form">
            <h3>{t('csvImport')}</h3>
            <div className="field">
              <label htmlFor={fileId}>{t('csvFile')}</label>
              <input id={fileId} type="file" name="file" accept=".csv,text/csv" required />
            </div>
            <label className="check">
              <input type="checkbox" name="replace" /> {t('csvReplace')}
            </label>
            <div className="csv-actions">
              <button type="submit" id="csv-import" disabled={busy}>
                {t('csvImportButton')}
              </button>
            </div>
            {progress.phase !== 'idle' ? (
              <div className="csv-progress">
                <label htmlFor={barId}>
                  {progress.phase === 'uploading'
                    ? t('csvUploading', { sent: kb(progress.sent), total: kb(progress.total) })
                    : progress.phase === 'processing'
                      ? t('csvProcessing')
                      : progress.phase === 'done'
                        ? t('csvDone')
                        : t('csvFailed')}
                </label>
                <progress id={barId} max={100} value={percent(progress)} data-phase={progress.phase}>
                  {percent(progress)} %
                </progress>
              </div>
            ) : null}
            <ErrorBox error={importError} scope="trees:write" />
            {result ? (
              <Notice>
                <span id="csv-result">
                  {t('csvResult', {
                    imported: result.imported,
                    replaced: result.replaced,
                    nodes: result.nodes,
                  })}
                </span>
              </Notice>
            ) : null}
          </form>
        ) : null}
      </div>
      <p className="hint">
        <Link to="/trees/$code" params={{ code }}>
          {t('treeVersions')}
        </Link>
      </p>
    </section>
  );
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KB`;
