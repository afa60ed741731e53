// Test-run environment shared by the Jest global setup and `npm test` (tools/scripts/test.mjs).
//
// Variables (read by @gatehouse/testing):
//   TEST_PG_URL            admin URL of a PostgreSQL server where tests may CREATE DATABASE. Taken from TEST_PG_URL,
//                          else DATABASE_URL, else an embedded server is started for the run.
//   GATEHOUSE_TEST_RUN_ID  names this run's template and test databases (gh_tpl_<run>_<key>, gh_test_<run>_<random>)
//                          so the run's owner can drop them all at the end. Set by whoever prepared the run.
//   TEST_REDIS_URL         Redis for tests that need one: TEST_REDIS_URL, else REDIS_URL, else redis://127.0.0.1:6379
//                          when something answers PING there; left unset otherwise (testRedisUrl() then fails loudly).
import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  getFreePort,
  randomPassword,
  startEmbeddedPostgres,
} from '../../libs/shared/testing/src/embedded-pg.mjs';

export const RUN_ID_VAR = 'GATEHOUSE_TEST_RUN_ID';

function newRunId() {
  // 8 chars of [a-z0-9]: safe inside an unquoted identifier.
  return BigInt(`0x${randomBytes(6).toString('hex')}`)
    .toString(36)
    .padStart(8, '0')
    .slice(-8);
}

function pingRedis(host, port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('error', () => done(false));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** Drop every database this run created on `adminUrl` (templates and leftover test databases). */
export async function dropRunDatabases(adminUrl, runId) {
  const client = new pg.Client({ connectionString: adminUrl, application_name: 'gatehouse-test-cleanup' });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1) OR starts_with(datname, $2)`,
      [`gh_tpl_${runId}_`, `gh_test_${runId}_`],
    );
    for (const { datname } of rows) {
      const ident = client.escapeIdentifier(datname);
      await client.query(`ALTER DATABASE ${ident} IS_TEMPLATE false`);
      await client.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
    }
    return rows.length;
  } finally {
    await client.end();
  }
}

/**
 * Make TEST_PG_URL, GATEHOUSE_TEST_RUN_ID and (when available) TEST_REDIS_URL available in process.env.
 * Returns `cleanup()`, a no-op when an outer process (npm test) owns the run.
 *
 * @param {{ log?: (msg: string) => void, detached?: boolean, killOnSignal?: boolean }} [opts]
 */
export async function prepareTestEnvironment(opts = {}) {
  const log = opts.log ?? ((m) => process.stderr.write(`${m}\n`));
  const env = process.env;

  if (!env.TEST_REDIS_URL) {
    if (env.REDIS_URL) env.TEST_REDIS_URL = env.REDIS_URL;
    else if (await pingRedis('127.0.0.1', 6379)) env.TEST_REDIS_URL = 'redis://127.0.0.1:6379';
  }

  if (env[RUN_ID_VAR] && env.TEST_PG_URL) {
    return { owner: false, cleanup: async () => {} };
  }
  const runId = newRunId();
  const saved = { runId: env[RUN_ID_VAR], pgUrl: env.TEST_PG_URL };
  // Put the variables back as they were, so a second run in this process (jest --watch) prepares afresh.
  const restore = () => {
    for (const [name, value] of [
      [RUN_ID_VAR, saved.runId],
      ['TEST_PG_URL', saved.pgUrl],
    ]) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
  };
  env[RUN_ID_VAR] = runId;

  const external = env.TEST_PG_URL || env.DATABASE_URL;
  if (external) {
    env.TEST_PG_URL = external;
    return {
      owner: true,
      cleanup: async () => {
        restore();
        await dropRunDatabases(external, runId);
      },
    };
  }

  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'gatehouse-test-pg-'));
  const port = await getFreePort();
  const started = Date.now();
  let pgHandle;
  try {
    pgHandle = await startEmbeddedPostgres({
      dataDir,
      port,
      password: randomPassword(),
      detached: opts.detached ?? false,
      // A throw-away cluster: durability buys nothing here.
      flags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    });
  } catch (err) {
    await fsp.rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  env.TEST_PG_URL = pgHandle.url('postgres');
  log(`[test-env] embedded PostgreSQL on 127.0.0.1:${port} (${Date.now() - started} ms, data ${dataDir})`);

  // A plain SIGTERM/SIGHUP ends Node without 'exit' handlers: stop the server first, then die the same way.
  const onSignal = (signal) => {
    try {
      process.kill(pgHandle.pid, 'SIGINT');
    } catch {
      /* gone */
    }
    process.kill(process.pid, signal);
  };
  if (opts.killOnSignal ?? true) {
    process.once('SIGTERM', onSignal);
    process.once('SIGHUP', onSignal);
  }

  return {
    owner: true,
    cleanup: async () => {
      restore();
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGHUP', onSignal);
      await pgHandle.stop();
      await fsp.rm(dataDir, { recursive: true, force: true });
    },
  };
}
