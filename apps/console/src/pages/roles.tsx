import { useNavigate, useParams } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { useGrants, useT } from '../ui/app-context';
import { useNames, useScopeCatalog } from '../ui/catalog';
import { FormDialog, text } from '../ui/dialog';
import { useChange, useGet } from '../ui/hooks';
import { ConfirmButton, ErrorBox, Field, Loading, PageHeader } from '../ui/kit';
import { LinkedList } from '../ui/links';
import { ListTable, type Row } from '../ui/list-page';
import { BackLink, Guard } from './common';

interface Role extends Row {
  role_name: string;
  role_description: string | null;
}

export function RolesPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const create = useChange((call, d: FormData) =>
    call<Role>('POST', '/api/v1/roles', {
      body: { role_name: text(d, 'role_name'), role_description: text(d, 'role_description') || null },
    }),
  );
  return (
    <Guard group="roles">
      <PageHeader title={t('roles')}>
        {grants.write('roles') ? (
          <FormDialog
            id="new-role"
            label={t('newRole')}
            title={t('newRole')}
            scope="roles:write"
            onSubmit={async (d) => {
              const r = await create.mutateAsync(d);
              await navigate({ to: '/roles/$id', params: { id: r.id } });
            }}
          >
            <Field label={t('name')}>{(id) => <input id={id} name="role_name" required />}</Field>
            <Field label={t('description')}>{(id) => <input id={id} name="role_description" />}</Field>
          </FormDialog>
        ) : null}
      </PageHeader>
      <ListTable
        group="roles"
        path="/api/v1/roles"
        caption={t('roles')}
        searchFields={['role_name', 'role_description']}
        defaultFields={['role_name', 'role_description', 'created_at']}
        rowLink={(r) => ({ to: '/roles/$id', params: { id: r.id } })}
        columns={[
          { field: 'role_name', label: t('name'), sortable: true },
          { field: 'role_description', label: t('description') },
          { field: 'tenant_id', label: t('tenants') },
          { field: 'created_at', label: t('created'), sortable: true },
          { field: 'id', label: t('id') },
        ]}
      />
    </Guard>
  );
}

/** A role's, user's or client's scopes on resources: the list, remove, and add from the scope catalog. */
export function PermissionEditor({
  title,
  listPath,
  path,
  writable,
  writeScope,
}: {
  title?: string;
  listPath: string;
  path: Record<string, string>;
  writable: boolean;
  writeScope: string;
}) {
  const t = useT();
  const grants = useGrants();
  const pickId = useId();
  const catalog = useScopeCatalog(grants.read('resources'));
  const [picked, setPicked] = useState('');
  const list = useGet<{ items: { id: string; resource_id: string; scope_id: string }[] }>(listPath, {
    path,
    query: { limit: 100 },
  });
  const body = (scopeId: string) => {
    const s = catalog.byId.get(scopeId);
    return { permissions: [{ resource_id: s?.resource_id ?? '', scopes: [scopeId] }] };
  };
  const add = useChange((call, scopeId: string) => call('POST', listPath, { path, body: body(scopeId) }));
  const remove = useChange((call, p: { resource_id: string; scope_id: string }) =>
    call('DELETE', listPath, {
      path,
      body: { permissions: [{ resource_id: p.resource_id, scopes: [p.scope_id] }] },
    }),
  );
  const held = new Set((list.data?.items ?? []).map((p) => p.scope_id));
  const name = (scopeId: string) => {
    const s = catalog.byId.get(scopeId);
    return s ? `${s.scope_name} (${s.resource_name})` : scopeId;
  };
  return (
    <section aria-labelledby={`${pickId}-h`}>
      <h2 id={`${pickId}-h`}>{title ?? t('permissions')}</h2>
      <ErrorBox
        error={list.error ?? add.error ?? remove.error}
        scope={add.error || remove.error ? writeScope : undefined}
      />
      <ul className="link-list">
        {(list.data?.items ?? []).map((p) => (
          <li key={p.id}>
            <code>{name(p.scope_id)}</code>
            {writable ? (
              <ConfirmButton
                className="danger small"
                label={t('remove')}
                question={`${t('remove')}: ${name(p.scope_id)}?`}
                onConfirm={() =>
                  remove.mutateAsync(p).then(
                    () => undefined,
                    () => undefined,
                  )
                }
              />
            ) : null}
          </li>
        ))}
      </ul>
      {list.data && !list.data.items.length ? <p>{t('none')}</p> : null}
      {writable ? (
        <form
          className="inline-add"
          onSubmit={(e) => {
            e.preventDefault();
            if (picked)
              void add.mutateAsync(picked).then(
                () => setPicked(''),
                () => undefined,
              );
          }}
        >
          <label htmlFor={pickId}>{t('grant')}</label>
          <select id={pickId} value={picked} onChange={(e) => setPicked(e.target.value)}>
            <option value="">{t('pick')}</option>
            {catalog.scopes
              .filter((s) => !held.has(s.id))
              .map((s) => (
                <option key={s.id} value={s.id}>
                  {s.scope_name} ({s.resource_name})
                </option>
              ))}
          </select>
          <button type="submit" className="secondary" disabled={!picked}>
            {t('add')}
          </button>
        </form>
      ) : null}
    </section>
  );
}

export function RolePage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const { id } = useParams({ strict: false }) as { id: string };
  const path = { role_id: id };
  const role = useGet<Role>('/api/v1/roles/{role_id}', { path });
  const users = useNames('/api/v1/users', 'user_email', grants.read('users'));
  const remove = useChange((call) => call('DELETE', '/api/v1/roles/{role_id}', { path }));
  const write = grants.write('roles');
  if (role.isPending) return <Loading />;
  if (role.error) return <ErrorBox error={role.error} scope="roles:read" />;
  const r = role.data;
  return (
    <Guard group="roles">
      <BackLink to="/roles" label={t('roles')} />
      <PageHeader title={r.role_name}>
        {write ? (
          <ConfirmButton
            label={t('delete')}
            question={t('confirmDelete', { name: r.role_name })}
            onConfirm={() =>
              remove.mutateAsync(undefined).then(
                () => void navigate({ to: '/roles' }),
                () => undefined,
              )
            }
          />
        ) : null}
      </PageHeader>
      <ErrorBox error={remove.error} scope="roles:write" />
      {r.role_description ? <p>{r.role_description}</p> : null}
      <div className="columns">
        <PermissionEditor
          listPath="/api/v1/roles/{role_id}/permissions"
          path={path}
          writable={write}
          writeScope="roles:write"
        />
        <LinkedList
          title={t('members')}
          listPath="/api/v1/roles/{role_id}/members"
          path={path}
          bodyKey="users"
          linkField="user_id"
          choices={users.items}
          name={users.name}
          writable={write}
          writeScope="roles:write"
          to="/users/$id"
          addLabel={t('addMember')}
        />
      </div>
    </Guard>
  );
}
