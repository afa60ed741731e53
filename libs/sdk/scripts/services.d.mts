// Types for services.mjs (plain ESM so `npm run sdk:generate` runs it without compilation).

export const REPO_ROOT: string;

export interface RunningServices {
  authUrl: string;
  identityUrl: string;
  treeUrl: string;
  /** The bootstrap client (every scope of the management and tree APIs, client_credentials). */
  clientId: string;
  clientSecret: string;
  /** The bootstrap admin user. */
  adminEmail: string;
  adminPassword: string;
  /** Where the sources were compiled (apps and libs, e.g. `<buildDir>/libs/sdk/src/index.js`); removed by stop(). */
  buildDir: string;
  /** What each service has written to stdout and stderr so far. */
  logs(): Record<'auth' | 'identity' | 'tree', string>;
  /** Stops the services, removes their build and DATA_DIR, drops their databases. */
  stop(): Promise<void>;
}

export function startServices(opts?: {
  adminUrl?: string;
  env?: Record<string, string>;
}): Promise<RunningServices>;
