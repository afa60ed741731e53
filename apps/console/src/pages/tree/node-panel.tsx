import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { LANGUAGES, type Language, type TreeNode } from '../../lib/tree-api';
import { useGrants, useT } from '../../ui/app-context';
import { FormDialog, text } from '../../ui/dialog';
import { ConfirmButton, ErrorBox, Field, Loading } from '../../ui/kit';
import { optional, TREE_KEY, useTreeApi, useTreeRefresh } from './common';

export interface NodeChanges {
  onCreated(parent: string | null, node: TreeNode): void;
  onUpdated(node: TreeNode): void;
  onDeleted(id: string): void;
  onMove(id: string, parent: string | null): Promise<void>;
}

const LANGUAGE_NAMES: Record<Language, string> = {
  en_US: 'English (US)',
  en_UK: 'English (UK)',
  mn_MN: 'Монгол',
};

/** The selected node: its fields, and what can be done to it (add a child, rename, move, delete, translate). */
export function NodePanel({
  code,
  version,
  id,
  changes,
}: {
  code: string;
  version: string;
  id: string;
  changes: NodeChanges;
}) {
  const t = useT();
  const api = useTreeApi();
  const grants = useGrants();
  const write = grants.write('trees');
  const q = useQuery({
    queryKey: [TREE_KEY, 'node', code, version, id],
    queryFn: () => api.node(code, version, id),
  });
  if (q.isPending) return <Loading />;
  if (q.error) return <ErrorBox error={q.error} scope="trees:read" />;
  const n = q.data;
  return (
    <section aria-labelledby="node-h" className="node-panel" id="node-panel" data-node={n.id}>
      <h2 id="node-h">{n.name}</h2>
      <dl className="tree-facts">
        <dt>{t('nodeCode')}</dt>
        <dd>
          <code id="node-code">{n.code}</code>
        </dd>
        <dt>{t('description')}</dt>
        <dd>{n.description || '—'}</dd>
        <dt>{t('nodeDepth')}</dt>
        <dd>{n.depth}</dd>
        <dt>{t('nodeChildren')}</dt>
        <dd>{n.aggregations?.child_nodes ?? 0}</dd>
      </dl>
      {write ? (
        <div className="page-actions">
          <FormDialog
            id="add-child"
            label={t('nodeAddChild')}
            title={t('nodeAddChildTitle', { name: n.name })}
            scope="trees:write"
            onSubmit={async (d) => {
              const child = await api.createNode(code, version, {
                code: text(d, 'code'),
                name: text(d, 'name'),
                description: optional(d, 'description'),
                parent_id: n.id,
              });
              changes.onCreated(n.id, child);
            }}
          >
            <NodeFields />
          </FormDialog>
          <FormDialog
            id="rename-node"
            label={t('nodeRename')}
            title={t('nodeRenameTitle', { name: n.name })}
            submitLabel={t('save')}
            scope="trees:write"
            onSubmit={async (d) => {
              const x = await api.updateNode(code, version, n.id, {
                code: text(d, 'code'),
                name: text(d, 'name'),
                description: optional(d, 'description'),
              });
              changes.onUpdated(x);
            }}
          >
            <NodeFields node={n} />
          </FormDialog>
          <MoveDialog code={code} version={version} node={n} onMove={changes.onMove} />
          <DeleteNode code={code} version={version} node={n} onDeleted={changes.onDeleted} />
        </div>
      ) : null}
      <Translations code={code} version={version} node={n} write={write} />
    </section>
  );
}

export function NodeFields({ node }: { node?: TreeNode }) {
  const t = useT();
  return (
    <>
      <Field label={t('nodeCode')}>
        {(id) => <input id={id} name="code" required defaultValue={node?.code} />}
      </Field>
      <Field label={t('name')}>
        {(id) => <input id={id} name="name" required defaultValue={node?.name} />}
      </Field>
      <Field label={t('description')}>
        {(id) => <input id={id} name="description" defaultValue={node?.description ?? ''} />}
      </Field>
    </>
  );
}

/** Delete: the size of the subtree is fetched first and named in the question; a subtree goes with cascade=true. */
function DeleteNode({
  code,
  version,
  node,
  onDeleted,
}: {
  code: string;
  version: string;
  node: TreeNode;
  onDeleted(id: string): void;
}) {
  const t = useT();
  const api = useTreeApi();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [count, setCount] = useState<number>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const open = async () => {
    setError(undefined);
    setCount(undefined);
    ref.current?.showModal();
    try {
      setCount(node.leaf ? 0 : await api.subtreeSize(code, version, node.id));
    } catch (err) {
      setError(err);
    }
  };
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api.deleteNode(code, version, node.id, (count ?? 0) > 0);
      ref.current?.close();
      onDeleted(node.id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className="danger" id="delete-node" onClick={() => void open()}>
        {t('delete')}
      </button>
      <dialog ref={ref} aria-labelledby={titleId} className="confirm" id="delete-node-dialog">
        <h2 id={titleId}>{t('confirmTitle')}</h2>
        {count === undefined && !error ? (
          <Loading />
        ) : count !== undefined ? (
          <p id="delete-node-question">
            {count > 0
              ? t('nodeDeleteSubtree', { name: node.name, n: count })
              : t('confirmDelete', { name: node.name })}
          </p>
        ) : null}
        <ErrorBox error={error} scope="trees:write" />
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => ref.current?.close()} autoFocus>
            {t('cancel')}
          </button>
          <button
            type="button"
            className="danger"
            data-confirm
            disabled={count === undefined || busy}
            onClick={() => void confirm()}
          >
            {t('delete')}
          </button>
        </div>
      </dialog>
    </>
  );
}

/** "Move to": find the new parent by code or name (or make the node a root); the API refuses a move into its own subtree. */
function MoveDialog({
  code,
  version,
  node,
  onMove,
}: {
  code: string;
  version: string;
  node: TreeNode;
  onMove(id: string, parent: string | null): Promise<void>;
}) {
  const t = useT();
  const api = useTreeApi();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const searchId = useId();
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [target, setTarget] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const h = setTimeout(() => setSearch(typed.trim()), 200);
    return () => clearTimeout(h);
  }, [typed]);
  const results = useQuery({
    queryKey: [TREE_KEY, 'search', code, version, search],
    queryFn: () => api.search(code, version, search),
    enabled: search !== '',
  });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (target === undefined) return;
    setBusy(true);
    setError(undefined);
    try {
      await onMove(node.id, target === '' ? null : target);
      ref.current?.close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className="secondary"
        id="move-node"
        onClick={() => {
          setTyped('');
          setTarget(undefined);
          setError(undefined);
          ref.current?.showModal();
        }}
      >
        {t('nodeMoveTo')}
      </button>
      <dialog ref={ref} aria-labelledby={titleId} className="form-dialog" id="move-dialog">
        <h2 id={titleId}>{t('nodeMoveTitle', { name: node.name })}</h2>
        <form onSubmit={(e) => void submit(e)}>
          <div className="field">
            <label htmlFor={searchId}>{t('nodeMoveSearch')}</label>
            <input id={searchId} type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
          </div>
          <fieldset className="plain move-targets">
            <legend>{t('nodeMoveUnder')}</legend>
            {node.parent_id ? (
              <label className="check">
                <input
                  type="radio"
                  name="target"
                  value=""
                  checked={target === ''}
                  onChange={() => setTarget('')}
                />{' '}
                {t('nodeMakeRoot')}
              </label>
            ) : null}
            {results.isFetching ? <Loading /> : null}
            {(results.data?.items ?? [])
              .filter((x) => x.id !== node.id && x.id !== node.parent_id)
              .map((x) => (
                <label className="check" key={x.id}>
                  <input
                    type="radio"
                    name="target"
                    value={x.id}
                    checked={target === x.id}
                    onChange={() => setTarget(x.id)}
                  />{' '}
                  {x.name} <code>{x.code}</code>
                </label>
              ))}
            {search && results.data?.items.length === 0 ? <p>{t('none')}</p> : null}
          </fieldset>
          <ErrorBox error={results.error ?? error} scope="trees:write" />
          <div className="dialog-actions">
            <button type="button" className="secondary" onClick={() => ref.current?.close()}>
              {t('cancel')}
            </button>
            <button type="submit" disabled={target === undefined || busy}>
              {t('nodeMove')}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** The node's translations side by side, one column a language: add, edit, delete. */
function Translations({
  code,
  version,
  node,
  write,
}: {
  code: string;
  version: string;
  node: TreeNode;
  write: boolean;
}) {
  const t = useT();
  const api = useTreeApi();
  const q = useQuery({
    queryKey: [TREE_KEY, 'translations', code, version, node.id],
    queryFn: () => api.translations(code, version, node.id),
  });
  return (
    <section aria-labelledby="translations-h">
      <h3 id="translations-h">{t('nodeTranslations')}</h3>
      <ErrorBox error={q.error} scope="trees:read" />
      {q.data ? (
        <div className="translations" id="translations">
          <div className="translation base">
            <h4>{t('nodeBase')}</h4>
            <p className="tr-name">{node.name}</p>
            <p className="hint">{node.description || '—'}</p>
          </div>
          {LANGUAGES.map((lang) => (
            <TranslationColumn
              key={lang}
              code={code}
              version={version}
              node={node}
              lang={lang}
              write={write}
              current={q.data.items.find((x) => x.language === lang)}
            />
          ))}
        </div>
      ) : (
        <Loading />
      )}
    </section>
  );
}

function TranslationColumn({
  code,
  version,
  node,
  lang,
  write,
  current,
}: {
  code: string;
  version: string;
  node: TreeNode;
  lang: Language;
  write: boolean;
  current?: { name: string | null; description: string | null };
}) {
  const t = useT();
  const api = useTreeApi();
  const refresh = useTreeRefresh();
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const [generation, setGeneration] = useState(0);
  const nameId = useId();
  const descId = useId();
  const headId = useId();
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const d = new FormData(e.currentTarget);
    setError(undefined);
    setSaved(false);
    try {
      const body = { name: text(d, 'name'), description: optional(d, 'description') };
      if (current) await api.updateTranslation(code, version, node.id, lang, body);
      else await api.addTranslation(code, version, node.id, { language: lang, ...body });
      await refresh();
      setSaved(true);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div className="translation" data-lang={lang} lang={lang.slice(0, 2)}>
      <h4 id={headId} lang="en">
        {LANGUAGE_NAMES[lang]} <code>{lang}</code>
      </h4>
      {write ? (
        <form
          onSubmit={(e) => void submit(e)}
          aria-labelledby={headId}
          key={`${generation}-${current ? 1 : 0}`}
        >
          <label htmlFor={nameId}>{t('name')}</label>
          <input id={nameId} name="name" required defaultValue={current?.name ?? ''} />
          <label htmlFor={descId}>{t('description')}</label>
          <input id={descId} name="description" defaultValue={current?.description ?? ''} />
          <ErrorBox error={error} scope="trees:write" />
          {saved ? (
            <p className="hint" role="status">
              {t('saved')}
            </p>
          ) : null}
          <div className="tr-actions">
            <button type="submit" className="small">
              {current ? t('save') : t('add')}
            </button>
            {current ? (
              <ConfirmButton
                className="danger small"
                label={t('delete')}
                question={t('nodeTranslationDelete', { lang: LANGUAGE_NAMES[lang] })}
                onConfirm={async () => {
                  setError(undefined);
                  try {
                    await api.deleteTranslation(code, version, node.id, lang);
                    await refresh();
                    setGeneration((g) => g + 1);
                  } catch (err) {
                    setError(err);
                  }
                }}
              />
            ) : null}
          </div>
        </form>
      ) : current ? (
        <>
          <p className="tr-name">{current.name}</p>
          <p className="hint">{current.description || '—'}</p>
        </>
      ) : (
        <p className="hint">{t('nodeNoTranslation')}</p>
      )}
    </div>
  );
}
