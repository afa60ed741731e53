import net from 'node:net';
import pg from 'pg';
import { createEmptyTestDatabase, eventually, type TestDatabase } from '@gatehouse/testing';
import {
  CACHE_ACKS_CHANNEL,
  CacheSettler,
  CacheSubscriber,
  IDENTITY_CHANGES_CHANNEL,
  IdentityChangeListener,
  parseChange,
  type IdentityChange,
} from '../src/index.js';

/**
 * The settle protocol on a real PostgreSQL: the subscriber's trust window (on a clock the test moves), its row and
 * heartbeat, its acknowledgements, and the settler waiting for them. (cache_subscribers as identity migrations
 * 1790000700000 and 1795706191083 create it.)
 */
let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createEmptyTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 3 });
  await pool.query(`CREATE TABLE cache_subscribers (
    id uuid PRIMARY KEY, service text NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now(), created_at timestamptz NOT NULL DEFAULT now(),
    backend_pid integer)`);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const sql = {
  rows: async <T>(text: string, params?: readonly unknown[]) =>
    (await pool.query(text, params as unknown[])).rows as T[],
};
const quiet = { warn: () => undefined };

describe('cache sync', () => {
  it('listeners that are not subscribers ignore settle markers', () => {
    expect(parseChange('sync:abc')).toBeUndefined();
    expect(parseChange('client:ABC')).toEqual({ kind: 'client', id: 'abc' });
    expect(parseChange('nonsense')).toEqual({ kind: 'all' });
    const seen: IdentityChange[] = [];
    const l = new IdentityChangeListener({
      url: db.url,
      applicationName: 'x',
      onChange: (c) => seen.push(c),
      log: quiet,
    });
    l.apply('sync:abc');
    l.apply('user:u1');
    expect(seen).toEqual([{ kind: 'user', id: 'u1' }]);
  });

  it('trust: only while the last heartbeat that started less than 1.5 s ago succeeded; regained, it forgets all', async () => {
    let now = 1000;
    const changes: IdentityChange[] = [];
    const s = new CacheSubscriber({
      url: db.url,
      applicationName: 'cache-sync-test',
      service: 'test',
      onChange: (c) => changes.push(c),
      log: quiet,
      heartbeatMs: 60_000, // beats by hand
      now: () => now,
    });
    await s.start();
    try {
      expect(s.trusted()).toBe(true);
      expect(changes).toEqual([{ kind: 'all' }]); // trust gained at start: whatever was cached before goes
      const [row] = (await pool.query(`SELECT service FROM cache_subscribers WHERE id = $1`, [s.id])).rows;
      expect(row).toEqual({ service: 'test' });
      now += 1499;
      expect(s.trusted()).toBe(true);
      now += 1;
      expect(s.trusted()).toBe(false);
      changes.length = 0;
      await s.beat();
      expect(s.trusted()).toBe(true);
      expect(changes).toEqual([{ kind: 'all' }]); // trust had lapsed
      changes.length = 0;
      now += 500;
      await s.beat(); // in time: nothing forgotten
      expect(changes).toEqual([]);
      // a row deleted by hand (or purged) is inserted again, and the cache forgets everything
      await pool.query(`DELETE FROM cache_subscribers WHERE id = $1`, [s.id]);
      await s.beat();
      expect(changes).toEqual([{ kind: 'all' }]);
      expect((await pool.query(`SELECT 1 FROM cache_subscribers WHERE id = $1`, [s.id])).rowCount).toBe(1);
      // a lost connection: untrusted at once, and back by itself
      await pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cache-sync-test'`,
      );
      await eventually(async () => !s.trusted());
      await eventually(async () => s.trusted(), { timeoutMs: 5000 });
    } finally {
      await s.stop();
    }
    expect((await pool.query(`SELECT 1 FROM cache_subscribers WHERE id = $1`, [s.id])).rowCount).toBe(0);
  });

  it('settle: waits for the acknowledgement of every live subscriber after the changes before it', async () => {
    const applied: IdentityChange[] = [];
    const s = new CacheSubscriber({
      url: db.url,
      applicationName: 'cache-sync-sub',
      service: 'test',
      onChange: (c) => applied.push(c),
      log: quiet,
    });
    await s.start();
    const settler = new CacheSettler(sql, quiet, 3000);
    const acks = new pg.Client({ connectionString: db.url });
    await acks.connect();
    acks.on('notification', (n) => settler.ack(n.payload ?? ''));
    await acks.query(`LISTEN ${CACHE_ACKS_CHANNEL}`);
    try {
      for (let i = 0; i < 20; i++) {
        applied.length = 0;
        await pool.query(`SELECT pg_notify($1, $2)`, [IDENTITY_CHANGES_CHANNEL, `client:c${i}`]);
        await settler.settle();
        expect(applied).toContainEqual({ kind: 'client', id: `c${i}` });
      }
      // the subscriber counts an ack once its own NOTIFY query returns, which may be after the settler heard it
      await eventually(() => s.acks >= 20);
      expect(s.acks).toBeGreaterThanOrEqual(20);
      expect(settler.timeouts).toBe(0);
      // a subscriber that stopped (row deleted) is not waited for
      await s.stop();
      const started = Date.now();
      await settler.settle();
      expect(Date.now() - started).toBeLessThan(1000);
      // a live row that never answers: settle gives up after its timeout
      await pool.query(`INSERT INTO cache_subscribers (id, service) VALUES (gen_random_uuid(), 'mute')`);
      const short = new CacheSettler(sql, quiet, 300);
      await short.settle();
      expect(short.timeouts).toBe(1);
    } finally {
      await s.stop();
      await acks.end();
    }
  });

  it('settle: a subscriber whose LISTEN backend is gone is not waited for, a live silent one is (non-superuser)', async () => {
    // The settler runs as a role that is not a superuser (nor in pg_read_all_stats): it must still see the
    // subscribers' backends (they run as the superuser here) in pg_stat_activity.
    await pool.query(`DELETE FROM cache_subscribers`); // the mute row of the test before
    const role = `settle_${Math.random().toString(36).slice(2, 10)}`;
    await pool.query(`CREATE ROLE ${role} LOGIN PASSWORD 'settle'`);
    await pool.query(`GRANT SELECT, DELETE ON cache_subscribers TO ${role}`);
    const url = new URL(db.url);
    url.username = role;
    url.password = 'settle';
    const rolePool = new pg.Pool({ connectionString: url.toString(), max: 2 });
    const asRole = {
      rows: async <T>(text: string, params?: readonly unknown[]) =>
        (await rolePool.query(text, params as unknown[])).rows as T[],
    };
    const [{ superuser }] = await asRole.rows<{ superuser: boolean }>(
      `SELECT rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'member') AS superuser
         FROM pg_roles WHERE rolname = current_user`,
    );
    expect(superuser).toBe(false);

    // The third subscriber reaches the database through a proxy the test closes: once its backend is terminated it
    // cannot reconnect, as a replica killed with SIGKILL.
    const target = new URL(db.url);
    const proxy = net.createServer((down) => {
      const up = net.connect(Number(target.port || 5432), target.hostname);
      down.pipe(up).on('error', () => down.destroy());
      up.pipe(down).on('error', () => up.destroy());
      down.on('error', () => up.destroy());
      up.on('error', () => down.destroy());
      down.on('close', () => up.destroy());
      up.on('close', () => down.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const viaProxy = new URL(db.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String((proxy.address() as net.AddressInfo).port);

    const subscriber = (name: string, at = db.url) =>
      new CacheSubscriber({
        url: at,
        applicationName: name,
        service: 'test',
        onChange: () => undefined,
        log: quiet,
      });
    const live = [subscriber('cache-sync-live-1'), subscriber('cache-sync-live-2')];
    const doomed = subscriber('cache-sync-doomed', viaProxy.toString());
    for (const s of [...live, doomed]) await s.start();
    const settler = new CacheSettler(asRole, quiet, 3000);
    const acks = new pg.Client({ connectionString: db.url });
    await acks.connect();
    acks.on('notification', (n) => settler.ack(n.payload ?? ''));
    await acks.query(`LISTEN ${CACHE_ACKS_CHANNEL}`);
    const mute = new pg.Client({ connectionString: db.url, application_name: 'cache-sync-mute' });
    try {
      // every subscriber recorded the backend of its LISTEN connection
      const rows = (
        await pool.query<{ id: string; app: string | null }>(
          `SELECT s.id::text, a.application_name AS app
             FROM cache_subscribers s LEFT JOIN pg_stat_activity a ON a.pid = s.backend_pid
            WHERE s.service = 'test' ORDER BY 1`,
        )
      ).rows;
      expect(rows).toEqual(
        [
          { id: live[0]!.id, app: 'cache-sync-live-1' },
          { id: live[1]!.id, app: 'cache-sync-live-2' },
          { id: doomed.id, app: 'cache-sync-doomed' },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );
      await settler.settle();
      expect(settler.timeouts).toBe(0);

      // the doomed subscriber's connection ends and cannot come back; its row still looks live for 3 s
      proxy.close(); // stops accepting at once (its callback waits for the open connection)
      const [{ pid }] = (
        await pool.query<{ pid: number }>(`SELECT backend_pid AS pid FROM cache_subscribers WHERE id = $1`, [
          doomed.id,
        ])
      ).rows;
      expect((await pool.query(`SELECT pg_terminate_backend($1) AS ok`, [pid])).rows).toEqual([{ ok: true }]);
      await eventually(
        async () => (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [pid])).rowCount === 0,
      );
      let started = Date.now();
      await settler.settle();
      expect(Date.now() - started).toBeLessThan(1000);
      expect(settler.timeouts).toBe(0);
      expect(settler.gone).toBe(1);
      expect(doomed.trusted()).toBe(false);
      // its row is gone: the next settle does not even look for it
      expect((await pool.query(`SELECT 1 FROM cache_subscribers WHERE id = $1`, [doomed.id])).rowCount).toBe(
        0,
      );
      expect(live.map((s) => s.trusted())).toEqual([true, true]);
      started = Date.now();
      await settler.settle();
      expect(Date.now() - started).toBeLessThan(1000);
      expect(settler.gone).toBe(1);

      // a live subscriber that does not acknowledge (its backend is there) is still waited for up to the timeout,
      // and its row stays
      await mute.connect();
      await mute.query(`LISTEN ${IDENTITY_CHANGES_CHANNEL}`);
      const [{ id: muteId }] = (
        await mute.query<{ id: string }>(
          `INSERT INTO cache_subscribers (id, service, backend_pid) VALUES (gen_random_uuid(), 'mute', pg_backend_pid())
           RETURNING id::text`,
        )
      ).rows;
      const short = new CacheSettler(asRole, quiet, 600);
      acks.removeAllListeners('notification');
      acks.on('notification', (n) => short.ack(n.payload ?? ''));
      started = Date.now();
      await short.settle();
      expect(Date.now() - started).toBeGreaterThanOrEqual(590);
      expect(short.timeouts).toBe(1);
      expect(short.gone).toBe(0);
      expect((await pool.query(`SELECT 1 FROM cache_subscribers WHERE id = $1`, [muteId])).rowCount).toBe(1);
      await pool.query(`DELETE FROM cache_subscribers WHERE id = $1`, [muteId]);
    } finally {
      await mute.end().catch(() => undefined);
      for (const s of [...live, doomed]) await s.stop();
      await acks.end();
      await rolePool.end();
      await pool.query(`DROP OWNED BY ${role}`);
      await pool.query(`DROP ROLE ${role}`);
      if (proxy.listening) proxy.close();
    }
  });

  it('settle: a subscriber whose backend ends after the first check is found gone by a later one', async () => {
    // A replica killed just as the marker went out: its backend may still be in pg_stat_activity at the check
    // 100 ms into the settle. The settle must not then wait out its 3 s.
    await pool.query(`DELETE FROM cache_subscribers`);
    const dying = new pg.Client({ connectionString: db.url, application_name: 'cache-sync-dying' });
    dying.on('error', () => undefined);
    await dying.connect();
    try {
      await dying.query(`LISTEN ${IDENTITY_CHANGES_CHANNEL}`);
      const [{ pid }] = (
        await dying.query<{ pid: number }>(
          `INSERT INTO cache_subscribers (id, service, backend_pid)
           VALUES (gen_random_uuid(), 'dying', pg_backend_pid()) RETURNING backend_pid AS pid`,
        )
      ).rows;
      const settler = new CacheSettler(sql, quiet, 3000);
      const started = Date.now();
      const settled = settler.settle();
      // after the first check (100 ms), before the second (300 ms)
      await new Promise((r) => setTimeout(r, 150));
      await pool.query(`SELECT pg_terminate_backend($1)`, [pid]);
      await settled;
      expect(Date.now() - started).toBeLessThan(1500);
      expect(settler.timeouts).toBe(0);
      expect(settler.gone).toBe(1);
      expect((await pool.query(`SELECT 1 FROM cache_subscribers WHERE service = 'dying'`)).rowCount).toBe(0);
    } finally {
      await dying.end().catch(() => undefined);
    }
  });
});
