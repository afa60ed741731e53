import { useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { useApp, useGrants, useT } from '../ui/app-context';
import { useNames, useScopeCatalog } from '../ui/catalog';
import { FormDialog, text } from '../ui/dialog';
import { useChange, useGet } from '../ui/hooks';
import { ConfirmButton, ErrorBox, Field, formatDate, Loading, Notice, PageHeader } from '../ui/kit';
import { LinkedList } from '../ui/links';
import { ListTable, type Row } from '../ui/list-page';
import { SubList } from '../ui/sub-list';
import { PermissionEditor } from './roles';
import { BackLink, Guard } from './common';

interface User extends Row {
  user_email: string | null;
  user_name: string | null;
  user_fullName: string | null;
  user_nickname: string | null;
  user_email_verified: boolean;
  user_phone_verified: boolean;
  is_blocked: boolean;
  tenant_id?: string | null;
}

interface EffectivePermission {
  resource_id: string;
  scope_id: string;
  scope_name: string;
  identifier_url: string | null;
  source: 'direct' | 'role' | 'group';
  role_id: string | null;
  group_id: string | null;
}

const label = (u: User) => u.user_email ?? u.user_name ?? u.id;

export function UsersPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const { session } = useApp();
  const create = useChange((call, d: FormData) =>
    call<User>('POST', '/api/v1/users', {
      body: {
        user_email: text(d, 'user_email') || null,
        user_name: text(d, 'user_name') || null,
        user_fullName: text(d, 'user_fullName') || null,
        ...(text(d, 'password') ? { password: text(d, 'password') } : {}),
        user_email_verified: false,
        user_phone_verified: false,
        ...(session.user?.tenantId ? { tenant_id: session.user.tenantId } : {}),
      },
    }),
  );
  const invite = useChange((call, d: FormData) =>
    call<User>('POST', '/api/v1/users/invite', {
      body: {
        user_email: text(d, 'user_email'),
        user_fullName: text(d, 'user_fullName') || null,
        user_phone_verified: false,
        ...(session.user?.tenantId ? { tenant_id: session.user.tenantId } : {}),
      },
    }),
  );
  return (
    <Guard group="users">
      <PageHeader title={t('users')}>
        {grants.write('users') ? (
          <FormDialog
            id="new-user"
            label={t('newUser')}
            title={t('newUser')}
            scope="users:write"
            onSubmit={async (d) => {
              const u = await create.mutateAsync(d);
              await navigate({ to: '/users/$id', params: { id: u.id } });
            }}
          >
            <Field label={t('email')}>
              {(id) => <input id={id} name="user_email" type="email" required />}
            </Field>
            <Field label={t('userName')}>{(id) => <input id={id} name="user_name" />}</Field>
            <Field label={t('name')}>{(id) => <input id={id} name="user_fullName" />}</Field>
            <Field label={t('password')}>
              {(id) => <input id={id} name="password" type="password" autoComplete="new-password" />}
            </Field>
          </FormDialog>
        ) : null}
        {grants.write('users') ? (
          <FormDialog
            id="invite-user"
            label={t('inviteUser')}
            title={t('inviteUser')}
            submitLabel={t('invite')}
            scope="users:write"
            onSubmit={async (d) => {
              await invite.mutateAsync(d);
              return <Notice>{t('inviteSent')}</Notice>;
            }}
          >
            <Field label={t('email')}>
              {(id) => <input id={id} name="user_email" type="email" required />}
            </Field>
            <Field label={t('name')}>{(id) => <input id={id} name="user_fullName" />}</Field>
          </FormDialog>
        ) : null}
      </PageHeader>
      <ListTable
        group="users"
        path="/api/v1/users"
        caption={t('users')}
        searchFields={['user_email', 'user_name', 'user_fullName']}
        defaultFields={['user_email', 'user_name', 'user_fullName', 'is_blocked', 'created_at']}
        rowLink={(r) => ({ to: '/users/$id', params: { id: r.id } })}
        columns={[
          { field: 'user_email', label: t('email'), sortable: true },
          { field: 'user_name', label: t('userName'), sortable: true },
          { field: 'user_fullName', label: t('name') },
          {
            field: 'is_blocked',
            label: t('status'),
            render: (r) => (r.is_blocked ? t('blocked') : t('active')),
          },
          { field: 'created_at', label: t('created'), sortable: true },
          { field: 'id', label: t('id') },
        ]}
      />
    </Guard>
  );
}

export function UserPage() {
  const t = useT();
  const { lang } = useApp();
  const grants = useGrants();
  const navigate = useNavigate();
  const { id } = useParams({ strict: false }) as { id: string };
  const path = { user_id: id };
  const user = useGet<User>('/api/v1/users/{user_id}', { path });
  const roles = useNames('/api/v1/roles', 'role_name', grants.read('roles'));
  const groups = useNames('/api/v1/groups', 'group_name', grants.read('groups'));
  const catalog = useScopeCatalog(grants.read('resources'));
  const effective = useGet<{ items: EffectivePermission[] }>('/api/v1/users/{user_id}/permissions', {
    path,
    query: { effective: true, limit: 100 },
  });
  const [saved, setSaved] = useState<string>();
  const update = useChange((call, d: FormData) =>
    call('PATCH', '/api/v1/users/{user_id}', {
      path,
      body: {
        user_email: text(d, 'user_email') || null,
        user_name: text(d, 'user_name') || null,
        user_fullName: text(d, 'user_fullName') || null,
        user_email_verified: d.get('user_email_verified') === 'on',
        user_phone_verified: user.data?.user_phone_verified ?? false,
      },
    }),
  );
  const block = useChange((call, on: boolean) =>
    call('POST', on ? '/api/v1/users/{user_id}/block' : '/api/v1/users/{user_id}/unblock', { path }),
  );
  const password = useChange((call, p: string) =>
    call('PUT', '/api/v1/users/{user_id}/password', { path, body: { password: p } }),
  );
  const remove = useChange((call) => call('DELETE', '/api/v1/users/{user_id}', { path }));
  const write = grants.write('users');
  if (user.isPending) return <Loading />;
  if (user.error) return <ErrorBox error={user.error} scope="users:read" />;
  const u = user.data;
  const onSave = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setSaved(undefined);
    await update.mutateAsync(new FormData(e.currentTarget)).then(
      () => setSaved(t('saved')),
      () => undefined,
    );
  };
  const onPassword = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    setSaved(undefined);
    await password.mutateAsync(text(new FormData(form), 'password')).then(
      () => {
        form.reset();
        setSaved(t('passwordSet'));
      },
      () => undefined,
    );
  };
  const sourceOf = (p: EffectivePermission) => {
    if (p.source === 'direct') return t('sourceDirect');
    const role = p.role_id ? roles.name(p.role_id) : '';
    if (p.source === 'role') return t('sourceRole', { name: role });
    const group = p.group_id ? groups.name(p.group_id) : '';
    return p.role_id ? t('sourceGroupRole', { role, name: group }) : t('sourceGroup', { name: group });
  };
  return (
    <Guard group="users">
      <BackLink to="/users" label={t('users')} />
      <PageHeader title={label(u)}>
        <span className={`badge ${u.is_blocked ? 'bad' : 'good'}`} id="user-status">
          {u.is_blocked ? t('blocked') : t('active')}
        </span>
        {write ? (
          u.is_blocked ? (
            <button type="button" className="secondary" onClick={() => block.mutate(false)}>
              {t('unblock')}
            </button>
          ) : (
            <ConfirmButton
              id="block-user"
              label={t('block')}
              question={t('blockConfirm', { name: label(u) })}
              onConfirm={() =>
                block.mutateAsync(true).then(
                  () => undefined,
                  () => undefined,
                )
              }
            />
          )
        ) : null}
        {write ? (
          <ConfirmButton
            label={t('delete')}
            question={t('confirmDelete', { name: label(u) })}
            onConfirm={() =>
              remove.mutateAsync(undefined).then(
                () => void navigate({ to: '/users' }),
                () => undefined,
              )
            }
          />
        ) : null}
      </PageHeader>
      <ErrorBox error={block.error ?? remove.error} scope="users:write" />
      {saved ? <Notice>{saved}</Notice> : null}
      <div className="columns">
        <section aria-labelledby="user-general">
          <h2 id="user-general">{t('general')}</h2>
          <form onSubmit={(e) => void onSave(e)} key={u.updated_at as string}>
            <fieldset disabled={!write} className="plain">
              <Field label={t('email')}>
                {(fid) => <input id={fid} name="user_email" type="email" defaultValue={u.user_email ?? ''} />}
              </Field>
              <label className="check">
                <input type="checkbox" name="user_email_verified" defaultChecked={u.user_email_verified} />{' '}
                e-mail verified
              </label>
              <Field label={t('userName')}>
                {(fid) => <input id={fid} name="user_name" defaultValue={u.user_name ?? ''} />}
              </Field>
              <Field label={t('name')}>
                {(fid) => <input id={fid} name="user_fullName" defaultValue={u.user_fullName ?? ''} />}
              </Field>
            </fieldset>
            <ErrorBox error={update.error} scope="users:write" />
            {write ? <button type="submit">{t('save')}</button> : null}
          </form>
          {write ? (
            <form onSubmit={(e) => void onPassword(e)} className="password-form">
              <Field label={t('newPassword')}>
                {(fid) => (
                  <input id={fid} name="password" type="password" autoComplete="new-password" required />
                )}
              </Field>
              <ErrorBox error={password.error} scope="users:write" />
              <button type="submit" className="secondary">
                {t('setPassword')}
              </button>
            </form>
          ) : null}
        </section>
        <div>
          {grants.read('roles') ? (
            <LinkedList
              title={t('roles')}
              listPath="/api/v1/users/{user_id}/roles"
              path={path}
              bodyKey="roles"
              linkField="role_id"
              choices={roles.items}
              name={roles.name}
              writable={write}
              writeScope="users:write"
              to="/roles/$id"
              addLabel={t('addRole')}
            />
          ) : null}
          {grants.read('groups') ? (
            <LinkedList
              title={t('groups')}
              listPath="/api/v1/users/{user_id}/groups"
              path={path}
              bodyKey="groups"
              linkField="group_id"
              choices={groups.items}
              name={groups.name}
              writable={write}
              writeScope="users:write"
              to="/groups/$id"
              addLabel={t('addToGroup')}
            />
          ) : null}
        </div>
      </div>
      <section aria-labelledby="user-effective">
        <h2 id="user-effective">{t('effectivePermissions')}</h2>
        <ErrorBox error={effective.error} scope="users:read" />
        <table id="effective-permissions">
          <caption className="visually-hidden">{t('effectivePermissions')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('scope')}</th>
              <th scope="col">{t('resource')}</th>
              <th scope="col">{t('source')}</th>
            </tr>
          </thead>
          <tbody>
            {(effective.data?.items ?? []).map((p, i) => (
              <tr key={`${p.scope_id}-${i}`}>
                <td>
                  <code>{p.scope_name}</code>
                </td>
                <td>{catalog.byId.get(p.scope_id)?.resource_name ?? p.identifier_url ?? p.resource_id}</td>
                <td>{sourceOf(p)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {effective.data && !effective.data.items.length ? <p>{t('none')}</p> : null}
      </section>
      <div className="columns">
        <PermissionEditor
          title={t('directPermissions')}
          listPath="/api/v1/users/{user_id}/permissions"
          path={path}
          writable={write}
          writeScope="users:write"
        />
        <SubList<{
          id: string;
          identity_provider: string;
          identity_provider_id: string | null;
          issuer: string | null;
        }>
          title={t('identities')}
          listPath="/api/v1/users/{user_id}/identities"
          path={path}
          deletePath="/api/v1/users/{user_id}/identities/{identity_id}"
          idParam="identity_id"
          describe={(r) => r.identity_provider}
          writable={write}
          writeScope="users:write"
          readScope="users:read"
          columns={[
            { label: t('provider'), render: (r) => r.identity_provider },
            { label: t('id'), render: (r) => <code>{r.identity_provider_id ?? r.issuer ?? ''}</code> },
          ]}
        />
      </div>
      <SubList<{
        id: string;
        client_name: string | null;
        client_id: string;
        scopes: string[];
        expires_at: string | null;
      }>
        title={t('grants')}
        listPath="/api/v1/users/{user_id}/grants"
        path={path}
        deletePath="/api/v1/users/{user_id}/grants/{grant_id}"
        idParam="grant_id"
        deleteLabel={t('revoke')}
        describe={(r) => r.client_name ?? r.client_id}
        writable={write}
        writeScope="users:write"
        readScope="users:read"
        columns={[
          { label: t('application'), render: (r) => r.client_name ?? r.client_id },
          { label: t('scopes'), render: (r) => <code>{r.scopes.join(' ')}</code> },
        ]}
      />
      <SubList<{ id: string; type: string; name: string; confirmed_at: string | null }>
        title={t('authenticators')}
        listPath="/api/v1/users/{user_id}/authenticators"
        path={path}
        deletePath="/api/v1/users/{user_id}/authenticators/{authenticator_id}"
        idParam="authenticator_id"
        describe={(r) => r.name}
        writable={write}
        writeScope="users:write"
        readScope="users:read"
        columns={[
          { label: t('type'), render: (r) => r.type },
          { label: t('name'), render: (r) => r.name },
          { label: t('created'), render: (r) => formatDate(r.confirmed_at, lang) },
        ]}
      />
    </Guard>
  );
}
