import { useState, type FormEvent } from 'react';
import { useGrants, useT } from '../ui/app-context';
import { useNames } from '../ui/catalog';
import { text } from '../ui/dialog';
import { useChange, useGet } from '../ui/hooks';
import { CopyButton, ErrorBox, Field, Loading, PageHeader } from '../ui/kit';
import { Guard } from './common';

/** Password-change and e-mail verification tickets: a link to a page of the token server, shown to copy. */
export function TicketsPage() {
  const t = useT();
  const grants = useGrants();
  const users = useNames('/api/v1/users', 'user_email', grants.read('users'));
  const [link, setLink] = useState<string>();
  const make = useChange((call, d: FormData) =>
    call<{ ticket: string }>(
      'POST',
      text(d, 'kind') === 'email' ? '/api/v1/tickets/email-verification' : '/api/v1/tickets/password-change',
      { body: { user_id: text(d, 'user_id') } },
    ),
  );
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setLink(undefined);
    const r = await make.mutateAsync(new FormData(e.currentTarget)).catch(() => undefined);
    if (r) setLink(r.ticket);
  };
  return (
    <Guard group="tickets">
      <PageHeader title={t('tickets')} />
      {grants.write('tickets') ? (
        <form onSubmit={(e) => void onSubmit(e)} className="card-form">
          <fieldset className="checks">
            <legend>{t('type')}</legend>
            <label className="check">
              <input type="radio" name="kind" value="password" defaultChecked /> {t('ticketPassword')}
            </label>
            <label className="check">
              <input type="radio" name="kind" value="email" /> {t('ticketEmail')}
            </label>
          </fieldset>
          <Field label={t('ticketUser')}>
            {(id) => (
              <select id={id} name="user_id" required>
                <option value="">{t('pickUser')}</option>
                {users.items.map((u) => (
                  <option key={u.id} value={u.id}>
                    {u.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <ErrorBox error={make.error} scope="tickets:write" />
          <button type="submit">{t('makeTicket')}</button>
        </form>
      ) : (
        <div className="alert" role="alert" data-status="403">
          <p>{t('forbidden', { scope: 'tickets:write' })}</p>
        </div>
      )}
      {link ? (
        <div className="notice" role="status">
          <p>{t('ticketResult')}</p>
          <p>
            <code id="ticket-link">{link}</code> <CopyButton value={link} />
          </p>
        </div>
      ) : null}
    </Guard>
  );
}

/** Instances (multi-instance mode): the list; the API answers 501 when the mode is off, shown as it says. */
export function InstancesPage() {
  const t = useT();
  const q = useGet<{
    items: { id: string; name: string; description?: string | null; is_default?: boolean }[];
  }>('/api/v1/instances', { query: { limit: 100 } });
  return (
    <Guard group="instances">
      <PageHeader title={t('instances')} />
      {q.isPending ? <Loading /> : null}
      <ErrorBox error={q.error} scope="instances:read" />
      {q.data ? (
        <table>
          <caption className="visually-hidden">{t('instances')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('name')}</th>
              <th scope="col">{t('description')}</th>
              <th scope="col">{t('id')}</th>
            </tr>
          </thead>
          <tbody>
            {q.data.items.map((i) => (
              <tr key={i.id}>
                <td>{i.name}</td>
                <td>{i.description}</td>
                <td>
                  <code>{i.id}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Guard>
  );
}

export function NotFoundPage() {
  const t = useT();
  return <PageHeader title={t('notFound')} />;
}
