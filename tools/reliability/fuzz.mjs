// Fuzzing from the OpenAPI documents. For every operation of the three services, property-based
// requests (fast-check, seeded) that break the operation's contract: wrong types, missing and unknown fields, huge and
// deeply nested bodies, NUL and invalid UTF-8, hostile q/sort/fields/expand/paging, bad ids, wrong methods and
// content types, bad, forged and wrong-audience tokens. A request passes when the answer is not 5xx, its status is one
// the operation documents (405 for a wrong method), every error body is {code, message}, and a rejected request
// changed no row (a fingerprint of every table before and after).
//
//   node tools/reliability/fuzz.mjs            (RELIABILITY_FUZZ_REQUESTS per service, default 10,000)
//   RELIABILITY_SEED=1234 node tools/reliability/fuzz.mjs   replays a run: the same seed gives the same requests
import http from 'node:http';
import { createHmac, randomInt } from 'node:crypto';
import fc from 'fast-check';
import { createValidator } from './lib/conformance.mjs';
import { fingerprinter } from './lib/db-state.mjs';
import { listOperations, loadDocument, sampleValue } from './lib/openapi.mjs';
import { buildServices, startStack } from './lib/stack.mjs';

// Idle sockets are dropped after 2 s, before the services' 5 s keep-alive timeout: otherwise a request written on a
// socket the server is closing at that moment fails with "socket hang up" (the keep-alive race every client has; it
// hit the smoke on a loaded CI run when a service's sockets sat idle while another service was fuzzed).
const agent = new http.Agent({ keepAlive: true, maxSockets: 4, timeout: 2000 });

/**
 * One raw HTTP request (node:http: any method, any bytes, any or no content type).
 * @param {string} url
 * @param {{ method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number }} [o]
 * @returns {Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer; ms: number }>}
 */
export function send(url, { method = 'GET', headers = {}, body, timeoutMs = 15_000 } = {}) {
  const started = performance.now();
  // Every body is framed by its length (node:http would send a DELETE's body unframed, which the server then reads
  // as the next request); header values are kept to what HTTP allows, as any client must send them.
  const framed = { ...headers };
  if (body !== undefined) framed['content-length'] = String(Buffer.byteLength(body));
  for (const [k, v] of Object.entries(framed)) {
    if (typeof v === 'string' && /[^\t\x20-\x7e\x80-\xff]/.test(v))
      framed[k] = Buffer.from(v).toString('base64url');
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: framed, agent, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          ms: performance.now() - started,
        }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  "'",
  "' OR '1'='1",
  "'; DROP TABLE clients; --",
  '"',
  '\\',
  '%',
  '_',
  '\u0000',
  'a\u0000b',
  '\uFFFF',
  '\uD800',
  '😀'.repeat(50),
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '${7*7}',
  '{{7*7}}',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  '9'.repeat(40),
  'x'.repeat(5000),
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'a'.repeat(36),
];

const HOSTILE_Q = [
  "name = 'x' or 1=1",
  'name = ',
  '((((((((((',
  ')'.repeat(50),
  '('.repeat(500) + "id = 'x'" + ')'.repeat(500),
  "id = '00000000-0000-0000-0000-000000000000'; SELECT pg_sleep(5)",
  'pg_sleep(1) is null',
  "metadata.x.y.z = 'a'",
  'nosuch = 1',
  "client_name like '%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%'",
  `created_at > 'not a date'`,
  'id in ()',
  `id in (${Array.from({ length: 2000 }, () => "'a'").join(',')})`,
  'not not not not not',
  "'unterminated",
  'x'.repeat(2100),
  "name = '\u0000'",
  'limit = 1 --',
];

const HOSTILE_SORT = [
  'name:up',
  'nosuch:asc',
  ':asc',
  'name:asc,',
  ',,,',
  'name;drop',
  'x'.repeat(1000),
  'id:desc:asc',
];
const HOSTILE_PAGING = ['-1', '1e9', 'abc', '1.5', '', '99999999999999999999', '0x10', ' 1'];
const HOSTILE_IDS = [
  'x',
  'not-a-uuid',
  '1',
  '-1',
  '00000000-0000-0000-0000-00000000000g',
  '%00',
  '%2e%2e%2f',
  '%27%20OR%201=1',
  'a'.repeat(300),
  '%F0%9F%98%80',
  '%C0%AF',
  encodeURIComponent('\u0000'),
];

const WRONG_CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  undefined,
  'application/json; charset=latin1',
  'application/x-www-form-urlencoded',
];

/** A JWT of our shape, signed with a key that is not ours (HS256 with a guessable secret) or not at all. */
function forgedJwt(kind, claims) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const payload = b64({
    iat: now,
    exp: now + 3600,
    scope: 'clients:read clients:write trees:read trees:write',
    ...claims,
  });
  if (kind === 'none') return `${b64({ alg: 'none', typ: 'at+jwt' })}.${payload}.`;
  const header = b64({ alg: 'HS256', typ: 'at+jwt', kid: 'x' });
  const sig = createHmac('sha256', 'secret').update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${sig}`;
}

const KINDS = [
  'valid',
  'wrongType',
  'missing',
  'unknown',
  'huge',
  'deep',
  'nul',
  'badUtf8',
  'badJson',
  'query',
  'badId',
  'method',
  'contentType',
  'token',
];

/** The arbitrary of one request plan: which operation, which mutation, and the random choices it takes. */
export function planArbitrary(opCount) {
  return fc.record({
    op: fc.nat({ max: opCount - 1 }),
    kind: fc.constantFrom(...KINDS),
    pick: fc.nat({ max: 1_000_000 }),
    pick2: fc.nat({ max: 1_000_000 }),
    text: fc.oneof(
      fc.constantFrom(...HOSTILE_STRINGS),
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'grapheme', maxLength: 20 }),
    ),
    value: fc.oneof(
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant([]),
      fc.constant({}),
      fc.string({ maxLength: 20 }),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    ),
  });
}

function props(schema) {
  return schema && schema.properties ? Object.keys(schema.properties) : [];
}

function typeOf(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/**
 * Turns a plan into a concrete request. ctx: base URLs, ids for path parameters, tokens.
 * @returns {{ method: string; url: string; headers: Record<string, string>; body?: Buffer | string; expectExtra: number[]; note: string }}
 */
export function buildRequest(op, plan, ctx) {
  /** @type {Record<string, string>} */
  const headers = {};
  const expectExtra = [];
  let note = plan.kind;
  let method = op.method.toUpperCase();

  // Path
  let pathParams = Object.fromEntries(
    op.pathParams.map((p) => [p, ctx.ids[p] ?? '00000000-0000-4000-8000-000000000000']),
  );
  if (plan.kind === 'badId' && op.pathParams.length) {
    const p = op.pathParams[plan.pick % op.pathParams.length];
    pathParams = { ...pathParams, [p]: HOSTILE_IDS[plan.pick2 % HOSTILE_IDS.length] };
    note += ` ${p}`;
  }
  let path = op.path.replace(/\{([^}]+)\}/g, (_, name) =>
    plan.kind === 'badId' && HOSTILE_IDS.includes(pathParams[name])
      ? pathParams[name]
      : encodeURIComponent(pathParams[name]),
  );

  // Query
  const query = new URLSearchParams();
  if (plan.kind === 'query' && op.query.length) {
    const names = op.query.map((q) => q.name);
    const name = names[plan.pick % names.length];
    let value;
    if (name === 'q') value = plan.pick2 % 2 ? HOSTILE_Q[plan.pick2 % HOSTILE_Q.length] : plan.text;
    else if (name === 'sort')
      value = plan.pick2 % 2 ? HOSTILE_SORT[plan.pick2 % HOSTILE_SORT.length] : plan.text;
    else if (['offset', 'limit'].includes(name)) value = HOSTILE_PAGING[plan.pick2 % HOSTILE_PAGING.length];
    else value = plan.text;
    query.set(name, value);
    if (plan.pick2 % 5 === 0) query.append(name, 'again'); // a repeated parameter
    note += ` ${name}`;
  }
  const qs = query.toString();
  const url = `${ctx.base}${path}${qs ? `?${qs}` : ''}`;

  // Authorization
  if (op.secured) headers.authorization = `Bearer ${ctx.token}`;
  if (plan.kind === 'token') {
    const variants = [
      () => delete headers.authorization,
      () => (headers.authorization = 'Bearer'),
      () => (headers.authorization = `Bearer ${plan.text}`),
      () => (headers.authorization = `Basic ${Buffer.from('a:b').toString('base64')}`),
      () =>
        (headers.authorization = `Bearer ${forgedJwt('none', { iss: ctx.issuer, aud: ctx.audience, client_id: ctx.clientId, sub: ctx.clientId })}`),
      () =>
        (headers.authorization = `Bearer ${forgedJwt('hs256', { iss: ctx.issuer, aud: ctx.audience, client_id: ctx.clientId, sub: ctx.clientId })}`),
      () => (headers.authorization = `Bearer ${ctx.wrongAudienceToken}`),
      () => (headers.authorization = `Bearer ${ctx.weakToken}`),
      () => (headers.authorization = `Bearer ${ctx.token.slice(0, -2)}xx`),
      () => (headers.authorization = `Bearer ${ctx.token} ${ctx.token}`),
    ];
    variants[plan.pick % variants.length]();
    note += ` #${plan.pick % variants.length}`;
  }

  // Method
  if (plan.kind === 'method' && op.otherMethods.length) {
    method = op.otherMethods[plan.pick % op.otherMethods.length].toUpperCase();
    expectExtra.push(405);
    note += ` ${method}`;
  }

  // Body
  let body;
  if (op.body) {
    const contentType = op.body.contentTypes.includes('application/json')
      ? 'application/json'
      : op.body.contentTypes[0];
    headers['content-type'] = contentType;
    let value = sampleValue(op.body.schema, '', ctx.bodyIds);
    const names = props(op.body.schema);
    const field = names.length ? names[plan.pick % names.length] : undefined;
    if (value && typeof value === 'object' && !Array.isArray(value)) value = { ...value };
    switch (plan.kind) {
      case 'wrongType':
        if (field && value && typeof value === 'object') {
          let v = plan.value;
          if (typeOf(v) === typeOf(value[field])) v = typeOf(v) === 'string' ? 12345 : 'wrong';
          value[field] = v;
          note += ` ${field}`;
        } else value = plan.value;
        break;
      case 'missing': {
        const required = op.body.schema.required ?? [];
        if (required.length && value && typeof value === 'object') {
          delete value[required[plan.pick % required.length]];
          note += ` ${required[plan.pick % required.length]}`;
        } else value = plan.pick % 2 ? {} : null;
        break;
      }
      case 'unknown':
        if (value && typeof value === 'object') {
          const keys = ['foo', 'constructor', 'prototype', '', 'x'.repeat(300), plan.text];
          value[keys[plan.pick % keys.length]] = plan.value;
        }
        break;
      case 'nul':
        if (field && value && typeof value === 'object') value[field] = `a\u0000${plan.text}`;
        else value = '\u0000';
        break;
      case 'huge':
        if (field && value && typeof value === 'object') {
          value[field] =
            plan.pick % 3 === 0
              ? 'x'.repeat(2_000_000)
              : plan.pick % 3 === 1
                ? 'y'.repeat(100_000)
                : Array.from({ length: 50_000 }, (_, i) => i);
          expectExtra.push(413);
        }
        break;
      default:
        break;
    }
    if (contentType === 'application/x-www-form-urlencoded') {
      const form = new URLSearchParams();
      if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value))
          form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
      body = form.toString();
    } else if (contentType === 'text/csv') {
      body =
        plan.kind === 'valid' ? 'code,parent_code,name\nfuzz1,,Fuzz\n' : `${plan.text},\u0000\n"unterminated`;
    } else {
      body = JSON.stringify(value);
    }
    if (plan.kind === 'deep') {
      const depth = 2000 + (plan.pick % 20_000);
      body =
        plan.pick % 2
          ? '['.repeat(depth) + ']'.repeat(depth)
          : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    } else if (plan.kind === 'badUtf8') {
      body = Buffer.concat([
        Buffer.from('{"x":"'),
        Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]),
        Buffer.from('"}'),
      ]);
    } else if (plan.kind === 'badJson') {
      const broken = [
        '{"a":',
        '{',
        '[1,2',
        '{"a":1,}',
        "{'a':1}",
        'nul',
        '{"a":NaN}',
        '\uFEFF{}',
        '{"__proto__":{"admin":true}}',
      ];
      body = broken[plan.pick % broken.length];
    } else if (plan.kind === 'contentType') {
      const ct = WRONG_CONTENT_TYPES[plan.pick % WRONG_CONTENT_TYPES.length];
      if (ct === undefined) delete headers['content-type'];
      else headers['content-type'] = ct;
      note += ` ${ct}`;
    }
  } else if (['deep', 'badJson', 'badUtf8', 'huge', 'contentType'].includes(plan.kind) && method !== 'GET') {
    // A body where the operation takes none.
    headers['content-type'] = 'application/json';
    body = plan.kind === 'deep' ? '['.repeat(5000) + ']'.repeat(5000) : '{"unexpected": true}';
  }
  return { method, url, headers, body, expectExtra, note };
}

const validator = createValidator();

/** Checks one answer against the operation's contract. Returns the problems found (empty: it passed). */
export function judge(op, req, res) {
  const problems = [];
  if (res.status >= 200 && res.status < 300 && String(res.headers['content-type'] ?? '').includes('json')) {
    let body;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      problems.push('a JSON answer that does not parse');
    }
    if (body !== undefined) {
      try {
        problems.push(...validator.check(op, res.status, body));
      } catch (err) {
        problems.push(`the documented schema does not compile: ${err instanceof Error ? err.message : err}`);
      }
    }
  }
  // 501 is an answer of the contract where the operation documents it (instances without MULTI_INSTANCE).
  if (res.status >= 500 && !(res.status === 501 && op.statuses.has(501)))
    problems.push(`status ${res.status}`);
  const documented = op.statuses.has(res.status) || req.expectExtra.includes(res.status);
  if (!documented && res.status < 500) problems.push(`undocumented status ${res.status}`);
  const isHtml = String(res.headers['content-type'] ?? '').startsWith('text/html');
  if (res.status >= 400 && isHtml && !op.htmlStatuses.has(res.status)) {
    problems.push(`an HTML error page where the operation documents none for ${res.status}`);
  } else if (res.status >= 400 && req.method !== 'HEAD' && !isHtml) {
    let json;
    try {
      json = JSON.parse(res.body.toString('utf8'));
    } catch {
      problems.push(`error body is not JSON: ${res.body.toString('utf8').slice(0, 80)}`);
    }
    if (json && (typeof json.code !== 'string' || typeof json.message !== 'string')) {
      problems.push(`error body without code/message: ${JSON.stringify(json).slice(0, 120)}`);
    }
  }
  return problems;
}

/** Records in the database that the path parameters can name. */
async function seedRecords(stack, mgmt, treeToken) {
  const api = async (base, token, method, path, body) => {
    const res = await send(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = res.body.toString('utf8');
    if (res.status >= 300) throw new Error(`seed ${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const id = stack.identityUrl;
  const client = await api(id, mgmt, 'POST', '/api/v1/clients', { client_name: 'fuzz client' });
  const resource = await api(id, mgmt, 'POST', '/api/v1/resources', {
    resource_name: 'fuzz api',
    resource_type: 'api',
    resource_metadata: { identifier_url: 'https://fuzz.example.test/api' },
  });
  const scope = await api(id, mgmt, 'POST', `/api/v1/resources/${resource.id}/scopes`, {
    scope_name: 'fuzz:read',
  });
  const user = await api(id, mgmt, 'POST', '/api/v1/users', {
    user_email: 'fuzz.user@example.test',
    user_name: 'fuzzuser',
    password: 'Fuzz-Password-1234!',
  });
  const role = await api(id, mgmt, 'POST', '/api/v1/roles', { role_name: 'fuzz role' });
  const group = await api(id, mgmt, 'POST', '/api/v1/groups', { group_name: 'fuzz group' });
  const tenant = await api(id, mgmt, 'POST', '/api/v1/tenants', { tenant_name: 'fuzz tenant' });
  const provider = await api(id, mgmt, 'POST', `/api/v1/tenants/${tenant.id}/identity-providers`, {
    identity_provider: 'oidc',
    name: 'fuzz idp',
    issuer: 'https://idp.fuzz.example.test',
    client_id: 'fuzz',
  });
  const instances = await api(id, mgmt, 'GET', '/api/v1/instances').catch(() => ({ items: [] }));
  const tr = stack.treeUrl;
  await api(tr, treeToken, 'POST', '/api/v1/trees', { code: 'fuzz', name: 'Fuzz' });
  const version = 'v1';
  const node = await api(tr, treeToken, 'POST', `/api/v1/trees/fuzz/versions/${version}/nodes`, {
    code: 'n1',
    name: 'N1',
  });
  return {
    client_id: client.id,
    resource_id: resource.id,
    scope_id: scope.id,
    user_id: user.id,
    role_id: role.id,
    group_id: group.id,
    tree_code: 'fuzz',
    tree_version: String(version),
    tree_node_id: node.id,
    language: 'mn',
    tenant_id: tenant.id,
    provider_id: provider.id,
    instance_id: instances.items?.[0]?.id ?? '00000000-0000-4000-8000-000000000000',
  };
}

/**
 * Fuzzes the three services of a running stack. Returns per-service figures and the failures (at most 200 kept).
 * @param {import('./lib/stack.mjs').Stack} stack
 * @param {{ requests: number; seed: number; log?: (s: string) => void }} o
 */
export async function fuzzStack(stack, o) {
  const log = o.log ?? (() => undefined);
  const mgmt = await stack.token('urn:gatehouse:management');
  const treeToken = await stack.token('urn:gatehouse:tree');
  const weakMgmt = await stack.token('urn:gatehouse:management', 'clients:read');
  const weakTree = await stack.token('urn:gatehouse:tree', 'trees:read');
  const ids = await seedRecords(stack, mgmt, treeToken);
  const fp = await fingerprinter(stack.dbUrl);
  const results = [];
  try {
    for (const service of ['identity', 'tree', 'auth']) {
      const base =
        service === 'identity' ? stack.identityUrl : service === 'tree' ? stack.treeUrl : stack.authUrl;
      const doc = await loadDocument(base);
      const ops = listOperations(service, doc).filter(
        (op) => !['/livez', '/readyz', '/metrics'].includes(op.path),
      );
      const ctx = {
        base,
        ids,
        bodyIds: ids,
        issuer: stack.authUrl,
        clientId: stack.client.id,
        audience: service === 'tree' ? 'urn:gatehouse:tree' : 'urn:gatehouse:management',
        token: service === 'tree' ? treeToken : mgmt,
        weakToken: service === 'tree' ? weakTree : weakMgmt,
        wrongAudienceToken: service === 'tree' ? mgmt : treeToken,
      };
      // First a tour: every read as a client would make it (plain, expanded, counted), every answer checked against
      // the document. Then the seeded hostile requests.
      const tour = [];
      for (const [index, op] of ops.entries()) {
        if (op.method !== 'get') continue;
        const names = op.query.map((q) => q.name);
        for (const query of [
          '',
          names.includes('expand') ? 'expand=all' : '',
          names.includes('total_count') ? 'total_count=true&limit=100' : '',
          names.includes('totalCount') ? 'totalCount=true&limit=100' : '',
        ]) {
          if (query === '' && tour.some((t) => t.index === index)) continue;
          tour.push({ index, query });
        }
      }
      const tourFailures = [];
      for (const { index, query } of tour) {
        const op = ops[index];
        const req = buildRequest(
          op,
          { op: index, kind: 'valid', pick: 0, pick2: 0, text: '', value: null },
          ctx,
        );
        if (query) req.url += `${req.url.includes('?') ? '&' : '?'}${query}`;
        const res = await send(req.url, req);
        const problems = judge(op, req, res);
        if (problems.length) {
          tourFailures.push({
            i: -1,
            op: `${op.method.toUpperCase()} ${op.path}`,
            request: `${req.method} ${req.url.replace(base, '').slice(0, 160)}`,
            note: `tour ${query}`,
            status: res.status,
            problems,
            body: res.body.toString('utf8').slice(0, 200),
          });
        }
      }
      const plans = fc.sample(planArbitrary(ops.length), {
        seed: o.seed + (service === 'tree' ? 1 : service === 'auth' ? 2 : 0),
        numRuns: o.requests,
      });
      const started = performance.now();
      const counts = { requests: 0, rejected: 0, accepted: 0, byStatus: {} };
      const failures = [...tourFailures];
      let before = await fp.take();
      for (let i = 0; i < plans.length; i++) {
        const op = ops[plans[i].op];
        const req = buildRequest(op, plans[i], ctx);
        let res;
        try {
          res = await send(req.url, req);
        } catch (err) {
          failures.push({
            i,
            op: `${op.method.toUpperCase()} ${op.path}`,
            request: `${req.method} ${req.url.replace(base, '').slice(0, 160)}`,
            note: req.note,
            status: 0,
            problems: [`no answer: ${err instanceof Error ? err.message : String(err)}`],
            body: '',
          });
          continue;
        }
        counts.requests++;
        counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
        const problems = judge(op, req, res);
        const after = await fp.take();
        if (res.status >= 400) {
          counts.rejected++;
          const changed = fp.diff(before, after);
          if (changed.length) problems.push(`rejected request wrote to ${changed.join(', ')}`);
        } else counts.accepted++;
        before = after;
        if (problems.length) {
          failures.push({
            i,
            op: `${op.method.toUpperCase()} ${op.path}`,
            request: `${req.method} ${req.url.replace(base, '').slice(0, 160)}`,
            note: req.note,
            status: res.status,
            problems,
            body: res.body.toString('utf8').slice(0, 200),
          });
        }
      }
      const seconds = (performance.now() - started) / 1000;
      log(`${service}: ${counts.requests} requests in ${seconds.toFixed(1)} s, ${failures.length} failures`);
      results.push({ service, operations: ops.length, tour: tour.length, seconds, ...counts, failures });
    }
  } finally {
    await fp.close();
  }
  return results;
}

/** Groups failures by operation and first problem, for a readable report. */
export function summarizeFailures(failures) {
  const groups = new Map();
  for (const f of failures) {
    const key = `${f.op} :: ${f.problems[0]}`;
    const g = groups.get(key) ?? { key, count: 0, example: f };
    g.count++;
    groups.set(key, g);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seed = Number(process.env.RELIABILITY_SEED ?? randomInt(1, 2 ** 31 - 1));
  const requests = Number(process.env.RELIABILITY_FUZZ_REQUESTS ?? 10_000);
  console.log(`fuzz: seed ${seed} (replay: RELIABILITY_SEED=${seed}), ${requests} requests per service`);
  buildServices();
  const stack = await startStack({
    env: { RATE_LIMIT_POINTS: '1000000000', RATE_LIMIT_AUTH_FAILURES: '1000000000', MULTI_INSTANCE: 'true' },
    adminUrl: process.env.RELIABILITY_PG_URL,
    embedded: !process.env.RELIABILITY_PG_URL,
    log: (s) => console.log(`  ${s}`),
  });
  let failed = false;
  try {
    const results = await fuzzStack(stack, { requests, seed, log: (s) => console.log(s) });
    for (const r of results) {
      console.log(
        `\n${r.service}: ${r.requests} requests over ${r.operations} operations, ${r.seconds.toFixed(1)} s; statuses ${JSON.stringify(r.byStatus)}`,
      );
      for (const g of summarizeFailures(r.failures)) {
        failed = true;
        console.log(
          `  x${g.count} ${g.key}\n     e.g. #${g.example.i} ${g.example.request} [${g.example.note}] -> ${g.example.status} ${g.example.body}`,
        );
      }
    }
  } finally {
    await stack.close();
  }
  console.log(failed ? `\nfuzz: FAILED (seed ${seed})` : `\nfuzz: passed (seed ${seed})`);
  process.exit(failed ? 1 : 0);
}
