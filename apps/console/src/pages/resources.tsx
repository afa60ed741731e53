import { useNavigate, useParams } from '@tanstack/react-router';
import { useGrants, useT } from '../ui/app-context';
import { FormDialog, text } from '../ui/dialog';
import { useChange, useGet } from '../ui/hooks';
import { ConfirmButton, ErrorBox, Field, Loading, PageHeader } from '../ui/kit';
import { ListTable, type Row } from '../ui/list-page';
import { BackLink, Guard } from './common';

interface Resource extends Row {
  resource_name: string;
  resource_description: string | null;
  identifier_url?: string | null;
  is_system?: boolean;
  /** /api/v1 carries the system flag and the identifier here (document 1's resource_metadata). */
  resource_metadata?: { is_system?: boolean; identifier_url?: string | null };
}
interface Scope {
  id: string;
  scope_name: string;
  scope_description: string | null;
}

export function ResourcesPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const create = useChange((call, d: FormData) =>
    call<Resource>('POST', '/api/v1/resources', {
      body: {
        resource_name: text(d, 'resource_name'),
        resource_description: text(d, 'resource_description') || null,
        resource_metadata: { identifier_url: text(d, 'identifier_url') },
      },
    }),
  );
  return (
    <Guard group="resources">
      <PageHeader title={t('resources')}>
        {grants.write('resources') ? (
          <FormDialog
            id="new-resource"
            label={t('newResource')}
            title={t('newResource')}
            scope="resources:write"
            onSubmit={async (d) => {
              const r = await create.mutateAsync(d);
              await navigate({ to: '/resources/$id', params: { id: r.id } });
            }}
          >
            <Field label={t('name')}>{(id) => <input id={id} name="resource_name" required />}</Field>
            <Field label={t('identifier')}>
              {(id) => <input id={id} name="identifier_url" required placeholder="https://api.example.com" />}
            </Field>
            <Field label={t('description')}>{(id) => <input id={id} name="resource_description" />}</Field>
          </FormDialog>
        ) : null}
      </PageHeader>
      <ListTable
        group="resources"
        path="/api/v1/resources"
        caption={t('resources')}
        searchFields={['resource_name', 'resource_description']}
        defaultFields={['resource_name', 'resource_description', 'created_date']}
        rowLink={(r) => ({ to: '/resources/$id', params: { id: r.id } })}
        columns={[
          { field: 'resource_name', label: t('name'), sortable: true },
          { field: 'resource_description', label: t('description') },
          { field: 'resource_type', label: t('type') },
          { field: 'created_date', label: t('created'), sortable: true },
          { field: 'id', label: t('id') },
        ]}
      />
    </Guard>
  );
}

export function ResourcePage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const { id } = useParams({ strict: false }) as { id: string };
  const path = { resource_id: id };
  const resource = useGet<Resource>('/api/v1/resources/{resource_id}', { path });
  const scopes = useGet<{ items: Scope[] }>('/api/v1/resources/{resource_id}/scopes', {
    path,
    query: { limit: 100 },
  });
  const addScope = useChange((call, d: FormData) =>
    call('POST', '/api/v1/resources/{resource_id}/scopes', {
      path,
      body: { scope_name: text(d, 'scope_name'), scope_description: text(d, 'scope_description') || null },
    }),
  );
  const removeScope = useChange((call, scopeId: string) =>
    call('DELETE', '/api/v1/resources/{resource_id}/scopes/{scope_id}', {
      path: { ...path, scope_id: scopeId },
    }),
  );
  const remove = useChange((call) => call('DELETE', '/api/v1/resources/{resource_id}', { path }));
  const write = grants.write('resources');
  if (resource.isPending) return <Loading />;
  if (resource.error) return <ErrorBox error={resource.error} scope="resources:read" />;
  const r = resource.data;
  const system = (r.resource_metadata?.is_system ?? r.is_system) === true;
  const identifier = r.resource_metadata?.identifier_url ?? r.identifier_url ?? '';
  return (
    <Guard group="resources">
      <BackLink to="/resources" label={t('resources')} />
      <PageHeader title={r.resource_name}>
        {system ? <span className="badge">{t('system')}</span> : null}
        {write && !system ? (
          <ConfirmButton
            label={t('delete')}
            question={t('confirmDelete', { name: r.resource_name })}
            onConfirm={() =>
              remove.mutateAsync(undefined).then(
                () => void navigate({ to: '/resources' }),
                () => undefined,
              )
            }
          />
        ) : null}
      </PageHeader>
      <ErrorBox error={remove.error ?? removeScope.error} scope="resources:write" />
      <p className="meta">
        {t('identifier')}: <code>{identifier}</code>
      </p>
      <section aria-labelledby="scopes-h">
        <h2 id="scopes-h">{t('scopes')}</h2>
        {write && !system ? (
          <FormDialog
            label={t('newScope')}
            title={t('newScope')}
            scope="resources:write"
            onSubmit={async (d) => {
              await addScope.mutateAsync(d);
            }}
          >
            <Field label={t('scopeName')}>{(fid) => <input id={fid} name="scope_name" required />}</Field>
            <Field label={t('description')}>{(fid) => <input id={fid} name="scope_description" />}</Field>
          </FormDialog>
        ) : null}
        <ErrorBox error={scopes.error} scope="resources:read" />
        <table>
          <caption className="visually-hidden">{t('scopes')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('scopeName')}</th>
              <th scope="col">{t('description')}</th>
              {write && !system ? <th scope="col">{t('actions')}</th> : null}
            </tr>
          </thead>
          <tbody>
            {(scopes.data?.items ?? []).map((s) => (
              <tr key={s.id}>
                <td>
                  <code>{s.scope_name}</code>
                </td>
                <td>{s.scope_description}</td>
                {write && !system ? (
                  <td>
                    <ConfirmButton
                      className="danger small"
                      label={t('delete')}
                      question={t('confirmDelete', { name: s.scope_name })}
                      onConfirm={() =>
                        removeScope.mutateAsync(s.id).then(
                          () => undefined,
                          () => undefined,
                        )
                      }
                    />
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </Guard>
  );
}
