import { Link } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { useT } from './app-context';
import { useChange, useGet } from './hooks';
import { ConfirmButton, ErrorBox } from './kit';

/**
 * A linked collection (a user's roles, a group's members, a tenant's admins...): the list with a remove button
 * each (confirmed), and a picker to add one. `listPath` lists the links, `bodyKey` names the ids in the
 * POST/DELETE body (`{"roles": [id]}`), `linkField` is the linked record's id in a link item.
 */
export function LinkedList({
  title,
  listPath,
  path,
  bodyKey,
  linkField,
  choices,
  name,
  writable,
  writeScope,
  to,
  addLabel,
}: {
  title: string;
  listPath: string;
  path: Record<string, string>;
  bodyKey: string;
  linkField: string;
  choices: { id: string; name: string }[];
  name(id: string): string;
  writable: boolean;
  writeScope: string;
  to?: string;
  addLabel: string;
}) {
  const t = useT();
  const selectId = useId();
  const headingId = useId();
  const [picked, setPicked] = useState('');
  const list = useGet<{ items: Record<string, string>[] }>(listPath, { path, query: { limit: 100 } });
  const add = useChange((call, ids: string[]) => call('POST', listPath, { path, body: { [bodyKey]: ids } }));
  const remove = useChange((call, ids: string[]) =>
    call('DELETE', listPath, { path, body: { [bodyKey]: ids } }),
  );
  const linked = (list.data?.items ?? []).map((i) => i[linkField] ?? i.id).filter(Boolean) as string[];
  return (
    <section aria-labelledby={headingId} className="linked">
      <h2 id={headingId}>{title}</h2>
      <ErrorBox
        error={list.error ?? add.error ?? remove.error}
        scope={add.error || remove.error ? writeScope : undefined}
      />
      <ul className="link-list">
        {linked.map((id) => (
          <li key={id}>
            {to ? (
              <Link to={to} params={{ id }}>
                {name(id)}
              </Link>
            ) : (
              name(id)
            )}
            {writable ? (
              <ConfirmButton
                className="danger small"
                label={t('remove')}
                question={`${t('remove')}: ${name(id)}?`}
                onConfirm={() =>
                  remove.mutateAsync([id]).then(
                    () => undefined,
                    () => undefined,
                  )
                }
              />
            ) : null}
          </li>
        ))}
      </ul>
      {list.data && !linked.length ? <p>{t('none')}</p> : null}
      {writable ? (
        <form
          className="inline-add"
          onSubmit={(e) => {
            e.preventDefault();
            if (picked)
              void add.mutateAsync([picked]).then(
                () => setPicked(''),
                () => undefined,
              );
          }}
        >
          <label htmlFor={selectId}>{addLabel}</label>
          <select id={selectId} value={picked} onChange={(e) => setPicked(e.target.value)}>
            <option value="">{t('pick')}</option>
            {choices
              .filter((c) => !linked.includes(c.id))
              .map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
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
