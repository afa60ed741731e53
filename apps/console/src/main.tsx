import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { apiClients, GatehouseError, tokenTransport } from './lib/api';
import { loadConfig, type ConsoleConfig } from './lib/config';
import { initialLang, type Lang } from './lib/i18n';
import { Session } from './lib/session';
import { createConsoleRouter } from './routes';
import { AppProvider } from './ui/app-context';
import { SignInScreen } from './ui/layout';
import './styles.css';

const LANG_KEY = 'gatehouse.console.lang';
/** Set once this tab has signed in: a reload then goes straight to the token server (its session signs in again). */
const AUTO_KEY = 'gatehouse.console.auto';

function App({
  config,
  session,
  startError,
}: {
  config: ConsoleConfig;
  session: Session;
  startError?: string;
}) {
  const [lang, setLangState] = useState<Lang>(() =>
    initialLang(localStorage.getItem(LANG_KEY), navigator.languages ?? [navigator.language]),
  );
  const [signedIn, setSignedIn] = useState(session.signedIn);
  useEffect(() => session.onChange(() => setSignedIn(session.signedIn)), [session]);
  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);
  const setLang = (l: Lang) => {
    localStorage.setItem(LANG_KEY, l);
    setLangState(l);
  };
  const api = useMemo(() => apiClients(config, session), [config, session]);
  const queryClient = useMemo(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: {
            staleTime: 10_000,
            refetchOnWindowFocus: false,
            // an answer of the API (400, 403, 404, 409...) is final; only a network failure is tried again
            retry: (n, err) => !(err instanceof GatehouseError) && n < 2,
          },
        },
      }),
    [],
  );
  const router = useMemo(() => createConsoleRouter(), []);
  const value = { config, session, api, lang, setLang };
  const signIn = () => {
    void session
      .authorizationUrl(window.location.pathname + window.location.search, lang, sessionStorage)
      .then((url) => window.location.assign(url));
  };
  return (
    <StrictMode>
      <AppProvider value={value}>
        {signedIn ? (
          <QueryClientProvider client={queryClient}>
            <RouterProvider router={router} />
          </QueryClientProvider>
        ) : (
          <SignInScreen onSignIn={signIn} error={startError} />
        )}
      </AppProvider>
    </StrictMode>
  );
}

async function start() {
  const container = document.getElementById('root');
  if (!container) return;
  const root = createRoot(container);
  let config: ConsoleConfig;
  try {
    config = await loadConfig();
  } catch (err) {
    root.render(<p role="alert">{err instanceof Error ? err.message : String(err)}</p>);
    return;
  }
  const session = new Session(config, tokenTransport(config), window.location.origin);
  let startError: string | undefined;
  const here = new URL(window.location.href);
  if (here.pathname === '/callback') {
    try {
      const back = await session.completeSignIn(here, sessionStorage);
      sessionStorage.setItem(AUTO_KEY, '1');
      window.history.replaceState(null, '', back.startsWith('/') && back !== '/callback' ? back : '/');
    } catch (err) {
      startError = err instanceof Error ? err.message : String(err);
      window.history.replaceState(null, '', '/');
    }
  } else if (sessionStorage.getItem(AUTO_KEY)) {
    const lang = initialLang(localStorage.getItem(LANG_KEY), navigator.languages ?? []);
    window.location.assign(await session.authorizationUrl(here.pathname + here.search, lang, sessionStorage));
    return;
  }
  root.render(<App config={config} session={session} startError={startError} />);
}

void start();
