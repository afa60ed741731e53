import { useId, type ReactNode } from 'react';
import { useT } from './app-context';
import { useChange, useGet } from './hooks';
import { ConfirmButton, ErrorBox } from './kit';

export interface SubColumn<R> {
  label: string;
  render(row: R): ReactNode;
}

/**
 * A record's child collection shown as a table (a user's identities, grants, authenticators), each row with a
 * confirmed delete when `deletePath` is given (`{...path, [idParam]: row.id}`).
 */
export function SubList<R extends { id: string }>({
  title,
  listPath,
  path,
  columns,
  deletePath,
  idParam,
  deleteLabel,
  describe,
  writable,
  writeScope,
  readScope,
}: {
  title: string;
  listPath: string;
  path: Record<string, string>;
  columns: SubColumn<R>[];
  deletePath?: string;
  idParam?: string;
  deleteLabel?: string;
  describe(row: R): string;
  writable: boolean;
  writeScope: string;
  readScope: string;
}) {
  const t = useT();
  const headingId = useId();
  const list = useGet<{ items: R[] }>(listPath, { path, query: { limit: 100 } });
  const remove = useChange((call, id: string) =>
    call('DELETE', deletePath ?? '', { path: { ...path, [idParam ?? 'id']: id } }),
  );
  const items = list.data?.items ?? [];
  const canDelete = writable && deletePath !== undefined;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      <ErrorBox error={list.error} scope={readScope} />
      <ErrorBox error={remove.error} scope={writeScope} />
      {items.length ? (
        <table>
          <caption className="visually-hidden">{title}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.label} scope="col">
                  {c.label}
                </th>
              ))}
              {canDelete ? <th scope="col">{t('actions')}</th> : null}
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr key={r.id}>
                {columns.map((c) => (
                  <td key={c.label}>{c.render(r)}</td>
                ))}
                {canDelete ? (
                  <td>
                    <ConfirmButton
                      className="danger small"
                      label={deleteLabel ?? t('remove')}
                      question={`${deleteLabel ?? t('remove')}: ${describe(r)}?`}
                      onConfirm={() =>
                        remove.mutateAsync(r.id).then(
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
      ) : list.data ? (
        <p>{t('none')}</p>
      ) : null}
    </section>
  );
}
