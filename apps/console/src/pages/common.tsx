import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import type { Group } from '../lib/scopes';
import { useGrants, useT } from '../ui/app-context';

/** The page's content when the administrator may read `group`; otherwise the 403 explained, nothing fetched. */
export function Guard({ group, children }: { group: Group | 'trees'; children: ReactNode }) {
  const t = useT();
  const grants = useGrants();
  if (grants.read(group)) return <>{children}</>;
  return (
    <>
      <h1>{t('forbiddenTitle')}</h1>
      <div className="alert" role="alert" data-status="403">
        <p>{t('forbidden', { scope: `${group}:read` })}</p>
      </div>
    </>
  );
}

export function BackLink({ to, label }: { to: string; label: string }) {
  return (
    <p className="back">
      <Link to={to}>← {label}</Link>
    </p>
  );
}

export const yesNo = (v: unknown) => (v === true ? '✓' : '');
