import { createLogger, sanitizeRequestId } from './logging.js';

describe('logging', () => {
  it('accepts only sane request ids', () => {
    expect(sanitizeRequestId('abc-123_.X')).toBe('abc-123_.X');
    expect(sanitizeRequestId(['first', 'second'])).toBe('first');
    expect(sanitizeRequestId('x'.repeat(128))).toHaveLength(128);
    for (const bad of ['', 'x'.repeat(129), 'a b', 'a\nb', 'é', undefined, 42])
      expect(sanitizeRequestId(bad)).toBeUndefined();
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
});
