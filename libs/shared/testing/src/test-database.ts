import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface CreateTestDatabaseOptions {
  /**
   * Names one schema, e.g. 'identity' or 'tree': every test file asking for the same key in one test run gets a
   * copy of the same migrated template. Lower-case letters, digits and `_`, at most 32 characters.
   */
  template: string;
  /** Migrates an empty database at `url` (and closes every connection it opened). Runs once per key per run. */
  migrate: (url: string) => Promise<void>;
  /** Server to use; defaults to process.env.TEST_PG_URL (set by the Jest global setup). */
  adminUrl?: string;
}

export interface TestDatabase {
  /** Connection URL of this test file's own database. */
  url: string;
  /** Its name (gh_test_<run>_<random>). */
  name: string;
  /** Drops it, closing any connection still open. Idempotent. */
  drop(): Promise<void>;
}

const RUN_ID_VAR = 'GATEHOUSE_TEST_RUN_ID';
const KEY_RE = /^[a-z0-9_]{1,32}$/;

/** Admin URL of the test PostgreSQL server (process.env.TEST_PG_URL), or a clear error. */
export function testAdminUrl(): string {
  const url = process.env.TEST_PG_URL;
  if (!url) {
    throw new Error(
      'TEST_PG_URL is not set: run tests through Jest with the workspace preset (its global setup provides a ' +
        'PostgreSQL server), or set TEST_PG_URL to a server where tests may CREATE DATABASE',
    );
  }
  return url;
}

/** Redis URL for tests that need Redis (process.env.TEST_REDIS_URL); throws rather than letting a test skip silently. */
export function testRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) {
    throw new Error(
      'TEST_REDIS_URL is not set and no Redis answered on 127.0.0.1:6379: start Redis or set TEST_REDIS_URL ' +
        '(REDIS_URL is used when set)',
    );
  }
  return url;
}

/** `url` with its database name replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

function runId(): string {
  let id = process.env[RUN_ID_VAR];
  if (!id) {
    // Outside the Jest global setup (a script calling this directly): one id per process.
    id = randomBytes(4).toString('hex');
    process.env[RUN_ID_VAR] = id;
  }
  if (!/^[a-z0-9]{1,16}$/.test(id))
    throw new Error(`${RUN_ID_VAR} must be 1-16 characters [a-z0-9], got "${id}"`);
  return id;
}

async function withAdmin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, application_name: 'gatehouse-test-admin' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function databaseExists(c: pg.Client, name: string): Promise<boolean> {
  const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return (r.rowCount ?? 0) > 0;
}

/** Ends every session on `database` and waits until they are gone (a rename or clone needs none left). */
async function closeSessions(c: pg.Client, database: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = await c.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    if ((r.rowCount ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`sessions on ${database} did not end`);
}

/**
 * A test database is thrown away at the end of its file: a commit need not wait for its WAL to reach the disk
 * (synchronous_commit off: what a commit makes visible, and when, stays the same; only a crash of the server may lose
 * the last commits). On a server with fsync on (CI's PostgreSQL, a developer's) this takes a flush off every write
 * of every test. The embedded server of a run without TEST_PG_URL already runs with fsync and synchronous_commit off.
 */
async function throwAway(c: pg.Client, database: string): Promise<void> {
  await c.query(`ALTER DATABASE ${c.escapeIdentifier(database)} SET synchronous_commit = off`);
}

/** Makes sure the migrated template for `key` exists; creation is serialized across processes by an advisory lock. */
async function ensureTemplate(
  c: pg.Client,
  adminUrl: string,
  name: string,
  migrate: (url: string) => Promise<void>,
): Promise<void> {
  if (await databaseExists(c, name)) return;
  await c.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`gatehouse:test-template:${name}`]);
  try {
    if (await databaseExists(c, name)) return; // another worker made it while we waited
    const building = `${name}__building`;
    const ident = c.escapeIdentifier(building);
    // Left over from a worker that died half-way: start again.
    await c.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${ident}`);
    await throwAway(c, building);
    try {
      await migrate(withDatabase(adminUrl, building));
      // The migrate callback should have closed its connections; make sure, or CREATE ... TEMPLATE would fail.
      await closeSessions(c, building);
      await c.query(`ALTER DATABASE ${ident} RENAME TO ${c.escapeIdentifier(name)}`);
    } catch (err) {
      await c.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`).catch(() => undefined);
      throw err;
    }
    // Nobody may connect to the template (a stray session would block every clone), and it is marked as one.
    await c.query(`ALTER DATABASE ${c.escapeIdentifier(name)} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`);
  } finally {
    await c.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [`gatehouse:test-template:${name}`]);
  }
}

/**
 * A fresh database for one test file: a copy of the template `gh_tpl_<run>_<template>`, which the first caller in
 * this test run creates by running `migrate` on an empty database. Call `drop()` in afterAll.
 */
export async function createTestDatabase(opts: CreateTestDatabaseOptions): Promise<TestDatabase> {
  if (!KEY_RE.test(opts.template)) {
    throw new Error(`template key must match ${KEY_RE}, got "${opts.template}"`);
  }
  const adminUrl = opts.adminUrl ?? testAdminUrl();
  const run = runId();
  const template = `gh_tpl_${run}_${opts.template}`;
  const name = `gh_test_${run}_${randomBytes(5).toString('hex')}`;

  await withAdmin(adminUrl, async (c) => {
    await ensureTemplate(c, adminUrl, template, opts.migrate);
    await c.query(`CREATE DATABASE ${c.escapeIdentifier(name)} TEMPLATE ${c.escapeIdentifier(template)}`);
    await throwAway(c, name);
  });

  let dropped: Promise<void> | undefined;
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: () =>
      (dropped ??= withAdmin(adminUrl, async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`);
      })),
  };
}

/** An empty database (no template, no migrations), e.g. to test migrations themselves. Call `drop()` afterwards. */
export async function createEmptyTestDatabase(adminUrl: string = testAdminUrl()): Promise<TestDatabase> {
  const name = `gh_test_${runId()}_${randomBytes(5).toString('hex')}`;
  await withAdmin(adminUrl, async (c) => {
    await c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`);
    await throwAway(c, name);
  });
  let dropped: Promise<void> | undefined;
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: () =>
      (dropped ??= withAdmin(adminUrl, async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`);
      })),
  };
}
