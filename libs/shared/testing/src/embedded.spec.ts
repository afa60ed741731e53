import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  getFreePort,
  isPortFree,
  randomPassword,
  startEmbeddedPostgres,
  stopEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from './embedded-pg.mjs';

async function query(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

describe('embedded PostgreSQL', () => {
  let base: string;
  let running: EmbeddedPostgresHandle | undefined;

  beforeAll(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-embedded-spec-'));
  });
  afterEach(async () => {
    await stopEmbeddedPostgres(running);
    running = undefined;
  });
  afterAll(() => {
    fs.rmSync(base, { recursive: true, force: true });
  });

  (process.getuid?.() === 0 ? it : it.skip)(
    'as root, names a parent directory the postgres user cannot enter',
    async () => {
      fs.chmodSync(base, 0o700);
      await expect(
        startEmbeddedPostgres({ dataDir: path.join(base, 'pg'), port: await getFreePort(), password: 'x' }),
      ).rejects.toThrow(`cannot enter ${base}`);
    },
  );

  it('initialises once, keeps data across restarts, and frees its port on stop', async () => {
    fs.chmodSync(base, 0o755);
    const dataDir = path.join(base, 'pg');
    const port = await getFreePort();
    const password = randomPassword();

    running = await startEmbeddedPostgres({ dataDir, port, password });
    expect(running.initialised).toBe(true);
    expect(await isPortFree(port)).toBe(false);
    await query(running.url(), 'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$still here$$)');
    // Case mapping is Unicode-aware (Mongolian Cyrillic), collation is bytewise C.
    expect(await query(running.url(), "SELECT upper('сайн') AS u, 'Ба' ILIKE 'ба%' AS i")).toEqual([
      { u: 'САЙН', i: true },
    ]);

    await running.stop();
    expect(await isPortFree(port)).toBe(true);

    // The password only applies to a new cluster: the first one still works.
    running = await startEmbeddedPostgres({ dataDir, port, password: 'ignored-for-existing-cluster' });
    expect(running.initialised).toBe(false);
    const again = running
      .url()
      .replace(encodeURIComponent('ignored-for-existing-cluster'), encodeURIComponent(password));
    expect(await query(again, 'SELECT v FROM kept')).toEqual([{ v: 'still here' }]);

    await expect(startEmbeddedPostgres({ dataDir, port: await getFreePort(), password })).rejects.toThrow(
      /already running on .*; stop it first/,
    );
  });

  it('reports a port that is already taken', async () => {
    fs.chmodSync(base, 0o755);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await expect(
        startEmbeddedPostgres({ dataDir: path.join(base, 'other'), port, password: 'x' }),
      ).rejects.toThrow(`port ${port} for the embedded PostgreSQL is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('refuses a non-empty directory that holds no cluster', async () => {
    fs.chmodSync(base, 0o755);
    const dataDir = path.join(base, 'junk');
    fs.mkdirSync(dataDir);
    fs.writeFileSync(path.join(dataDir, 'notes.txt'), 'hello');
    await expect(
      startEmbeddedPostgres({ dataDir, port: await getFreePort(), password: 'x' }),
    ).rejects.toThrow(/is not empty and holds no PostgreSQL cluster/);
  });
});
