// Types for embedded-pg.mjs (plain ESM so the launcher and the Jest global setup run it without compilation).

export interface StartEmbeddedPostgresOptions {
  /** Cluster directory; created and initialised when missing or empty, reused otherwise. */
  dataDir: string;
  port: number;
  /** Password of `user`; only applied when the cluster is created. */
  password: string;
  user?: string;
  /** As root: create the `postgres` OS user when it does not exist (default true). */
  createPostgresUser?: boolean;
  /** Run the server in its own process group (default true). */
  detached?: boolean;
  onLog?: (text: string) => void;
  /** Extra `postgres` flags, e.g. `['-c', 'fsync=off']`. */
  flags?: string[];
}

export interface EmbeddedPostgresHandle {
  readonly dataDir: string;
  readonly port: number;
  readonly host: '127.0.0.1';
  readonly user: string;
  readonly password: string;
  readonly pid: number;
  /** True when this start created the cluster (initdb ran). */
  readonly initialised: boolean;
  /** Connection URL for `database` (default `postgres`). */
  url(database?: string): string;
  /** Resolves when the server process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Fast shutdown, escalating after a timeout. Idempotent. */
  stop(): Promise<void>;
}

export function embeddedPostgresBinaries(): Promise<{ initdb: string; postgres: string }>;
export function getFreePort(): Promise<number>;
export function isPortFree(port: number, host?: string): Promise<boolean>;
export function startEmbeddedPostgres(options: StartEmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle>;
export function stopEmbeddedPostgres(
  handle: EmbeddedPostgresHandle | undefined,
  options?: { removeData?: boolean },
): Promise<void>;
export function randomPassword(): string;
