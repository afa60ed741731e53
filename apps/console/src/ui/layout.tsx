import { Link, Outlet } from '@tanstack/react-router';
import { useId } from 'react';
import { LANGS, type Lang } from '../lib/i18n';
import type { Group } from '../lib/scopes';
import { GatehouseError } from '../lib/api';
import { useApp, useGrants, useT } from './app-context';
import { useGet } from './hooks';

/** The navigation: only the sections the administrator's scopes let them read. */
const SECTIONS: { to: string; label: Parameters<ReturnType<typeof useT>>[0]; group?: Group | 'trees' }[] = [
  { to: '/', label: 'dashboard' },
  { to: '/clients', label: 'clients', group: 'clients' },
  { to: '/resources', label: 'resources', group: 'resources' },
  { to: '/users', label: 'users', group: 'users' },
  { to: '/roles', label: 'roles', group: 'roles' },
  { to: '/groups', label: 'groups', group: 'groups' },
  { to: '/tenants', label: 'tenants', group: 'tenants' },
  { to: '/instances', label: 'instances', group: 'instances' },
  { to: '/tickets', label: 'tickets', group: 'tickets' },
  { to: '/trees', label: 'trees', group: 'trees' },
];

export function LanguageSwitch() {
  const { lang, setLang } = useApp();
  const t = useT();
  const id = useId();
  return (
    <div className="lang">
      <label htmlFor={id}>{t('language')}</label>
      <select id={id} value={lang} onChange={(e) => setLang(e.target.value as Lang)}>
        {LANGS.map((l) => (
          <option key={l} value={l} lang={l}>
            {l === 'en' ? 'English' : 'Монгол'}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Layout() {
  const t = useT();
  const { session } = useApp();
  const grants = useGrants();
  const who = session.user?.email ?? session.user?.name ?? session.user?.id ?? '';
  // Instances only in multi-instance mode: the API answers 501 otherwise, and the section is not offered.
  const instances = useGet(
    '/api/v1/instances',
    { query: { limit: 1, fields: 'id' } },
    grants.read('instances'),
  );
  const singleInstance = instances.error instanceof GatehouseError && instances.error.status === 501;
  return (
    <div className="shell">
      <a className="skip" href="#main">
        {t('skip')}
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          {t('appName')}
        </Link>
        <div className="topbar-end">
          <LanguageSwitch />
          <span className="who" id="signed-in-as">
            {t('signedInAs', { who })}
          </span>
          <button
            type="button"
            className="secondary"
            id="sign-out"
            onClick={() => {
              void session.signOut().then((url) => {
                sessionStorage.removeItem('gatehouse.console.auto');
                window.location.assign(url);
              });
            }}
          >
            {t('signOut')}
          </button>
        </div>
      </header>
      <div className="body">
        <nav aria-label={t('nav')} className="sidenav">
          <ul>
            {SECTIONS.filter(
              (s) => (!s.group || grants.read(s.group)) && !(s.group === 'instances' && singleInstance),
            ).map((s) => (
              <li key={s.to}>
                <Link
                  to={s.to}
                  activeOptions={{ exact: s.to === '/' }}
                  activeProps={{ 'aria-current': 'page', className: 'active' }}
                >
                  {t(s.label)}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}

/** What a signed-out visitor sees: the sign-in button (the token server's pages do the rest). */
export function SignInScreen({ onSignIn, error }: { onSignIn(): void; error?: string }) {
  const t = useT();
  return (
    <main className="signin" id="main">
      <h1>{t('signInTitle')}</h1>
      <p>{t('signInText')}</p>
      {error ? (
        <div className="alert" role="alert">
          <p>{error}</p>
        </div>
      ) : null}
      <button type="button" id="sign-in" onClick={onSignIn}>
        {t('signIn')}
      </button>
      <LanguageSwitch />
    </main>
  );
}
