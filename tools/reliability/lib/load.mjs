// Mixed load on a running stack: tree node creates and moves, client and user creates, token issuance, from N
// concurrent workers over keep-alive connections. Every request is recorded (kind, unique name, status, duration),
// so a scenario can check afterwards what was answered and what is in the database.
import http from 'node:http';
import { randomBytes } from 'node:crypto';

/**
 * @typedef {{ kind: string; name?: string; status: number; ms: number; at: number; error?: string; body?: string }} Outcome
 */

/** A JSON request with a hard timeout; status 0 when it got no answer (error says why). */
function request(agent, url, { method = 'GET', headers = {}, body, timeoutMs }) {
  const started = performance.now();
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          ...headers,
          ...(payload !== undefined
            ? {
                'content-type': headers['content-type'] ?? 'application/json',
                'content-length': String(Buffer.byteLength(payload)),
              }
            : {}),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
        res.on('error', (err) =>
          resolve({ status: 0, body: '', ms: performance.now() - started, error: err.message }),
        );
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) =>
      resolve({ status: 0, body: '', ms: performance.now() - started, error: err.message }),
    );
    req.end(payload);
  });
}

/**
 * Prepares what the load needs (a tree with a version and a few parents, tokens) and returns a runner.
 * @param {import('./stack.mjs').Stack} stack
 * @param {{ timeoutMs?: number; mix?: Record<string, number> }} [o]
 */
export async function prepareLoad(stack, o = {}) {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const run = randomBytes(3).toString('hex');
  // Idle sockets are dropped after 2 s, before the services' 5 s keep-alive timeout: otherwise a request written on
  // a socket the server is closing at that moment fails with ECONNRESET (the keep-alive race every client has).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 200, timeout: 2000 });
  let mgmt = await stack.token('urn:gatehouse:management');
  let treeToken = await stack.token('urn:gatehouse:tree');
  const basic = `Basic ${Buffer.from(`${stack.client.id}:${stack.client.secret}`).toString('base64')}`;
  const tree = `load${run}`;
  const mk = async (path, body) => {
    const res = await request(agent, `${stack.treeUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${treeToken}` },
      body,
      timeoutMs,
    });
    if (res.status !== 201) throw new Error(`load setup ${path}: ${res.status} ${res.body}`);
    return JSON.parse(res.body);
  };
  await mk('/api/v1/trees', { code: tree, name: tree });
  const nodesPath = `/api/v1/trees/${tree}/versions/v1/nodes`;
  const parents = [];
  for (let i = 0; i < 8; i++) parents.push((await mk(nodesPath, { code: `P${i}`, name: `Parent ${i}` })).id);
  /** Nodes created under load (ids), moved around by the move requests. */
  const movable = [];
  let seq = 0;
  const name = (kind) => `${kind}-${run}-${++seq}`;

  const actions = {
    async nodeCreate() {
      const code = name('node');
      const parent = parents[seq % parents.length];
      const res = await request(agent, `${stack.treeUrl}${nodesPath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${treeToken}` },
        body: { code, name: code, parent_id: parent },
        timeoutMs,
      });
      if (res.status === 201) movable.push(JSON.parse(res.body).id);
      return { kind: 'node create', name: code, ...res };
    },
    async nodeMove() {
      if (!movable.length) return actions.nodeCreate();
      const id = movable[seq++ % movable.length];
      const res = await request(agent, `${stack.treeUrl}${nodesPath}/${id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${treeToken}` },
        body: { parent_id: parents[seq % parents.length] },
        timeoutMs,
      });
      return { kind: 'node move', ...res };
    },
    async clientCreate() {
      const n = name('client');
      const res = await request(agent, `${stack.identityUrl}/api/v1/clients`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mgmt}` },
        body: { client_name: n },
        timeoutMs,
      });
      return { kind: 'client create', name: n, ...res };
    },
    async userCreate() {
      const n = name('user');
      const res = await request(agent, `${stack.identityUrl}/api/v1/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mgmt}` },
        body: { user_email: `${n}@load.test`, user_name: n },
        timeoutMs,
      });
      return { kind: 'user create', name: n, ...res };
    },
    async token() {
      const res = await request(agent, `${stack.authUrl}/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&audience=urn%3Agatehouse%3Atree',
        timeoutMs,
      });
      return { kind: 'token', ...res };
    },
  };
  const mix = o.mix ?? { nodeCreate: 3, nodeMove: 2, clientCreate: 2, userCreate: 2, token: 3 };
  const wheel = Object.entries(mix).flatMap(([k, w]) => Array.from({ length: w }, () => k));

  return {
    tree,
    run,
    /**
     * Runs `connections` workers until `until()` is true; returns every outcome.
     * @param {{ connections: number; until: () => boolean; onOutcome?: (o: Outcome) => void }} p
     */
    async drive({ connections, until, onOutcome }) {
      /** @type {Outcome[]} */
      const outcomes = [];
      let turn = 0;
      const worker = async () => {
        while (!until()) {
          const kind = wheel[turn++ % wheel.length];
          const r = await actions[kind]();
          const outcome = {
            kind: r.kind,
            name: r.name,
            status: r.status,
            ms: r.ms,
            at: Date.now(),
            error: r.error,
            body: r.status >= 500 || r.status === 0 ? r.body.slice(0, 200) : undefined,
          };
          outcomes.push(outcome);
          onOutcome?.(outcome);
        }
      };
      await Promise.all(Array.from({ length: connections }, worker));
      return outcomes;
    },
    /** New tokens (after a long run the first ones may have expired). */
    async refreshTokens() {
      mgmt = await stack.token('urn:gatehouse:management');
      treeToken = await stack.token('urn:gatehouse:tree');
    },
    close: () => agent.destroy(),
  };
}

export { percentile } from '../../bench/lib/stats.mjs';
