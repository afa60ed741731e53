/** The console's runtime configuration, served by its static server at /config.json. */
export interface ConsoleConfig {
  authUrl: string;
  identityUrl: string;
  treeUrl: string;
  clientId: string;
}

export async function loadConfig(): Promise<ConsoleConfig> {
  const res = await fetch('/config.json', { cache: 'no-cache' });
  if (!res.ok) throw new Error(`/config.json: ${res.status}`);
  const c = (await res.json()) as Partial<ConsoleConfig>;
  for (const k of ['authUrl', 'identityUrl', 'treeUrl', 'clientId'] as const) {
    if (typeof c[k] !== 'string' || !c[k]) throw new Error(`/config.json: ${k} is missing`);
  }
  return c as ConsoleConfig;
}
