import { useQuery, keepPreviousData } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useId, useState } from 'react';
import { literal, type Tree, type Version } from '../../lib/tree-api';
import { useApp, useGrants, useT } from '../../ui/app-context';
import { FormDialog, text } from '../../ui/dialog';
import { ConfirmButton, ErrorBox, Field, formatDate, Loading, PageHeader } from '../../ui/kit';
import { BackLink, Guard } from '../common';
import { optional, TREE_KEY, useTreeApi, useTreeRefresh } from './common';

const PAGE = 20;

/** /trees: the trees (search by code or name, paged), create, and from each row its page. */
export function TreesPage() {
  const t = useT();
  const grants = useGrants();
  const api = useTreeApi();
  const refresh = useTreeRefresh();
  const navigate = useNavigate();
  const searchId = useId();
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  useEffect(() => {
    const h = setTimeout(() => {
      setSearch(typed.trim());
      setOffset(0);
    }, 250);
    return () => clearTimeout(h);
  }, [typed]);
  const like = literal(`%${search}%`);
  const q = useQuery({
    queryKey: [TREE_KEY, 'trees', search, offset],
    queryFn: () =>
      api.trees({ q: search ? `code ilike ${like} or name ilike ${like}` : undefined, offset, limit: PAGE }),
    placeholderData: keepPreviousData,
  });
  const total = q.data?.total_count ?? 0;
  return (
    <Guard group="trees">
      <PageHeader title={t('trees')}>
        {grants.write('trees') ? (
          <FormDialog
            id="new-tree"
            label={t('treeNew')}
            title={t('treeNew')}
            scope="trees:write"
            onSubmit={async (d) => {
              const tree = await api.createTree({
                code: text(d, 'code'),
                name: text(d, 'name'),
                description: optional(d, 'description'),
              });
              await refresh();
              await navigate({ to: '/trees/$code', params: { code: tree.code } });
            }}
          >
            <Field label={t('treeCode')} hint={t('treeCodeHint')}>
              {(id) => <input id={id} name="code" required pattern="[^/]+" />}
            </Field>
            <Field label={t('name')}>{(id) => <input id={id} name="name" required />}</Field>
            <Field label={t('description')}>{(id) => <input id={id} name="description" />}</Field>
          </FormDialog>
        ) : null}
      </PageHeader>
      <div className="list-tools">
        <div className="search">
          <label htmlFor={searchId}>{t('search')}</label>
          <input id={searchId} type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
        </div>
      </div>
      <ErrorBox error={q.error} scope="trees:read" />
      {q.isPending ? <Loading /> : null}
      {q.data ? (
        q.data.items.length === 0 ? (
          <p>{t('none')}</p>
        ) : (
          <table id="trees-table">
            <caption className="visually-hidden">{t('trees')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('treeCode')}</th>
                <th scope="col">{t('name')}</th>
                <th scope="col">{t('treeVersions')}</th>
                <th scope="col">{t('treeNodes')}</th>
                <th scope="col">{t('status')}</th>
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((x) => (
                <tr key={x.id}>
                  <td>
                    <Link to="/trees/$code" params={{ code: x.code }}>
                      {x.code}
                    </Link>
                  </td>
                  <td>{x.name}</td>
                  <td>{x.aggregations?.versions}</td>
                  <td>{x.aggregations?.nodes?.toLocaleString()}</td>
                  <td>{x.enabled ? t('treeEnabled') : t('treeDisabled')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
      {total > PAGE ? (
        <div className="pager">
          <button
            type="button"
            className="secondary"
            disabled={offset === 0}
            onClick={() => setOffset(Math.max(0, offset - PAGE))}
          >
            {t('previous')}
          </button>
          <span>{t('pageOf', { from: offset + 1, to: Math.min(offset + PAGE, total), total })}</span>
          <button
            type="button"
            className="secondary"
            disabled={offset + PAGE >= total}
            onClick={() => setOffset(offset + PAGE)}
          >
            {t('next')}
          </button>
        </div>
      ) : null}
    </Guard>
  );
}

function TreeForm({ tree }: { tree: Tree }) {
  const t = useT();
  return (
    <>
      <Field label={t('name')}>
        {(id) => <input id={id} name="name" required defaultValue={tree.name} />}
      </Field>
      <Field label={t('description')}>
        {(id) => <input id={id} name="description" defaultValue={tree.description ?? ''} />}
      </Field>
      <label className="check">
        <input type="checkbox" name="enabled" defaultChecked={tree.enabled} /> {t('treeEnabled')}
      </label>
    </>
  );
}

/** /trees/$code: the tree (edit, change code, delete) and its versions (create, clone, change code, delete). */
export function TreePage() {
  const t = useT();
  const { lang } = useApp();
  const grants = useGrants();
  const api = useTreeApi();
  const refresh = useTreeRefresh();
  const navigate = useNavigate();
  const { code } = useParams({ strict: false }) as { code: string };
  const tree = useQuery({ queryKey: [TREE_KEY, 'tree', code], queryFn: () => api.tree(code) });
  const versions = useQuery({ queryKey: [TREE_KEY, 'versions', code], queryFn: () => api.versions(code) });
  const [deleteError, setDeleteError] = useState<unknown>();
  const write = grants.write('trees');
  return (
    <Guard group="trees">
      <BackLink to="/trees" label={t('trees')} />
      {tree.isPending ? <Loading /> : null}
      <ErrorBox error={tree.error} scope="trees:read" />
      {tree.data ? (
        <>
          <PageHeader title={tree.data.name}>
            {write ? (
              <>
                <FormDialog
                  id="edit-tree"
                  label={t('edit')}
                  title={t('treeEdit')}
                  submitLabel={t('save')}
                  scope="trees:write"
                  onSubmit={async (d) => {
                    await api.updateTree(code, {
                      name: text(d, 'name'),
                      description: optional(d, 'description'),
                      enabled: d.get('enabled') === 'on',
                    });
                    await refresh();
                  }}
                >
                  <TreeForm tree={tree.data} />
                </FormDialog>
                <FormDialog
                  id="change-tree-code"
                  label={t('treeChangeCode')}
                  title={t('treeChangeCode')}
                  submitLabel={t('save')}
                  scope="trees:write"
                  onSubmit={async (d) => {
                    const x = await api.changeTreeCode(code, text(d, 'new_code'));
                    await refresh();
                    await navigate({ to: '/trees/$code', params: { code: x.code }, replace: true });
                  }}
                >
                  <Field label={t('treeNewCode')}>
                    {(id) => <input id={id} name="new_code" required defaultValue={code} pattern="[^/]+" />}
                  </Field>
                </FormDialog>
                <ConfirmButton
                  id="delete-tree"
                  label={t('delete')}
                  question={t('treeDeleteConfirm', {
                    name: tree.data.name,
                    versions: tree.data.aggregations?.versions ?? 0,
                    nodes: tree.data.aggregations?.nodes ?? 0,
                  })}
                  onConfirm={async () => {
                    setDeleteError(undefined);
                    try {
                      await api.deleteTree(code);
                      await refresh();
                      await navigate({ to: '/trees' });
                    } catch (err) {
                      setDeleteError(err);
                    }
                  }}
                />
              </>
            ) : null}
          </PageHeader>
          <ErrorBox error={deleteError} scope="trees:write" />
          <dl className="tree-facts">
            <dt>{t('treeCode')}</dt>
            <dd>
              <code>{tree.data.code}</code>
            </dd>
            <dt>{t('description')}</dt>
            <dd>{tree.data.description || '—'}</dd>
            <dt>{t('status')}</dt>
            <dd>{tree.data.enabled ? t('treeEnabled') : t('treeDisabled')}</dd>
            <dt>{t('treeNodes')}</dt>
            <dd>{tree.data.aggregations?.nodes?.toLocaleString()}</dd>
            <dt>{t('updated')}</dt>
            <dd>{formatDate(tree.data.updated_at, lang)}</dd>
          </dl>
        </>
      ) : null}
      <section aria-labelledby="versions-h">
        <div className="page-header">
          <h2 id="versions-h">{t('treeVersions')}</h2>
          {write ? (
            <FormDialog
              id="new-version"
              label={t('versionNew')}
              title={t('versionNew')}
              scope="trees:write"
              onSubmit={async (d) => {
                await api.createVersion(code, {
                  ...(text(d, 'version') ? { version: text(d, 'version') } : {}),
                  name: optional(d, 'name'),
                  description: optional(d, 'description'),
                });
                await refresh();
              }}
            >
              <Field label={t('versionCode')} hint={t('versionCodeHint')}>
                {(id) => <input id={id} name="version" pattern="[^/]+" />}
              </Field>
              <Field label={t('name')}>{(id) => <input id={id} name="name" />}</Field>
              <Field label={t('description')}>{(id) => <input id={id} name="description" />}</Field>
            </FormDialog>
          ) : null}
        </div>
        <ErrorBox error={versions.error} scope="trees:read" />
        {versions.data ? (
          <table id="versions-table">
            <caption className="visually-hidden">{t('treeVersions')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('versionCode')}</th>
                <th scope="col">{t('name')}</th>
                <th scope="col">{t('treeNodes')}</th>
                <th scope="col">{t('versionLevels')}</th>
                <th scope="col">{t('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {versions.data.items.map((v) => (
                <VersionRow key={v.id} code={code} v={v} write={write} />
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
    </Guard>
  );
}

function VersionRow({ code, v, write }: { code: string; v: Version; write: boolean }) {
  const t = useT();
  const api = useTreeApi();
  const refresh = useTreeRefresh();
  const [error, setError] = useState<unknown>();
  return (
    <tr data-version={v.version}>
      <td>
        <Link to="/trees/$code/versions/$version" params={{ code, version: v.version }}>
          {v.version}
        </Link>
      </td>
      <td>{v.name}</td>
      <td>{v.aggregations?.nodes?.toLocaleString()}</td>
      <td>{v.aggregations?.levels}</td>
      <td>
        {write ? (
          <div className="row-actions">
            <FormDialog
              label={t('versionClone')}
              title={t('versionCloneTitle', { version: v.version })}
              submitLabel={t('versionClone')}
              scope="trees:write"
              onSubmit={async (d) => {
                await api.cloneVersion(code, v.version, {
                  version: text(d, 'version'),
                  name: text(d, 'name'),
                });
                await refresh();
              }}
            >
              <Field label={t('versionCode')}>
                {(id) => <input id={id} name="version" required pattern="[^/]+" />}
              </Field>
              <Field label={t('name')}>
                {(id) => <input id={id} name="name" required defaultValue={v.name ?? ''} />}
              </Field>
            </FormDialog>
            <FormDialog
              label={t('versionChangeCode')}
              title={t('versionChangeCode')}
              submitLabel={t('save')}
              scope="trees:write"
              onSubmit={async (d) => {
                await api.changeVersionCode(code, v.version, text(d, 'new_version'));
                await refresh();
              }}
            >
              <Field label={t('versionNewCode')}>
                {(id) => (
                  <input id={id} name="new_version" required defaultValue={v.version} pattern="[^/]+" />
                )}
              </Field>
            </FormDialog>
            <FormDialog
              label={t('edit')}
              title={t('versionEdit')}
              submitLabel={t('save')}
              scope="trees:write"
              onSubmit={async (d) => {
                await api.updateVersion(code, v.version, {
                  name: optional(d, 'name'),
                  description: optional(d, 'description'),
                });
                await refresh();
              }}
            >
              <Field label={t('name')}>
                {(id) => <input id={id} name="name" defaultValue={v.name ?? ''} />}
              </Field>
              <Field label={t('description')}>
                {(id) => <input id={id} name="description" defaultValue={v.description ?? ''} />}
              </Field>
            </FormDialog>
            <ConfirmButton
              label={t('delete')}
              question={t('versionDeleteConfirm', {
                version: v.version,
                nodes: v.aggregations?.nodes ?? 0,
              })}
              onConfirm={async () => {
                setError(undefined);
                try {
                  await api.deleteVersion(code, v.version);
                  await refresh();
                } catch (err) {
                  setError(err);
                }
              }}
            />
          </div>
        ) : null}
        <ErrorBox error={error} scope="trees:write" />
      </td>
    </tr>
  );
}
