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
 * heartbeat, its acknowledgements, and the settler waiting for them. (cache_subscribers as identity migration
 * 1790000700000 creates it.)
 */
let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createEmptyTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 3 });
  await pool.query(`CREATE TABLE cache_subscribers (
    id uuid PRIMARY KEY, service text NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now(), created_at timestamptz NOT NULL DEFAULT now())`);
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
});
