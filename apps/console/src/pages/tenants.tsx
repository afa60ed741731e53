import { useNavigate, useParams } from '@tanstack/react-router';
import { useGrants, useT } from '../ui/app-context';
import { useNames } from '../ui/catalog';
import { FormDialog, text } from '../ui/dialog';
import { useChange, useGet } from '../ui/hooks';
import { ConfirmButton, ErrorBox, Field, Loading, PageHeader } from '../ui/kit';
import { LinkedList } from '../ui/links';
import { ListTable, type Row } from '../ui/list-page';
import { BackLink, Guard } from './common';

interface Tenant extends Row {
  tenant_name: string;
  tenant_description: string | null;
}

export function TenantsPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const create = useChange((call, d: FormData) =>
    call<Tenant>('POST', '/api/v1/tenants', {
      body: {
        tenant_name: text(d, 'tenant_name'),
        tenant_description: text(d, 'tenant_description') || null,
      },
    }),
  );
  return (
    <Guard group="tenants">
      <PageHeader title={t('tenants')}>
        {grants.write('tenants') ? (
          <FormDialog
            id="new-tenant"
            label={t('newTenant')}
            title={t('newTenant')}
            scope="tenants:write"
            onSubmit={async (d) => {
              const x = await create.mutateAsync(d);
              await navigate({ to: '/tenants/$id', params: { id: x.id } });
            }}
          >
            <Field label={t('name')}>{(id) => <input id={id} name="tenant_name" required />}</Field>
            <Field label={t('description')}>{(id) => <input id={id} name="tenant_description" />}</Field>
          </FormDialog>
        ) : null}
      </PageHeader>
      <ListTable
        group="tenants"
        path="/api/v1/tenants"
        caption={t('tenants')}
        searchFields={['tenant_name', 'tenant_description']}
        defaultFields={['tenant_name', 'tenant_description', 'created_at']}
        rowLink={(r) => ({ to: '/tenants/$id', params: { id: r.id } })}
        columns={[
          { field: 'tenant_name', label: t('name'), sortable: true },
          { field: 'tenant_description', label: t('description') },
          { field: 'created_at', label: t('created'), sortable: true },
          { field: 'id', label: t('id') },
        ]}
      />
    </Guard>
  );
}

export function TenantPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const { id } = useParams({ strict: false }) as { id: string };
  const path = { tenant_id: id };
  const tenant = useGet<Tenant>('/api/v1/tenants/{tenant_id}', { path });
  const users = useNames('/api/v1/users', 'user_email', grants.read('users'));
  const providers = useGet<{ items: { id: string; name?: string; issuer?: string }[] }>(
    '/api/v1/tenants/{tenant_id}/identity-providers',
    { path, query: { limit: 100 } },
  );
  const remove = useChange((call) => call('DELETE', '/api/v1/tenants/{tenant_id}', { path }));
  const write = grants.write('tenants');
  if (tenant.isPending) return <Loading />;
  if (tenant.error) return <ErrorBox error={tenant.error} scope="tenants:read" />;
  const x = tenant.data;
  return (
    <Guard group="tenants">
      <BackLink to="/tenants" label={t('tenants')} />
      <PageHeader title={x.tenant_name}>
        {write ? (
          <ConfirmButton
            label={t('delete')}
            question={t('confirmDelete', { name: x.tenant_name })}
            onConfirm={() =>
              remove.mutateAsync(undefined).then(
                () => void navigate({ to: '/tenants' }),
                () => undefined,
              )
            }
          />
        ) : null}
      </PageHeader>
      <ErrorBox error={remove.error} scope="tenants:write" />
      {x.tenant_description ? <p>{x.tenant_description}</p> : null}
      <div className="columns">
        <LinkedList
          title={t('admins')}
          listPath="/api/v1/tenants/{tenant_id}/admins"
          path={path}
          bodyKey="users"
          linkField="user_id"
          choices={users.items}
          name={users.name}
          writable={write}
          writeScope="tenants:write"
          to="/users/$id"
          addLabel={t('addAdmin')}
        />
        <section aria-labelledby="idp-h">
          <h2 id="idp-h">{t('identityProviders')}</h2>
          <ErrorBox error={providers.error} scope="tenants:read" />
          <ul>
            {(providers.data?.items ?? []).map((p) => (
              <li key={p.id}>
                {p.name ?? p.id} <code>{p.issuer}</code>
              </li>
            ))}
          </ul>
          {providers.data && !providers.data.items.length ? <p>{t('none')}</p> : null}
        </section>
      </div>
    </Guard>
  );
}
