import { Management, VERSIONS } from './management-harness.js';
import { OPERATIONS, scopeOf } from './management-operations.js';

const LIMIT = 2;
let m: Management;

beforeAll(async () => {
  m = await Management.start({ RATE_LIMIT_POINTS: String(LIMIT) });
});
afterAll(async () => {
  await m?.close();
});

describe('rate limits', () => {
  it.each(VERSIONS)(
    'every operation under /api/%s answers 429 past its limit, with the rate-limit headers',
    async (v) => {
      for (const op of OPERATIONS) {
        const [method, template] = op.split(' ');
        // A malformed id (or an empty body) is refused before anything is read or written: the limit still counts it.
        const path = `/api/${v}${template.replace(/:[a-z_]+/g, 'not-a-uuid')}`;
        const send = () =>
          m.call(method.toLowerCase() as 'get', path).send(method === 'GET' ? undefined : {});
        for (let i = 0; i < LIMIT; i++) {
          const ok = await send();
          expect([op, ok.status === 429]).toEqual([op, false]);
          expect(ok.headers['x-ratelimit-limit']).toBe(String(LIMIT));
        }
        const res = await send();
        expect([op, res.status]).toEqual([op, 429]);
        expect(res.body).toEqual({
          code: 'too_many_requests',
          message: expect.stringContaining('X-RateLimit-Limit'),
        });
        expect(res.headers['x-ratelimit-remaining']).toBe('0');
        expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
      }
    },
  );
});

describe('OpenAPI at /docs', () => {
  let doc: {
    paths: Record<
      string,
      Record<
        string,
        {
          responses: Record<string, unknown>;
          parameters?: { name: string; in: string }[];
          security?: unknown[];
          'x-required-scopes'?: string[];
          requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
        }
      >
    >;
    components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
  };

  beforeAll(async () => {
    doc = (await m.call('get', '/docs/openapi.json', '').expect(200)).body;
  });

  it.each(VERSIONS)('documents every operation under /api/%s with its scope, parameters and answers', (v) => {
    for (const op of OPERATIONS) {
      const [method, template] = op.split(' ');
      const path = `/api/${v}${template.replace(/:([a-z_]+)/g, '{$1}')}`;
      const entry = doc.paths[path]?.[method.toLowerCase()];
      expect([op, entry !== undefined]).toEqual([op, true]);
      expect([op, entry['x-required-scopes']]).toEqual([op, [scopeOf(op)]]);
      expect(entry.security).toEqual([{ bearer: [] }]);
      for (const status of ['401', '403', '429'])
        expect([op, status, status in entry.responses]).toEqual([op, status, true]);
      const success = Object.keys(entry.responses).filter((s) => s.startsWith('2'));
      expect([op, success.length]).toEqual([op, 1]);
      if (['POST', 'PATCH', 'PUT'].includes(method) && !/rotate-secret|block|unblock/.test(template)) {
        expect([op, entry.requestBody?.content['application/json']?.schema?.$ref]).toEqual([
          op,
          expect.any(String),
        ]);
      }
      for (const param of template.match(/:[a-z_]+/g) ?? []) {
        expect(entry.parameters?.some((p) => p.in === 'path' && p.name === param.slice(1))).toBe(true);
      }
    }
  });

  it.each(VERSIONS)(
    'has no other operation under /api/%s than those (the list above is the whole surface)',
    (v) => {
      const documented = Object.entries(doc.paths)
        .filter(([path]) => path.startsWith(`/api/${v}/`))
        .flatMap(([path, item]) =>
          Object.keys(item).map(
            (method) =>
              `${method.toUpperCase()} ${path.slice(`/api/${v}`.length).replace(/\{([a-z_]+)\}/g, ':$1')}`,
          ),
        );
      expect(documented.sort()).toEqual([...OPERATIONS].sort());
    },
  );

  it('gives each presentation its own shapes: envelope names, total count parameter, record fields', () => {
    const list = (v: string) => doc.paths[`/api/${v}/clients`].get;
    expect(list('v1').parameters?.map((p) => p.name)).toContain('total_count');
    expect(list('v2').parameters?.map((p) => p.name)).toContain('totalCount');
    const envelope = (v: string) =>
      (
        list(v).responses['200'] as {
          content: Record<string, { schema: { properties: Record<string, unknown> } }>;
        }
      ).content['application/json'].schema.properties;
    expect(Object.keys(envelope('v1'))).toEqual(expect.arrayContaining(['total_count', 'has_more', 'items']));
    expect(Object.keys(envelope('v2'))).toEqual(expect.arrayContaining(['totalCount', 'hasMore', 'items']));
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.ClientV1Doc.properties!)).toEqual(
      expect.arrayContaining(['client_type', 'is_global', 'aggregations', 'resources']),
    );
    expect(Object.keys(schemas.ClientV2Doc.properties!)).toEqual(
      expect.arrayContaining(['aggregates', 'permissions']),
    );
    expect(Object.keys(schemas.ClientV2Doc.properties!)).not.toContain('client_type');
    expect(Object.keys(schemas.ResourceV2Doc.properties!)).toContain('aggregates');
    expect(Object.keys(schemas.ResourceMetadataV2Doc.properties!)).toEqual([
      'api',
      'token',
      'skip_consent_for_first_party',
    ]);
    expect(schemas.CreateClientV1Dto.required).toEqual(['client_name']);
    expect(Object.keys(schemas.CreateClientV1Dto.properties!)).toContain('is_global');
    expect(Object.keys(schemas.CreateClientV2Dto.properties!)).toContain('is_global');
    expect(Object.keys(schemas.CreateClientV2Dto.properties!)).not.toContain('client_type');
  });
});
