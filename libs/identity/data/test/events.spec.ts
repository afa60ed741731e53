import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@gatehouse/testing';
import type { Db } from '@gatehouse/db';
import type { TestDatabase } from '@gatehouse/testing';
import {
  EVENT_TYPES,
  EventWriter,
  SIGNIN_FAILURE_REASONS,
  ensureEventPartitions,
  eventId,
  eventIdTime,
  insertEvents,
  purgeEventPartitions,
} from '../src/index.js';
import { identityTestDatabase, openDb } from './support.js';

describe('events', () => {
  let db: TestDatabase;
  let sql: Db;
  const instanceId = randomUUID();

  beforeAll(async () => {
    db = await identityTestDatabase();
    sql = await openDb(db.url);
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  it('are the types and reasons docs/events.md lists, no more, no fewer', () => {
    const file = readFileSync(path.join(REPO_ROOT, 'docs/events.md'), 'utf8');
    const doc = file.slice(file.indexOf('## Event types'), file.indexOf('## Fields'));
    const listed = [...doc.matchAll(/^\| `([\w.]+)` +\|/gm)].map((m) => m[1]).sort();
    expect(listed).toEqual([...Object.keys(EVENT_TYPES), ...Object.keys(SIGNIN_FAILURE_REASONS)].sort());
  });

  it('make UUIDv7 ids whose first 48 bits are the time, also in SQL', async () => {
    const at = new Date('2026-11-28T12:34:56.789Z');
    const id = eventId(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(eventIdTime(id)?.toISOString()).toBe(at.toISOString());
    expect(eventIdTime(randomUUID())).toBeUndefined();
    const [r] = await sql.rows<{ id: string }>(`SELECT events_uuid7($1::timestamptz)::text AS id`, [at]);
    expect(eventIdTime(r.id)?.toISOString()).toBe(at.toISOString());
  });

  it('are written in a transaction and gone when it rolls back', async () => {
    const userId = randomUUID();
    await expect(
      sql.transaction(async (m) => {
        await insertEvents(m, [{ type: 'mgmt.updated', instanceId, userId, actor: { type: 'system' } }]);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await sql.transaction((m) =>
      insertEvents(m, [
        {
          type: 'signin.failure',
          reason: 'wrong_password',
          instanceId,
          userId,
          ip: '203.0.113.9',
          userAgent: 'x'.repeat(600),
          details: { connection: 'password' },
        },
      ]),
    );
    const rows = await sql.rows(`SELECT * FROM events WHERE user_id = $1`, [userId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      type: 'signin.failure',
      outcome: 'failure',
      reason: 'wrong_password',
      actor_type: 'anonymous',
      ip: '203.0.113.9',
      details: { connection: 'password' },
    });
    expect(rows[0].user_agent).toHaveLength(512);
  });

  it('are batched by the writer, which writes everything still queued on close', async () => {
    const written: string[] = [];
    const writer = new EventWriter(sql, {
      flushMs: 60_000,
      batch: 50,
      onWritten: (t, o) => written.push(`${t}/${o}`),
    });
    const clientId = randomUUID();
    for (let i = 0; i < 120; i++) {
      writer.record({
        type: 'token.issued',
        instanceId,
        clientId,
        details: { grant_type: 'client_credentials' },
      });
    }
    // two full batches were written at once; 20 wait for the timer (a minute) or close
    await writer.flush();
    expect(writer.pending).toBe(0);
    writer.record({ type: 'token.failure', reason: 'invalid_client', instanceId, clientId });
    expect(writer.pending).toBe(1);
    await writer.close();
    const [c] = await sql.rows<{ n: string; failures: string }>(
      `SELECT count(*) AS n, count(*) FILTER (WHERE outcome = 'failure') AS failures FROM events WHERE client_id = $1`,
      [clientId],
    );
    expect([Number(c.n), Number(c.failures)]).toEqual([121, 1]);
    expect(written.filter((w) => w === 'token.issued/success')).toHaveLength(120);
    expect(written).toContain('token.failure/failure');
  });

  it('are one event with a count for repeats of the same key until the writer takes it', async () => {
    const clientId = randomUUID();
    const written: number[] = [];
    const writer = new EventWriter(sql, { flushMs: 60_000, onWritten: (_t, _o, n) => written.push(n) });
    const issued = (ua: string) => ({
      type: 'token.issued' as const,
      instanceId,
      clientId,
      userAgent: ua,
      details: { grant_type: 'client_credentials' },
    });
    for (let i = 0; i < 5; i++) writer.recordRepeatable(`${clientId}/a`, issued('a'));
    writer.recordRepeatable(`${clientId}/b`, issued('b'));
    expect(writer.pending).toBe(2);
    await writer.flush();
    // taken and written: the next repeat is a new event
    writer.recordRepeatable(`${clientId}/a`, issued('a'));
    await writer.close();
    const rows = await sql.rows<{ user_agent: string; details: { count?: number } }>(
      `SELECT user_agent, details FROM events WHERE client_id = $1 ORDER BY seq`,
      [clientId],
    );
    expect(rows.map((r) => [r.user_agent, r.details.count ?? 1])).toEqual([
      ['a', 5],
      ['b', 1],
      ['a', 1],
    ]);
    expect(written).toEqual([5, 1, 1]);
  });

  it('keep any text as given (COPY and INSERT alike), and one refused event does not hold back its batch', async () => {
    const odd = [
      'a "quoted", {braced} \\ text',
      'NULL',
      '\\N',
      '',
      ' spaced ',
      'tab\tline\nreturn\r',
      '\\.',
      'Ünïcödé ✓',
    ];
    // first a batch as the writer's COPY stores it; then one that fails on a single event, stored one INSERT each
    for (const poisoned of [false, true]) {
      const clientId = randomUUID();
      const errors: number[] = [];
      const writer = new EventWriter(sql, {
        flushMs: 60_000,
        onError: (_err, dropped) => errors.push(dropped),
      });
      for (const text of odd) {
        writer.record({
          type: 'mgmt.updated',
          instanceId,
          clientId,
          actor: { type: 'user', id: text },
          record: { type: text, id: text },
          ip: text,
          userAgent: text,
          reason: text,
          details: { text },
        });
      }
      // "\u0000" is valid JSON that jsonb refuses: the batch fails, and the writer stores the others one by one
      if (poisoned)
        writer.record({ type: 'token.failure', instanceId, clientId, details: { bad: '\u0000' } });
      await writer.close();
      expect(errors).toEqual(poisoned ? [1] : []);
      const rows = await sql.rows<Record<string, string | null> & { details: { text: string } }>(
        `SELECT actor_id, record_id, record_type, ip, user_agent, reason, details FROM events WHERE client_id = $1
          ORDER BY seq`,
        [clientId],
      );
      expect(rows).toHaveLength(odd.length);
      rows.forEach((r, i) => {
        const text = odd[i];
        expect([r.actor_id, r.record_id, r.record_type, r.ip, r.reason, r.details.text]).toEqual(
          Array(6).fill(text),
        );
        // an empty user agent is recorded as none
        expect(r.user_agent).toBe(text || null);
      });
    }
  });

  it('keep daily partitions ahead and drop the ones past retention without touching the rest', async () => {
    expect(await ensureEventPartitions(sql)).toBe(0);
    // an old day, as if made a year ago, with one event in it
    await sql.exec(
      `CREATE TABLE events_20250101 PARTITION OF events FOR VALUES FROM ('2025-01-01T00:00:00Z') TO ('2025-01-02T00:00:00Z')`,
    );
    const old = new Date('2025-01-01T10:00:00Z');
    await insertEvents(sql, [{ type: 'logout', instanceId, at: old }]);
    const keep = randomUUID();
    await insertEvents(sql, [{ type: 'logout', instanceId, userId: keep }]);
    expect(await purgeEventPartitions(sql, 90)).toEqual(['events_20250101']);
    const [n] = await sql.rows<{ n: string }>(`SELECT count(*) AS n FROM events WHERE user_id = $1`, [keep]);
    expect(Number(n.n)).toBe(1);
    const parts = await sql.rows<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'events'::regclass ORDER BY 1`,
    );
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    expect(parts.map((p) => p.name)).toContain(`events_${today}`);
    expect(parts.length).toBeGreaterThanOrEqual(8);
    await expect(purgeEventPartitions(sql, 0)).rejects.toThrow('positive integer');
  });
});
