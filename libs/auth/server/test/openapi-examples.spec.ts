import { startAuth, type AuthHarness } from './support/auth-app.js';

/**
 * Every request example of the token server's OpenAPI document is a valid request: each one is sent, as it stands
 * (JSON, with the bootstrap client's Basic credentials, as the descriptions say a client authenticates), to the
 * running server and succeeds (2xx).
 */
let h: AuthHarness;

beforeAll(async () => {
  h = await startAuth();
});
afterAll(async () => {
  await h?.close();
});

interface Operation {
  requestBody?: { content?: Record<string, { example?: unknown }> };
}

it('each example, sent as it stands, succeeds', async () => {
  const doc = (await (await fetch(`${h.url}/docs/openapi.json`)).json()) as {
    paths: Record<string, Record<string, Operation>>;
  };
  const basic = Buffer.from(`${h.boot.clientId}:${h.boot.clientSecret}`).toString('base64');
  let sent = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const example = op.requestBody?.content?.['application/json']?.example;
      if (example === undefined) continue;
      const res = await fetch(`${h.url}${path}`, {
        method: method.toUpperCase(),
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/json' },
        body: JSON.stringify(example),
      });
      const text = await res.text();
      const ok = res.status < 300;
      expect({
        op: `${method} ${path}`,
        example,
        status: ok ? 'ok' : res.status,
        answer: ok ? '' : text,
      }).toEqual({
        op: `${method} ${path}`,
        example,
        status: 'ok',
        answer: '',
      });
      sent++;
    }
  }
  // POST /token's example at least
  expect(sent).toBeGreaterThanOrEqual(1);
});
