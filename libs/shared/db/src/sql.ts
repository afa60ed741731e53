import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { isConnectionError } from './connection-errors.js';
import { broken, checkout } from './checkout.js';
import { PreparedStatements, type PreparedOptions } from './prepared.js';

/**
 * The one way Gatehouse code runs SQL (docs/architecture.md "Data layer"): a `Db` owns a node-postgres pool; `Sql`
 * is anything statements run on (the pool, one connection, one transaction). Statements are parameterized text
 * (`$1`, built with `Params`); errors are pg's own `DatabaseError` (SQLSTATE in `code`), which the HTTP error
 * mapping turns into 4xx/503. TypeORM only describes the schema and runs migrations; it holds no pool at run time.
 */
/** Rows of a statement whose row type the caller does not name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRow = Record<string, any>;

export interface Sql {
  /** The rows of a statement (also of INSERT/UPDATE/DELETE ... RETURNING). */
  rows<T = AnyRow>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * The rows of a statement as arrays of PostgreSQL's text of each value, in select-list order (null for NULL):
   * nothing parsed, no object per row (`bool` is `t`/`f`, numbers and timestamps as the server spells them). For a
   * large read whose values go out as text again (the NDJSON subtree stream): about a fifth less CPU per row than
   * `rows` (docs/benchmarks.md, the subtree read of 2026-12-07).
   */
  texts(text: string, params?: readonly unknown[]): Promise<TextRow[]>;
  /** The first row, or undefined. */
  one<T = AnyRow>(text: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** The number of rows a statement touched. */
  exec(text: string, params?: readonly unknown[]): Promise<number>;
  /**
   * The rows of a read on a hot path (a list, a look-up by key), as a named prepared statement from its second use
   * (PreparedStatements): PostgreSQL stops planning it on every request. For statements whose text repeats.
   */
  read<T = AnyRow>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * `fn` in one transaction (commit when it resolves, roll back when it throws). Inside a transaction it runs in the
   * transaction already open.
   */
  transaction<T>(fn: (tx: Sql) => Promise<T>, opts?: TransactionOptions): Promise<T>;
}

export interface TransactionOptions {
  isolation?: 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';
  readOnly?: boolean;
}

export interface DbOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** Shown in pg_stat_activity (e.g. `gatehouse-identity`). */
  applicationName?: string;
  /** Connection pool size (default 10). */
  poolMax?: number;
  /** Milliseconds to wait for a connection before failing (default 10 000). */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL `statement_timeout` of every pooled connection, in ms (0 or unset: none). A statement running longer
   * is cancelled (SQLSTATE 57014); a transaction doing known bulk work raises it with `SET LOCAL`.
   */
  statementTimeoutMs?: number;
  /** Bounds of the prepared statements `read` keeps. */
  prepared?: PreparedOptions;
}

/** A row of `Sql.texts`: the server's text of each value, in select-list order. */
export type TextRow = (string | null)[];

type Client = pg.PoolClient;

/** Every value as the server's text: no type parsing (a parser per column, called for every value, returning it). */
const AS_TEXT = { getTypeParser: () => (value: string) => value };

/** A query config of `texts`: rows as arrays, values as text. */
function textQuery(text: string, params: readonly unknown[]): pg.QueryArrayConfig {
  return {
    text,
    values: params as unknown[],
    rowMode: 'array',
    types: AS_TEXT as unknown as pg.CustomTypesConfig,
  };
}

async function query(client: Client, text: string, params: readonly unknown[] = []) {
  try {
    return await client.query(text, params as unknown[]);
  } catch (err) {
    if (isConnectionError(err)) broken.add(client);
    throw err;
  }
}

/** Statements on one checked-out connection. */
class ConnectionSql implements Sql {
  constructor(
    readonly client: Client,
    private readonly inTransaction: boolean,
    private readonly prepared: PreparedStatements,
    private readonly settings?: TransactionSettings,
  ) {}

  async rows<T = AnyRow>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await query(this.client, text, params)).rows as T[];
  }

  async texts(text: string, params: readonly unknown[] = []): Promise<TextRow[]> {
    try {
      return (await this.client.query(textQuery(text, params))).rows as TextRow[];
    } catch (err) {
      if (isConnectionError(err)) broken.add(this.client);
      throw err;
    }
  }

  async read<T = AnyRow>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    try {
      return await this.prepared.rowsOn<T>(this.client, text, params);
    } catch (err) {
      if (isConnectionError(err)) broken.add(this.client);
      throw err;
    }
  }

  async one<T = AnyRow>(text: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.rows<T>(text, params))[0];
  }

  async exec(text: string, params: readonly unknown[] = []): Promise<number> {
    return (await query(this.client, text, params)).rowCount ?? 0;
  }

  transaction<T>(fn: (tx: Sql) => Promise<T>, opts?: TransactionOptions): Promise<T> {
    if (this.inTransaction) return fn(this);
    return runTransaction(this.client, this.prepared, fn, opts, this.settings);
  }
}

/**
 * Settings (`set_config(name, value, true)`: they end with the transaction) every transaction of a Db starts with,
 * read at each BEGIN (e.g. the identity service's audit context of the request being served); undefined: none.
 */
export type TransactionSettings = (() => Readonly<Record<string, string>> | undefined) & {
  /**
   * A read sent with the COMMIT of a transaction that started with settings, in the same round trip (`text` runs
   * in the transaction, just before it commits: simple protocol, no parameters); its rows go to `afterCommit` once
   * the COMMIT succeeded (e.g. counting what the transaction wrote, once it is durable).
   */
  commitRead?: { text: string; afterCommit: (rows: AnyRow[]) => void };
};

async function runTransaction<T>(
  client: Client,
  prepared: PreparedStatements,
  fn: (tx: Sql) => Promise<T>,
  opts: TransactionOptions = {},
  settings?: TransactionSettings,
): Promise<T> {
  const set = settings?.();
  await query(client, beginStatement(opts, client, set)).catch(async (err: unknown) => {
    // BEGIN ran but a setting after it failed: the connection must not go back to the pool inside a transaction
    await query(client, 'ROLLBACK').catch(() => undefined);
    throw err;
  });
  try {
    const tx = new ConnectionSql(client, true, prepared, settings);
    const out = await fn(tx);
    const read = set ? settings?.commitRead : undefined;
    if (read) {
      // one simple-protocol string: if the read fails, PostgreSQL skips the COMMIT after it (the catch rolls back)
      const results = (await query(client, `${read.text}; COMMIT`)) as unknown as pg.QueryResult[];
      read.afterCommit(results[0].rows);
    } else {
      await query(client, 'COMMIT');
    }
    return out;
  } catch (err) {
    await query(client, 'ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * BEGIN, and the transaction's settings in the same simple-protocol query (one round trip): the values are
 * literals escaped by the driver, as a simple query takes no parameters.
 */
function beginStatement(
  opts: TransactionOptions,
  client?: Client,
  set?: Readonly<Record<string, string>>,
): string {
  const parts = ['BEGIN'];
  if (opts.isolation) parts.push(`ISOLATION LEVEL ${opts.isolation}`);
  if (opts.readOnly) parts.push('READ ONLY');
  const begin = parts.join(' ');
  if (!client || !set) return begin;
  const calls = Object.entries(set).map(
    ([name, value]) => `set_config(${client.escapeLiteral(name)}, ${client.escapeLiteral(value)}, true)`,
  );
  return calls.length ? `${begin}; SELECT ${calls.join(', ')}` : begin;
}

/** A transaction opened by `Db.begin` and ended by the caller (a stream that reads across many chunks). */
export interface OpenTransaction extends Sql {
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** The database of a service: its pool, and statements on it. */
export class Db implements Sql {
  readonly pool: pg.Pool;
  /** The database's URL (a LISTEN connection of the change feed opens its own client on it). */
  readonly url: string;
  private readonly prepared: PreparedStatements;

  constructor(opts: DbOptions) {
    if (!/^postgres(ql)?:\/\//.test(opts.url)) {
      throw new Error('database url must start with postgres:// or postgresql://');
    }
    if (opts.poolMax !== undefined && (!Number.isInteger(opts.poolMax) || opts.poolMax < 1)) {
      throw new Error(`poolMax must be a positive integer, got ${opts.poolMax}`);
    }
    this.url = opts.url;
    this.pool = new pg.Pool({
      connectionString: opts.url,
      application_name: opts.applicationName,
      max: opts.poolMax ?? 10,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
      ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
    });
    // An idle connection the server dropped (a restart): the pool discards it; never an unhandled 'error' event.
    this.pool.on('error', () => undefined);
    this.prepared = new PreparedStatements(opts.prepared);
  }

  async rows<T = AnyRow>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.pool.query(text, params as unknown[])).rows as T[];
  }

  async texts(text: string, params: readonly unknown[] = []): Promise<TextRow[]> {
    return (await this.pool.query(textQuery(text, params))).rows as TextRow[];
  }

  async one<T = AnyRow>(text: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.rows<T>(text, params))[0];
  }

  async exec(text: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.pool.query(text, params as unknown[])).rowCount ?? 0;
  }

  /**
   * Rows in bulk: `data` (COPY's text format: one line a row, tab-separated, `\\N` for null) into `statement`
   * (`COPY table (columns) FROM STDIN`) on one pooled connection, one statement (every row or none). PostgreSQL's
   * bulk path: it inserts heap tuples many at a time, about half the server's CPU per row of an `INSERT ... SELECT
   * FROM unnest(...)` (measured for the audit events, docs/benchmarks.md). Returns the number of rows.
   */
  async copyIn(statement: string, data: string): Promise<number> {
    return this.withClient(async (client) => {
      const stream = client.query(copyFrom(statement));
      try {
        await new Promise<void>((resolve, reject) => {
          stream.on('finish', resolve);
          stream.on('error', reject);
          stream.end(data);
        });
      } catch (err) {
        if (isConnectionError(err)) broken.add(client);
        throw err;
      }
      return stream.rowCount;
    });
  }

  /**
   * Rows of a read run as a named prepared statement from its second use (lists and look-ups on hot paths: see
   * PreparedStatements); outside any transaction.
   */
  read<T = AnyRow>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.prepared.rows<T>(this.pool, text, params);
  }

  transaction<T>(fn: (tx: Sql) => Promise<T>, opts?: TransactionOptions): Promise<T> {
    return this.withClient((client) => runTransaction(client, this.prepared, fn, opts, this.settings));
  }

  /** `fn` on one connection outside a transaction (each statement its own snapshot; session settings stay). */
  connection<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.withClient((client) => fn(new ConnectionSql(client, false, this.prepared, this.settings)));
  }

  /** Every transaction of this Db from now on starts with `settings` (see TransactionSettings). */
  useTransactionSettings(settings: TransactionSettings): void {
    this.settings = settings;
  }

  private settings: TransactionSettings | undefined;

  /** A transaction the caller ends with `commit()` or `rollback()` (which also return the connection). */
  async begin(opts: TransactionOptions = {}): Promise<OpenTransaction> {
    const { client, release } = await checkout(this.pool);
    try {
      await query(client, beginStatement(opts, client, this.settings?.()));
    } catch (err) {
      release(broken.has(client) ? (err as Error) : undefined);
      throw err;
    }
    const sql = new ConnectionSql(client, true, this.prepared, this.settings);
    let ended = false;
    const end = async (statement: string) => {
      if (ended) return;
      ended = true;
      let failed: Error | undefined;
      try {
        await query(client, statement);
      } catch (err) {
        failed = err as Error;
        if (statement === 'COMMIT') throw err;
      } finally {
        release(failed);
      }
    };
    return Object.assign(sql, {
      commit: () => end('COMMIT'),
      rollback: () => end('ROLLBACK'),
    }) as ConnectionSql & OpenTransaction;
  }

  /**
   * Resolves when the database answers `SELECT 1` within `timeoutMs` (default 2000); throws otherwise. For
   * `/readyz`: never hangs on an exhausted pool or a server that stopped answering.
   */
  async check(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`database did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    const probe = this.rows<{ ok: number }>('SELECT 1 AS ok');
    probe.catch(() => undefined); // a late failure after the timeout must not become an unhandled rejection
    try {
      const rows = await Promise.race([probe, timeout]);
      if (rows?.[0]?.ok !== 1) throw new Error('database gave an unexpected answer to SELECT 1');
    } finally {
      clearTimeout(timer);
    }
  }

  /** Close every connection (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  private closed = false;

  private async withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const { client, release } = await checkout(this.pool);
    try {
      return await fn(client);
    } finally {
      // A broken connection is destroyed by the pool; a statement error leaves the connection usable.
      release();
    }
  }
}
