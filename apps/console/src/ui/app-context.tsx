import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import type { Api } from '../lib/api';
import type { ConsoleConfig } from '../lib/config';
import { translate, type Lang, type MessageKey } from '../lib/i18n';
import type { Grants } from '../lib/scopes';
import type { Session } from '../lib/session';

export interface AppContextValue {
  config: ConsoleConfig;
  session: Session;
  api: Api;
  lang: Lang;
  setLang(lang: Lang): void;
}

const Ctx = createContext<AppContextValue | undefined>(undefined);

export function AppProvider({ value, children }: { value: AppContextValue; children: ReactNode }) {
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useApp(): AppContextValue {
  const v = useContext(Ctx);
  if (!v) throw new Error('useApp outside AppProvider');
  return v;
}

export type T = (key: MessageKey, vars?: Record<string, string | number>) => string;

/** The message function of the current language. */
export function useT(): T {
  const { lang } = useApp();
  return (key, vars) => translate(lang, key, vars);
}

/** The administrator's scopes, re-read when the session changes (a refresh may narrow them). */
export function useGrants(): Grants {
  const { session } = useApp();
  const [grants, setGrants] = useState(session.grants);
  useEffect(() => session.onChange(() => setGrants(session.grants)), [session]);
  return grants;
}
