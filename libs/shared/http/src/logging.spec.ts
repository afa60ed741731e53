import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import {
  completionLine,
  createLogger,
  redactUrl,
  requestLog,
  requestLogging,
  sanitizeRequestId,
} from './logging.js';

/** A real node:http server running `requestLogging` in front of a handler answering `status`. */
async function serve(level: string, lines: string[]): Promise<{ server: Server; url: string }> {
  const logger = createLogger({
    serviceName: 'svc',
    level,
    destination: { write: (s: string) => lines.push(s) },
  });
  const log = requestLogging(logger);
  const server = createServer((req, res) =>
    log(req, res, () => {
      const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 200);
      requestLog(req, logger).info({ inHandler: true }, 'handling');
      res.statusCode = status;
      res.end('{}');
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const close = (server: Server) => new Promise((resolve) => server.close(resolve));
const until = async (check: () => boolean) => {
  for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('logging', () => {
  it('accepts only sane request ids', () => {
    expect(sanitizeRequestId('abc-123_.X')).toBe('abc-123_.X');
    expect(sanitizeRequestId(['first', 'second'])).toBe('first');
    expect(sanitizeRequestId('x'.repeat(128))).toHaveLength(128);
    for (const bad of ['', 'x'.repeat(129), 'a b', 'a\nb', 'é', undefined, 42])
      expect(sanitizeRequestId(bad)).toBeUndefined();
  });

  it('the completion line never carries a token or secret from the query string', async () => {
    const lines: string[] = [];
    const { server, url } = await serve('info', lines);
    try {
      const secrets = ['eyJhbGciOi.tok.en', 'rt-secret-1', 'cs-secret-2', 'pw-secret-3', 'code-4'];
      await fetch(
        `${url}/tokeninfo?token=${secrets[0]}&refresh_token=${secrets[1]}&client_secret=${secrets[2]}` +
          `&password=${secrets[3]}&code=${secrets[4]}&fields=scope`,
      );
      await until(() => lines.some((l) => l.includes('request completed')));
      const all = lines.join('\n');
      for (const secret of secrets) expect(all).not.toContain(secret);
      const done = JSON.parse(lines.find((l) => l.includes('request completed'))!);
      expect(done.req.url).toContain('/tokeninfo?token=%5Bredacted%5D');
      expect(done.req.url).toContain('fields=scope');
    } finally {
      await close(server);
    }
  });

  it('writes JSON with the service name and redacts secrets', () => {
    const lines: string[] = [];
    const logger = createLogger({ serviceName: 'svc', destination: { write: (s: string) => lines.push(s) } });
    logger.info(
      {
        req: { headers: { authorization: 'Bearer tkn', cookie: 'sid=1', accept: 'json' } },
        body: { client_secret: 'cs', password: 'pw', name: 'ok' },
        password: 'top',
      },
      'hello',
    );
    const line = JSON.parse(lines[0]);
    expect(line).toMatchObject({ level: 'info', service: 'svc', msg: 'hello' });
    expect(line.req.headers).toEqual({ authorization: '[redacted]', cookie: '[redacted]', accept: 'json' });
    expect(line.body).toEqual({ client_secret: '[redacted]', password: '[redacted]', name: 'ok' });
    expect(line.password).toBe('[redacted]');
  });

  it('writes one compact completion line per request at info, with the request id', async () => {
    const lines: string[] = [];
    const { server, url } = await serve('info', lines);
    try {
      const res = await fetch(`${url}/things?status=201`, {
        headers: { 'X-Request-Id': 'rid-1', Authorization: 'Bearer secret-tkn', 'User-Agent': 'ua' },
      });
      expect(res.headers.get('x-request-id')).toBe('rid-1');
      await until(() => lines.some((l) => l.includes('request completed')));
      const parsed = lines.map((l) => JSON.parse(l));
      expect(parsed.find((l) => l.inHandler)).toMatchObject({ reqId: 'rid-1', msg: 'handling' });
      const done = parsed.find((l) => l.msg === 'request completed');
      expect(done).toMatchObject({
        level: 'info',
        service: 'svc',
        req: { id: 'rid-1', method: 'GET', url: '/things?status=201' },
        res: { statusCode: 201 },
      });
      expect(typeof done.responseTime).toBe('number');
      expect(Object.keys(done.req).sort()).toEqual(['id', 'method', 'url']);
      expect(lines.join('')).not.toContain('secret-tkn');
    } finally {
      await close(server);
    }
  });

  it('writes nothing for a success when info is off, a warn line for a 4xx and an error line for a 5xx', async () => {
    const lines: string[] = [];
    const { server, url } = await serve('warn', lines);
    try {
      const ok = await fetch(`${url}/ok`);
      expect(ok.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      await fetch(`${url}/missing?status=404`);
      await fetch(`${url}/boom?status=503`);
      // the last request's line: each line is written when its response finishes, so none can follow it
      await until(() => lines.some((l) => l.includes('"statusCode":503')));
      const parsed = lines.map((l) => JSON.parse(l));
      expect(parsed.map((l) => [l.level, l.res?.statusCode])).toEqual([
        ['warn', 404],
        ['error', 503],
      ]);
    } finally {
      await close(server);
    }
  });

  it('logs successful probes and scrapes at debug only', async () => {
    const lines: string[] = [];
    const { server, url } = await serve('info', lines);
    try {
      await fetch(`${url}/livez`);
      await fetch(`${url}/ok`);
      await until(() => lines.some((l) => l.includes('"url":"/ok"')));
      expect(lines.some((l) => l.includes('/livez') && l.includes('request completed'))).toBe(false);
    } finally {
      await close(server);
    }
  });

  it('writes the completion line byte for byte as pino wrote it with the same options', () => {
    const lines: string[] = [];
    const reference = pino(
      {
        level: 'debug',
        base: { service: 'svc "x"' },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label: string) => ({ level: label }) },
      },
      { write: (s: string) => lines.push(s) },
    );
    const cases: [string, string | undefined, string | undefined, number, number][] = [
      ['info', 'GET', '/authorize?client_id=a&redirect_uri=https%3A%2F%2Fx&state=%22', 303, 1.234],
      ['warn', 'POST', '/token', 400, 0],
      ['error', undefined, undefined, 500, 12.5],
      ['debug', 'GET', '/livez', 200, 0.001],
      ['info', 'GET', '/p\u00e9\u007f"\\\ttab?x=\u2028', 200, 3],
    ];
    for (const [level, method, url, status, responseTime] of cases) {
      reference[level as 'info'](
        { req: { id: 'r-1.A_', method, url }, res: { statusCode: status }, responseTime },
        'request completed',
      );
      const ours = completionLine(
        level,
        JSON.stringify('svc "x"'),
        'r-1.A_',
        method,
        url,
        status,
        responseTime,
      );
      const withoutTime = (line: string) => line.replace(/"time":"[^"]+"/, '"time":""');
      expect(withoutTime(ours)).toBe(withoutTime(lines.at(-1)!));
      expect(JSON.parse(ours).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('redacts a credential of the query however its name is written, and leaves other URLs as they are', () => {
    const R = '%5Bredacted%5D';
    expect(redactUrl('/authorize?client_id=a&redirect_uri=https%3A%2F%2Fx&state=s')).toBe(
      '/authorize?client_id=a&redirect_uri=https%3A%2F%2Fx&state=s',
    );
    expect(redactUrl('/cb?state=code&x=token')).toBe('/cb?state=code&x=token');
    expect(redactUrl('/cb?code=abc&state=s')).toBe(`/cb?code=${R}&state=s`);
    expect(redactUrl('/cb?a=1&CODE=abc')).toBe(`/cb?a=1&CODE=${R}`);
    expect(redactUrl('/cb?c%6Fde=abc')).toBe(`/cb?code=${R}`);
    expect(redactUrl('/cb??code=abc')).toBe(`/cb?code=${R}`);
    expect(redactUrl('/cb?id+token=1&password')).toBe(`/cb?id+token=1&password=${R}`);
    expect(redactUrl('/cb?&&x&token=1')).toBe(`/cb?x=&token=${R}`);
    expect(redactUrl('/cb?')).toBe('/cb?');
    expect(redactUrl('/plain')).toBe('/plain');
    expect(redactUrl(undefined)).toBeUndefined();
  });
});
