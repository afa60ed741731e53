import { useQueries } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { MessageKey } from '../lib/i18n';
import type { Group } from '../lib/scopes';
import { useGrants, useT } from '../ui/app-context';
import { useCall } from '../ui/hooks';
import { ErrorBox, PageHeader } from '../ui/kit';

const COUNTED: { group: Group; path: string; label: MessageKey; to: string }[] = [
  { group: 'clients', path: '/api/v1/clients', label: 'clients', to: '/clients' },
  { group: 'resources', path: '/api/v1/resources', label: 'resources', to: '/resources' },
  { group: 'users', path: '/api/v1/users', label: 'users', to: '/users' },
  { group: 'roles', path: '/api/v1/roles', label: 'roles', to: '/roles' },
  { group: 'groups', path: '/api/v1/groups', label: 'groups', to: '/groups' },
  { group: 'tenants', path: '/api/v1/tenants', label: 'tenants', to: '/tenants' },
];

/** Counts of what the administrator may read: one `limit=1&total_count=true` list per kind. */
export function Dashboard() {
  const t = useT();
  const grants = useGrants();
  const call = useCall();
  const shown = COUNTED.filter((c) => grants.read(c.group));
  const counts = useQueries({
    queries: shown.map((c) => ({
      queryKey: [c.path, 'count'],
      queryFn: () =>
        call<{ total_count?: number }>('GET', c.path, {
          query: { limit: 1, total_count: true, fields: 'id' },
        }),
    })),
  });
  return (
    <>
      <PageHeader title={t('dashboard')} />
      <p>{t('dashboardIntro')}</p>
      <ul className="cards">
        {shown.map((c, i) => {
          const q = counts[i];
          return (
            <li key={c.group} className="card">
              <Link to={c.to}>
                <span className="card-label">{t(c.label)}</span>
                <span className="card-count" data-count={c.group}>
                  {q?.data?.total_count ?? (q?.isPending ? '…' : '–')}
                </span>
              </Link>
              {q?.error ? <ErrorBox error={q.error} scope={`${c.group}:read`} /> : null}
            </li>
          );
        })}
      </ul>
    </>
  );
}
