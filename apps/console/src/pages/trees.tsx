import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useId, useRef, useState, type FormEvent } from 'react';
import { useGrants, useT } from '../ui/app-context';
import { FormDialog, text } from '../ui/dialog';
import { useCall, useChange, useGet } from '../ui/hooks';
import { ConfirmButton, ErrorBox, Field, Loading, Notice, PageHeader } from '../ui/kit';
import { ListTable, type Row } from '../ui/list-page';
import { BackLink, Guard } from './common';

interface Tree extends Row {
  code: string;
  name: string;
  description: string | null;
}
interface Version extends Row {
  version: string;
  name: string | null;
}
interface TreeNode extends Row {
  code: string;
  name: string;
  depth: number;
  leaf: boolean;
  parent_id: string | null;
  aggregations?: { child_nodes?: number };
}
interface Translation {
  id: string;
  language: 'en_US' | 'en_UK' | 'mn_MN';
  name: string | null;
  description: string | null;
}

const TREE = 'tree' as const;
const LANGUAGES = ['en_US', 'mn_MN'] as const;

export function TreesPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const create = useChange((call, d: FormData) =>
    call<Tree>(
      'POST',
      '/api/v1/trees',
      { body: { code: text(d, 'code'), name: text(d, 'name'), description: text(d, 'description') || null } },
      TREE,
    ),
  );
  return (
    <Guard group="trees">
      <PageHeader title={t('trees')}>
        {grants.write('trees') ? (
          <FormDialog
            id="new-tree"
            label={t('newTree')}
            title={t('newTree')}
            scope="trees:write"
            onSubmit={async (d) => {
              const x = await create.mutateAsync(d);
              await navigate({ to: '/trees/$code', params: { code: x.code } });
            }}
          >
            <Field label={t('code')}>{(id) => <input id={id} name="code" required />}</Field>
            <Field label={t('name')}>{(id) => <input id={id} name="name" required />}</Field>
            <Field label={t('description')}>{(id) => <input id={id} name="description" />}</Field>
          </FormDialog>
        ) : null}
      </PageHeader>
      <ListTable
        group="trees"
        service="tree"
        path="/api/v1/trees"
        caption={t('trees')}
        searchFields={['code', 'name']}
        defaultFields={['code', 'name', 'description']}
        rowLink={(r) => ({ to: '/trees/$code', params: { code: String(r.code) } })}
        columns={[
          { field: 'code', label: t('code'), sortable: true },
          { field: 'name', label: t('name'), sortable: true },
          { field: 'description', label: t('description') },
          { field: 'created_at', label: t('created'), sortable: true },
        ]}
      />
    </Guard>
  );
}

export function TreePage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const { code } = useParams({ strict: false }) as { code: string };
  const path = { tree_code: code };
  const tree = useGet<Tree>('/api/v1/trees/{tree_code}', { path }, true, TREE);
  const versions = useGet<{ items: Version[] }>(
    '/api/v1/trees/{tree_code}/versions',
    { path, query: { limit: 100 } },
    true,
    TREE,
  );
  const addVersion = useChange((call) =>
    call<Version>('POST', '/api/v1/trees/{tree_code}/versions', { path, body: {} }, TREE),
  );
  const remove = useChange((call) => call('DELETE', '/api/v1/trees/{tree_code}', { path }, TREE));
  const write = grants.write('trees');
  if (tree.isPending) return <Loading />;
  if (tree.error) return <ErrorBox error={tree.error} scope="trees:read" />;
  return (
    <Guard group="trees">
      <BackLink to="/trees" label={t('trees')} />
      <PageHeader title={`${tree.data.name} (${tree.data.code})`}>
        {write ? (
          <button type="button" className="secondary" onClick={() => addVersion.mutate(undefined)}>
            {t('newVersion')}
          </button>
        ) : null}
        {write ? (
          <ConfirmButton
            label={t('delete')}
            question={t('confirmDelete', { name: tree.data.code })}
            onConfirm={() =>
              remove.mutateAsync(undefined).then(
                () => void navigate({ to: '/trees' }),
                () => undefined,
              )
            }
          />
        ) : null}
      </PageHeader>
      <ErrorBox error={addVersion.error ?? remove.error} scope="trees:write" />
      <h2>{t('versions')}</h2>
      <ErrorBox error={versions.error} scope="trees:read" />
      <ul className="link-list">
        {(versions.data?.items ?? []).map((v) => (
          <li key={v.id}>
            <Link to="/trees/$code/versions/$version" params={{ code, version: v.version }}>
              {v.version}
              {v.name ? ` ${v.name}` : ''}
            </Link>
          </li>
        ))}
      </ul>
    </Guard>
  );
}

/** One node of the lazy tree: its children are read when it is opened (WAI-ARIA tree, arrow keys by the browser's Tab). */
function NodeItem({
  node,
  base,
  selected,
  onSelect,
}: {
  node: TreeNode;
  base: Record<string, string>;
  selected?: string;
  onSelect(n: TreeNode): void;
}) {
  const t = useT();
  const [open, setOpen] = useState(false);
  const children = useNodeChildren(base, node.id, open && !node.leaf);
  return (
    <li role="treeitem" aria-expanded={node.leaf ? undefined : open} aria-selected={selected === node.id}>
      <span className="node-row">
        {node.leaf ? (
          <span className="twisty" aria-hidden="true" />
        ) : (
          <button
            type="button"
            className="twisty"
            aria-label={t(open ? 'collapse' : 'expand', { name: node.name })}
            onClick={() => setOpen((o) => !o)}
          >
            {open ? '▾' : '▸'}
          </button>
        )}
        <button
          type="button"
          className={`node-name${selected === node.id ? ' selected' : ''}`}
          data-node={node.code}
          onClick={() => onSelect(node)}
        >
          {node.name} <code>{node.code}</code>
        </button>
      </span>
      {open && children.data ? (
        <ul role="group">
          {children.data.items.map((c) => (
            <NodeItem key={c.id} node={c} base={base} selected={selected} onSelect={onSelect} />
          ))}
        </ul>
      ) : null}
      {open && children.isPending ? <Loading /> : null}
    </li>
  );
}

function useNodeChildren(base: Record<string, string>, parent: string | null, enabled = true) {
  return useGet<{ items: TreeNode[] }>(
    '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes',
    {
      path: base,
      query: {
        q: parent ? `parent_id = '${parent}'` : 'parent_id is null',
        limit: 100,
        sort: 'code:asc',
        expand: 'all',
      },
    },
    enabled,
    TREE,
  );
}

/** A node's translations side by side, one column per language: create or change each. */
function Translations({ base, node }: { base: Record<string, string>; node: TreeNode }) {
  const t = useT();
  const grants = useGrants();
  const path = { ...base, tree_node_id: node.id };
  const list = useGet<{ items: Translation[] }>(
    '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}/translations',
    { path, query: { limit: 100 } },
    true,
    TREE,
  );
  const save = useChange(
    (call, a: { language: string; name: string; description: string; exists: boolean }) =>
      a.exists
        ? call(
            'PATCH',
            '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}/translations/{language}',
            {
              path: { ...path, language: a.language },
              body: { name: a.name, description: a.description || null },
            },
            TREE,
          )
        : call(
            'POST',
            '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}/translations',
            { path, body: { language: a.language, name: a.name, description: a.description || null } },
            TREE,
          ),
  );
  const [saved, setSaved] = useState(false);
  const byLang = new Map((list.data?.items ?? []).map((x) => [x.language, x]));
  const onSubmit = (language: string) => async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setSaved(false);
    const d = new FormData(e.currentTarget);
    await save
      .mutateAsync({
        language,
        name: text(d, 'name'),
        description: text(d, 'description'),
        exists: byLang.has(language as never),
      })
      .then(
        () => setSaved(true),
        () => undefined,
      );
  };
  return (
    <section aria-labelledby="translations-h">
      <h2 id="translations-h">
        {t('translations')}: {node.name}
      </h2>
      <ErrorBox error={list.error ?? save.error} scope={save.error ? 'trees:write' : 'trees:read'} />
      {saved ? <Notice>{t('saved')}</Notice> : null}
      <div className="columns">
        {LANGUAGES.map((language) => {
          const x = byLang.get(language);
          return (
            <form
              key={`${language}-${x?.id ?? 'new'}`}
              onSubmit={(e) => void onSubmit(language)(e)}
              lang={language.slice(0, 2)}
            >
              <fieldset disabled={!grants.write('trees')}>
                <legend>{language}</legend>
                <Field label={`${t('name')} (${language})`}>
                  {(id) => <input id={id} name="name" defaultValue={x?.name ?? ''} required />}
                </Field>
                <Field label={`${t('description')} (${language})`}>
                  {(id) => <input id={id} name="description" defaultValue={x?.description ?? ''} />}
                </Field>
                {grants.write('trees') ? (
                  <button type="submit" className="secondary">
                    {t('save')}
                  </button>
                ) : null}
              </fieldset>
            </form>
          );
        })}
      </div>
    </section>
  );
}

export function VersionPage() {
  const t = useT();
  const grants = useGrants();
  const call = useCall();
  const { code, version } = useParams({ strict: false }) as { code: string; version: string };
  const base = { tree_code: code, tree_version: version };
  const roots = useNodeChildren(base, null);
  const [selected, setSelected] = useState<TreeNode>();
  const [notice, setNotice] = useState<string>();
  const moveId = useId();
  const fileRef = useRef<HTMLInputElement>(null);
  const write = grants.write('trees');
  const nodePath = (n: TreeNode) => ({ ...base, tree_node_id: n.id });
  const create = useChange((c, d: FormData) =>
    c<TreeNode>(
      'POST',
      '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes',
      {
        path: base,
        body: {
          code: text(d, 'code'),
          name: text(d, 'name'),
          ...(text(d, 'parent_id') ? { parent_id: text(d, 'parent_id') } : {}),
        },
      },
      TREE,
    ),
  );
  const patch = useChange((c, a: { node: TreeNode; body: Record<string, unknown> }) =>
    c<TreeNode>(
      'PATCH',
      '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}',
      {
        path: nodePath(a.node),
        body: a.body,
      },
      TREE,
    ),
  );
  const remove = useChange((c, n: TreeNode) =>
    c(
      'DELETE',
      '/api/v1/trees/{tree_code}/versions/{tree_version}/nodes/{tree_node_id}',
      {
        path: nodePath(n),
        query: n.leaf ? {} : { cascade: true },
      },
      TREE,
    ),
  );
  const exportCsv = async () => {
    const csv = await call<string>(
      'GET',
      '/api/v1/trees/{tree_code}/versions/{tree_version}/export',
      { path: base, parseAs: 'text' },
      TREE,
    ).catch((err: unknown) => {
      setNotice(err instanceof Error ? err.message : String(err));
      return undefined;
    });
    if (csv === undefined) return;
    const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${code}-${version}.csv`;
    a.click();
    URL.revokeObjectURL(url);
  };
  const error = create.error ?? patch.error ?? remove.error;
  return (
    <Guard group="trees">
      <BackLink to={`/trees/${code}`} label={code} />
      <PageHeader title={`${code} / ${version}`}>
        {write ? (
          <FormDialog
            id="new-node"
            label={t('newNode')}
            title={selected ? `${t('newChild')}: ${selected.name}` : t('newNode')}
            scope="trees:write"
            onSubmit={async (d) => {
              await create.mutateAsync(d);
            }}
          >
            <input type="hidden" name="parent_id" value={selected?.id ?? ''} />
            <Field label={t('code')}>{(id) => <input id={id} name="code" required />}</Field>
            <Field label={t('name')}>{(id) => <input id={id} name="name" required />}</Field>
          </FormDialog>
        ) : null}
        <button type="button" className="secondary" onClick={() => void exportCsv()}>
          {t('exportCsv')}
        </button>
        {write ? (
          <>
            <label className="file-button secondary">
              {t('importCsv')}
              <input
                ref={fileRef}
                type="file"
                accept=".csv,text/csv"
                className="visually-hidden"
                onChange={(e) => {
                  const file = e.target.files?.[0];
                  if (!file) return;
                  void file.text().then(async (body) => {
                    const r = await call<{ nodes: number }>(
                      'POST',
                      '/api/v1/trees/{tree_code}/versions/{tree_version}/import',
                      { path: base, body, contentType: 'text/csv' },
                      TREE,
                    ).catch((err: unknown) => {
                      setNotice(err instanceof Error ? err.message : String(err));
                      return undefined;
                    });
                    if (r) setNotice(t('imported', { n: r.nodes }));
                    if (fileRef.current) fileRef.current.value = '';
                    await roots.refetch();
                  });
                }}
              />
            </label>
          </>
        ) : null}
      </PageHeader>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={error} scope="trees:write" />
      <div className="columns">
        <section aria-labelledby="nodes-h">
          <h2 id="nodes-h">{t('nodes')}</h2>
          <ErrorBox error={roots.error} scope="trees:read" />
          {roots.isPending ? <Loading /> : null}
          <ul role="tree" aria-labelledby="nodes-h" className="node-tree" id="node-tree">
            {(roots.data?.items ?? []).map((n) => (
              <NodeItem key={n.id} node={n} base={base} selected={selected?.id} onSelect={setSelected} />
            ))}
          </ul>
        </section>
        <div>
          {selected ? (
            <section aria-labelledby="node-h">
              <h2 id="node-h">
                {selected.name} <code>{selected.code}</code>
              </h2>
              {write ? (
                <>
                  <form
                    className="inline-add"
                    onSubmit={(e) => {
                      e.preventDefault();
                      const name = text(new FormData(e.currentTarget), 'name');
                      void patch.mutateAsync({ node: selected, body: { name } }).then(
                        (n) => setSelected(n),
                        () => undefined,
                      );
                    }}
                  >
                    <label htmlFor={`${moveId}-name`}>{t('rename')}</label>
                    <input
                      id={`${moveId}-name`}
                      name="name"
                      defaultValue={selected.name}
                      key={selected.id}
                      required
                    />
                    <button type="submit" className="secondary">
                      {t('save')}
                    </button>
                  </form>
                  <form
                    className="inline-add"
                    onSubmit={(e) => {
                      e.preventDefault();
                      const parent = text(new FormData(e.currentTarget), 'parent');
                      void patch.mutateAsync({ node: selected, body: { parent_id: parent || null } }).then(
                        (n) => setSelected(n),
                        () => undefined,
                      );
                    }}
                  >
                    <label htmlFor={moveId}>{t('moveTo')}</label>
                    <input id={moveId} name="parent" placeholder={t('root')} key={`m-${selected.id}`} />
                    <button type="submit" className="secondary">
                      {t('move')}
                    </button>
                  </form>
                  <p className="hint">
                    {t('id')}: <code>{selected.id}</code>
                  </p>
                  <ConfirmButton
                    label={t('delete')}
                    question={t('deleteNode', {
                      name: selected.name,
                      n: selected.aggregations?.child_nodes ?? 0,
                    })}
                    onConfirm={() =>
                      remove.mutateAsync(selected).then(
                        () => setSelected(undefined),
                        () => undefined,
                      )
                    }
                  />
                </>
              ) : null}
              <Translations base={base} node={selected} />
            </section>
          ) : (
            <p>{t('selectNode')}</p>
          )}
        </div>
      </div>
    </Guard>
  );
}
