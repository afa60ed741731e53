import { useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { useApp, useGrants, useT } from '../ui/app-context';
import { FormDialog, text } from '../ui/dialog';
import { useChange, useGet } from '../ui/hooks';
import {
  ConfirmButton,
  CopyButton,
  ErrorBox,
  Field,
  Loading,
  Notice,
  PageHeader,
  splitLines,
} from '../ui/kit';
import { ListTable, type Row } from '../ui/list-page';
import { useNames } from '../ui/catalog';
import { LinkedList } from '../ui/links';
import { BackLink, Guard, yesNo } from './common';
import { PermissionEditor } from './roles';

const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'password',
  'implicit',
  'device_code',
  'otp',
  'token_exchange',
] as const;
const CLIENT_TYPES = ['spa', 'regular_web', 'native', 'non_interactive'] as const;

interface Client extends Row {
  client_name: string;
  client_description: string | null;
  client_type: string | null;
  client_secret?: string | null;
  is_public: boolean;
  is_first_party: boolean;
  is_global: boolean;
  client_metadata?: { grant_types?: string[]; urls?: { callbacks?: string[]; logout_urls?: string[] } };
}

/** A secret shown once, with its copy button. */
export function SecretOnce({ secret, clientId }: { secret: string; clientId: string }) {
  const t = useT();
  return (
    <div className="secret-once" id="secret-once">
      <p>{t('secretOnce')}</p>
      <dl>
        <dt>{t('clientId')}</dt>
        <dd>
          <code>{clientId}</code> <CopyButton value={clientId} />
        </dd>
        <dt>{t('secret')}</dt>
        <dd>
          <code className="secret" id="client-secret">
            {secret}
          </code>{' '}
          <CopyButton value={secret} />
        </dd>
      </dl>
    </div>
  );
}

function ClientFields({ client }: { client?: Client }) {
  const t = useT();
  const md = client?.client_metadata ?? {};
  return (
    <>
      <Field label={t('clientName')}>
        {(id) => <input id={id} name="client_name" required defaultValue={client?.client_name ?? ''} />}
      </Field>
      <Field label={t('description')}>
        {(id) => <input id={id} name="client_description" defaultValue={client?.client_description ?? ''} />}
      </Field>
      <Field label={t('clientType')}>
        {(id) => (
          <select id={id} name="client_type" defaultValue={client?.client_type ?? 'regular_web'}>
            {CLIENT_TYPES.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        )}
      </Field>
      {client ? null : (
        <label className="check">
          <input type="checkbox" name="is_public" /> {t('isPublic')}
        </label>
      )}
      <label className="check">
        <input type="checkbox" name="is_first_party" defaultChecked={client?.is_first_party ?? false} />{' '}
        {t('firstParty')}
      </label>
      <fieldset className="checks">
        <legend>{t('grantTypes')}</legend>
        {GRANT_TYPES.map((g) => (
          <label key={g} className="check">
            <input
              type="checkbox"
              name="grant_types"
              value={g}
              defaultChecked={(md.grant_types ?? (client ? [] : ['client_credentials'])).includes(g)}
            />{' '}
            {g}
          </label>
        ))}
      </fieldset>
      <Field label={t('callbacks')}>
        {(id) => (
          <textarea id={id} name="callbacks" rows={2} defaultValue={(md.urls?.callbacks ?? []).join('\n')} />
        )}
      </Field>
      <Field label={t('logoutUrls')}>
        {(id) => (
          <textarea
            id={id}
            name="logout_urls"
            rows={2}
            defaultValue={(md.urls?.logout_urls ?? []).join('\n')}
          />
        )}
      </Field>
    </>
  );
}

function clientBody(d: FormData, old?: Client) {
  return {
    client_name: text(d, 'client_name'),
    client_description: text(d, 'client_description') || null,
    client_type: text(d, 'client_type') || null,
    is_first_party: d.get('is_first_party') === 'on',
    client_metadata: {
      ...(old?.client_metadata ?? {}),
      grant_types: d.getAll('grant_types').map(String),
      urls: {
        ...(old?.client_metadata?.urls ?? {}),
        callbacks: splitLines(text(d, 'callbacks')),
        logout_urls: splitLines(text(d, 'logout_urls')),
      },
    },
  };
}

export function ClientsPage() {
  const t = useT();
  const grants = useGrants();
  const { session } = useApp();
  const navigate = useNavigate();
  const create = useChange((call, d: FormData) =>
    call<Client>('POST', '/api/v1/clients', {
      body: {
        ...clientBody(d),
        is_public: d.get('is_public') === 'on',
        is_global: !session.user?.tenantId,
        ...(session.user?.tenantId ? { tenant_id: session.user.tenantId } : {}),
      },
    }),
  );
  return (
    <Guard group="clients">
      <PageHeader title={t('clients')}>
        {grants.write('clients') ? (
          <FormDialog
            id="new-client"
            label={t('newClient')}
            title={t('newClient')}
            scope="clients:write"
            onSubmit={async (d) => {
              const c = await create.mutateAsync(d);
              if (c.client_secret) return <SecretOnce secret={c.client_secret} clientId={c.id} />;
              await navigate({ to: '/clients/$id', params: { id: c.id } });
            }}
          >
            <ClientFields />
          </FormDialog>
        ) : null}
      </PageHeader>
      <ListTable
        group="clients"
        path="/api/v1/clients"
        caption={t('clients')}
        searchFields={['client_name', 'client_description']}
        defaultFields={['client_name', 'client_type', 'is_public', 'created_at']}
        rowLink={(r) => ({ to: '/clients/$id', params: { id: r.id } })}
        columns={[
          { field: 'client_name', label: t('clientName'), sortable: true },
          { field: 'client_description', label: t('description') },
          { field: 'client_type', label: t('clientType') },
          { field: 'is_public', label: 'public', render: (r) => yesNo(r.is_public) },
          { field: 'is_first_party', label: 'first party', render: (r) => yesNo(r.is_first_party) },
          { field: 'created_at', label: t('created'), sortable: true },
          { field: 'id', label: t('id') },
        ]}
      />
    </Guard>
  );
}

export function ClientPage() {
  const t = useT();
  const grants = useGrants();
  const navigate = useNavigate();
  const { id } = useParams({ strict: false }) as { id: string };
  const path = { client_id: id };
  const client = useGet<Client>('/api/v1/clients/{client_id}', { path });
  const resourceNames = useNames('/api/v1/resources', 'resource_name', grants.read('resources'));
  const [secret, setSecret] = useState<string>();
  const [saved, setSaved] = useState(false);
  const update = useChange((call, d: FormData) =>
    call('PATCH', '/api/v1/clients/{client_id}', { path, body: clientBody(d, client.data) }),
  );
  const rotate = useChange((call) =>
    call<Client>('POST', '/api/v1/clients/{client_id}/rotate-secret', { path }),
  );
  const remove = useChange((call) => call('DELETE', '/api/v1/clients/{client_id}', { path }));
  const write = grants.write('clients');
  if (client.isPending) return <Loading />;
  if (client.error) return <ErrorBox error={client.error} scope="clients:read" />;
  const c = client.data;
  const onSave = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setSaved(false);
    await update.mutateAsync(new FormData(e.currentTarget)).then(
      () => setSaved(true),
      () => undefined,
    );
  };
  return (
    <Guard group="clients">
      <BackLink to="/clients" label={t('clients')} />
      <PageHeader title={c.client_name}>
        {write && !c.is_public ? (
          <ConfirmButton
            id="rotate-secret"
            label={t('rotateSecret')}
            danger={false}
            question={t('rotateConfirm', { name: c.client_name })}
            onConfirm={async () => {
              const r = await rotate.mutateAsync(undefined).catch(() => undefined);
              if (r?.client_secret) setSecret(r.client_secret);
            }}
          />
        ) : null}
        {write ? (
          <ConfirmButton
            label={t('delete')}
            question={t('confirmDelete', { name: c.client_name })}
            onConfirm={async () => {
              await remove.mutateAsync(undefined).then(
                () => navigate({ to: '/clients' }),
                () => undefined,
              );
            }}
          />
        ) : null}
      </PageHeader>
      <ErrorBox error={rotate.error ?? remove.error} scope="clients:write" />
      {secret ? <SecretOnce secret={secret} clientId={c.id} /> : null}
      <p className="meta">
        {t('clientId')}: <code>{c.id}</code> <CopyButton value={c.id} />
      </p>
      <section aria-labelledby="client-general">
        <h2 id="client-general">{t('general')}</h2>
        <form onSubmit={(e) => void onSave(e)} key={c.updated_at as string}>
          <fieldset disabled={!write} className="plain">
            <ClientFields client={c} />
          </fieldset>
          <ErrorBox error={update.error} scope="clients:write" />
          {saved ? <Notice>{t('saved')}</Notice> : null}
          {write ? <button type="submit">{t('save')}</button> : null}
        </form>
      </section>
      <div className="columns">
        <LinkedList
          title={t('authorizedResources')}
          listPath="/api/v1/clients/{client_id}/resources"
          path={path}
          bodyKey="resources"
          linkField="resource_id"
          choices={resourceNames.items}
          name={resourceNames.name}
          writable={write}
          writeScope="clients:write"
          to="/resources/$id"
          addLabel={t('authorizeResource')}
        />
        <PermissionEditor
          listPath="/api/v1/clients/{client_id}/permissions"
          path={path}
          writable={write}
          writeScope="clients:write"
        />
      </div>
    </Guard>
  );
}
