import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { rmSync } from 'node:fs';
import { eventParams, INSERT_EVENTS, insertEvents, type EventInput } from '@gatehouse/identity-data';
import { eventually, getFreePort, REPO_ROOT, scratchDir, swcBuild } from '@gatehouse/testing';
import { ENVELOPE, Management, uniq, VERSIONS } from './management-harness.js';

/** A webhook receiver: what it was sent, with each delivery's signature checked against `secret`. */
class Receiver {
  readonly deliveries: { ok: boolean; events: { id: string; type: string }[]; status: number }[] = [];
  /** What to answer next (a status, or 'hang': never answer); empty: 200. */
  readonly plan: (number | 'hang')[] = [];
  secret = '';
  private server!: Server;
  private readonly hanging: ServerResponse[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** The event ids delivered with a 2xx, in order (a retried batch counts once per 2xx). */
  get accepted(): string[] {
    return this.deliveries.filter((d) => d.status === 200).flatMap((d) => d.events.map((e) => e.id));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const header = String(req.headers['gatehouse-signature'] ?? '');
    const t = /t=(\d+)/.exec(header)?.[1] ?? '';
    const v1 = /v1=([0-9a-f]{64})/.exec(header)?.[1] ?? '';
    const expected = createHmac('sha256', this.secret).update(`${t}.${body}`).digest();
    const ok =
      v1.length === 64 &&
      timingSafeEqual(Buffer.from(v1, 'hex'), expected) &&
      Math.abs(Date.now() / 1000 - Number(t)) < 300;
    const next = this.plan.shift() ?? 200;
    const parsed = JSON.parse(body) as { events: { id: string; type: string }[] };
    if (next === 'hang') {
      this.deliveries.push({ ok, events: parsed.events, status: 0 });
      this.hanging.push(res);
      return;
    }
    this.deliveries.push({ ok, events: parsed.events, status: next });
    res.writeHead(next).end();
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

let m: Management;
let instanceId: string;

beforeAll(async () => {
  m = await Management.start({
    LOG_STREAMS_POLL_MS: '50',
    LOG_STREAMS_RETRY_BASE_MS: '50',
    LOG_STREAMS_PAUSE_AFTER: '3',
  });
  const [row] = await m.ds.rows<{ id: string }>(`SELECT id FROM instances ORDER BY created_at LIMIT 1`);
  instanceId = row.id;
}, 90_000);
afterAll(async () => {
  await m?.close();
});

/** Events of the default instance, written as the writers write them. */
async function write(events: Partial<EventInput>[]): Promise<void> {
  await insertEvents(
    m.ds,
    events.map((e) => ({ type: 'logout', instanceId, ...e }) as EventInput),
  );
}

describe.each(VERSIONS)('/api/%s/log-streams', (v) => {
  const api = `/api/${v}/log-streams`;

  it('create answers the secret once; read, list, modify and delete never do', async () => {
    const name = uniq('stream');
    const created = await m
      .call('post', api)
      .send({ name, url: 'https://siem.example.com/in', event_types: ['signin.failure', 'logout'] })
      .expect(201);
    expect(created.body).toMatchObject({
      name,
      url: 'https://siem.example.com/in',
      event_types: ['signin.failure', 'logout'],
      status: 'active',
      failures: 0,
      paused_reason: null,
      tenant_id: null,
    });
    expect(created.body.secret).toMatch(/^ghls_[\w-]{43}$/);
    const id = created.body.id as string;
    const read = await m.call('get', `${api}/${id}`).expect(200);
    expect(read.body.secret).toBeUndefined();
    expect(read.body).not.toHaveProperty('secret_enc');
    const list = await m.call('get', `${api}?q=${encodeURIComponent(`name = '${name}'`)}`).expect(200);
    const items = list.body.items as { id: string; secret?: string }[];
    expect(items.map((i) => i.id)).toEqual([id]);
    expect(items[0].secret).toBeUndefined();
    expect(list.body).not.toHaveProperty(ENVELOPE[v].total);
    const patched = await m
      .call('patch', `${api}/${id}`)
      .send({ status: 'paused', event_types: [], secret: 'y'.repeat(40) })
      .expect(200);
    expect(patched.body).toMatchObject({
      status: 'paused',
      paused_reason: 'paused by an administrator',
      event_types: [],
    });
    expect(patched.body.secret).toBeUndefined();
    await m.call('post', api).send({ name, url: 'https://siem.example.com/other' }).expect(409);
    await m.call('delete', `${api}/${id}`).expect(204);
    await m.call('get', `${api}/${id}`).expect(404);
  });

  it('refuse a bad body with a 400 naming the field, and write nothing', async () => {
    const name = uniq('bad');
    for (const [body, field] of [
      [{ name, url: 'http://10.1.2.3/hook' }, 'url'],
      [{ name, url: 'https://user:pw@siem.example.com/' }, 'url'],
      [{ name, url: 'https://siem.example.com/', event_types: ['no.such.type'] }, 'event_types'],
      [{ name, url: 'https://siem.example.com/', secret: 'short' }, 'secret'],
      [{ url: 'https://siem.example.com/' }, 'name'],
    ] as const) {
      const res = await m.call('post', api).send(body).expect(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    const [n] = await m.ds.rows<{ n: string }>(`SELECT count(*) AS n FROM log_streams WHERE name = $1`, [
      name,
    ]);
    expect(Number(n.n)).toBe(0);
  });
});

describe('delivery', () => {
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await receiver.close();
  });

  async function stream(body: Record<string, unknown> = {}): Promise<string> {
    const res = await m
      .call('post', '/api/v1/log-streams')
      // logout only unless a test says otherwise: the management writes of the tests (a stream's own changes)
      // are events too
      .send({ name: uniq('hook'), url: receiver.url, event_types: ['logout'], ...body })
      .expect(201);
    receiver.secret = res.body.secret as string;
    return res.body.id as string;
  }

  it('is signed, in order, of the stream types only, and retried with the same events after a 500', async () => {
    const id = await stream({ event_types: ['signin.failure'] });
    receiver.plan.push(500, 500);
    const userId = randomUUID();
    await write([
      { type: 'signin.failure', reason: 'wrong_password', userId },
      { type: 'logout', userId },
      { type: 'signin.failure', reason: 'unknown_user', userId },
    ]);
    await eventually(() => receiver.accepted.length >= 2, {
      timeoutMs: 15_000,
      what: 'receiver.accepted: 2',
    });
    expect(receiver.accepted).toHaveLength(2);
    const [first, second, third] = receiver.deliveries;
    expect([first.status, second.status, third.status]).toEqual([500, 500, 200]);
    // the same events, in the same order, each time; every delivery signed
    expect(second.events).toEqual(first.events);
    expect(third.events.map((e) => e.type)).toEqual(['signin.failure', 'signin.failure']);
    expect(receiver.deliveries.every((d) => d.ok)).toBe(true);
    const state = await m.call('get', `/api/v1/log-streams/${id}`).expect(200);
    expect(state.body).toMatchObject({ status: 'active', failures: 0, last_error: null });
    expect(state.body.last_delivered_at).not.toBeNull();
  });

  it('never passes an event committed late: it waits for the older transaction and keeps one order', async () => {
    await stream();
    const a = await m.ds.pool.connect();
    try {
      // A writes first (smaller seq and transaction id) and commits last; B writes and commits in between.
      await a.query('BEGIN');
      await a.query(INSERT_EVENTS, eventParams([{ type: 'logout', instanceId, details: { tx: 'A' } }]));
      await write([{ type: 'logout', details: { tx: 'B' } }]);
      await new Promise((r) => setTimeout(r, 400));
      expect(receiver.deliveries).toHaveLength(0);
      await a.query('COMMIT');
    } finally {
      a.release();
    }
    await eventually(() => receiver.accepted.length >= 2, { timeoutMs: 15_000, what: 'both delivered' });
    const sent = receiver.deliveries.flatMap((d) => d.events) as unknown as { details: { tx: string } }[];
    expect(sent.map((e) => e.details.tx)).toEqual(['A', 'B']);
  });

  it('pauses after repeated failures with the reason shown, and resumes where it stopped', async () => {
    const id = await stream();
    receiver.plan.push(500, 503, 500);
    await write([{ type: 'logout' }]);
    let paused: Record<string, unknown> = {};
    await eventually(
      async () => {
        paused = (await m.call('get', `/api/v1/log-streams/${id}`).expect(200)).body as Record<
          string,
          unknown
        >;
        return paused.status === 'paused';
      },
      { timeoutMs: 15_000, what: 'the stream paused' },
    );
    expect(paused).toMatchObject({
      failures: 3,
      last_error: 'answered 500',
      paused_reason: 'paused after 3 failed deliveries in a row: answered 500',
    });
    const sent = receiver.deliveries.length;
    await write([{ type: 'logout' }]);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.deliveries).toHaveLength(sent);
    await m.call('patch', `/api/v1/log-streams/${id}`).send({ status: 'active' }).expect(200);
    await eventually(() => receiver.accepted.length >= 2, {
      timeoutMs: 15_000,
      what: 'receiver.accepted: 2',
    });
    expect(receiver.accepted).toHaveLength(2);
    expect(receiver.deliveries[0].events.map((e) => e.id)).toEqual(receiver.accepted.slice(0, 1));
  });

  it('of a tenant stream carries that tenant only', async () => {
    const tenant = await m.tenant();
    await stream({ tenant_id: tenant });
    const ours = randomUUID();
    await write([{ type: 'logout' }, { type: 'logout', tenantId: tenant, userId: ours }]);
    await eventually(() => receiver.accepted.length >= 1, {
      timeoutMs: 15_000,
      what: 'receiver.accepted: 1',
    });
    expect(receiver.accepted).toHaveLength(1);
    const [row] = await m.ds.rows<{ id: string }>(`SELECT id FROM events WHERE user_id = $1`, [ours]);
    expect(receiver.accepted).toEqual([row.id]);
  });
});

/**
 * A replica killed between the commit of events and their delivery: another replica (here: the same service
 * started again) delivers them once the dead one's lease ran out. The identity service runs as its own OS process
 * built from these sources; the one in this test process does not deliver.
 */
describe('a replica killed mid-delivery', () => {
  let out: string;
  let q: Management;
  let receiver: Receiver;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    out = scratchDir('identity-streams');
    swcBuild(['apps/identity/src', 'libs'], out);
    q = await Management.start({ LOG_STREAMS_DELIVERY: 'false' });
    receiver = await new Receiver().start();
  }, 120_000);
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await receiver?.close();
    await q?.close();
    rmSync(out, { recursive: true, force: true });
  });

  async function startReplica(): Promise<ChildProcess> {
    const port = await getFreePort();
    const child = spawn(process.execPath, [path.join(out, 'apps/identity/src/main.js')], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...q.auth.shared,
        AUTH_URL: q.auth.url,
        IDENTITY_PORT: String(port),
        LOG_LEVEL: 'warn',
        OUTBOUND_ALLOWLIST: '127.0.0.1',
        LOG_STREAMS_POLL_MS: '50',
        LOG_STREAMS_LEASE_MS: '1000',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  }

  it('loses no event: the next replica sends them again', async () => {
    const res = await q
      .call('post', '/api/v1/log-streams')
      .send({ name: uniq('crash'), url: receiver.url, event_types: ['logout'] })
      .expect(201);
    receiver.secret = res.body.secret as string;
    const [inst] = await q.ds.rows<{ id: string }>(`SELECT id FROM instances ORDER BY created_at LIMIT 1`);
    const userId = randomUUID();
    await insertEvents(
      q.ds,
      [1, 2, 3].map(() => ({ type: 'logout' as const, instanceId: inst.id, userId })),
    );
    receiver.plan.push('hang');
    const first = await startReplica();
    // the first replica sent the batch and waits for an answer that never comes: killed now
    await eventually(() => receiver.deliveries.length >= 1, {
      timeoutMs: 60_000,
      what: 'receiver.deliveries: 1',
    });
    expect(receiver.deliveries).toHaveLength(1);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    await startReplica();
    await eventually(() => receiver.accepted.length >= 3, {
      timeoutMs: 60_000,
      what: 'receiver.accepted: 3',
    });
    expect(receiver.accepted).toHaveLength(3);
    const ids = await q.ds.rows<{ id: string }>(`SELECT id FROM events WHERE user_id = $1 ORDER BY seq`, [
      userId,
    ]);
    expect(receiver.accepted).toEqual(ids.map((r) => r.id));
    expect(receiver.deliveries[0].events.map((e) => e.id)).toEqual(receiver.accepted);
  }, 120_000);
});
