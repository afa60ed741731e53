import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { ErrorCode } from '@gatehouse/errors';
import { DomainError } from '@gatehouse/errors';
import { bodyParsers, isUnderPrefix, mapBodyParserError } from './body-parser.js';

describe('body parser helpers', () => {
  it('matches path prefixes on segment boundaries', () => {
    expect(isUnderPrefix('/token', '/token')).toBe(true);
    expect(isUnderPrefix('/token/introspection', '/token')).toBe(true);
    expect(isUnderPrefix('/tokeninfo', '/token')).toBe(false);
    expect(isUnderPrefix('/session/end', '/session/')).toBe(true);
    expect(isUnderPrefix('/anything', '/')).toBe(true);
  });

  it('maps body-parser error types', () => {
    const parse = mapBodyParserError({ type: 'entity.parse.failed' }, '1mb') as DomainError;
    expect([parse.code, parse.message]).toEqual([ErrorCode.InvalidRequest, 'Malformed JSON body']);
    const big = mapBodyParserError({ type: 'entity.too.large' }, '1mb') as DomainError;
    expect(big.code).toBe(ErrorCode.PayloadTooLarge);
    const other = new Error('other');
    expect(mapBodyParserError(other, '1mb')).toBe(other);
  });
});

describe('bodyParsers', () => {
  // A real Express app: the parser in front of a route that reports what it received.
  const app = express();
  app.use(
    bodyParsers({
      limit: '1kb',
      excludePaths: ['/raw'],
      urlencoded: false,
      streamed: (req) => req.method === 'POST' && String(req.headers['content-type']).startsWith('text/csv'),
    }),
  );
  app.post(['/upload', '/raw'], (req, res) => {
    const parsed = req.body !== undefined;
    if (parsed) return void res.json({ parsed, body: req.body, streamedBytes: 0 }); // the stream is spent
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.json({ parsed, body: req.body ?? null, streamedBytes: bytes }));
  });
  app.use(
    (
      err: { status?: number; statusCode?: number; message: string },
      _req: Request,
      res: Response,
      _next: NextFunction,
    ) => res.status(err.status ?? err.statusCode ?? 500).json({ message: err.message }),
  );

  it('parses JSON and leaves a streamed upload unread, whatever its size', async () => {
    const json = await request(app).post('/upload').send({ a: 1 }).expect(200);
    expect(json.body).toEqual({ parsed: true, body: { a: 1 }, streamedBytes: 0 });
    const csv = 'code,parent_code\n' + 'x,y\n'.repeat(1000); // over the 1kb limit of parsed bodies
    const up = await request(app).post('/upload').set('Content-Type', 'text/csv').send(csv).expect(200);
    expect(up.body).toEqual({ parsed: false, body: null, streamedBytes: csv.length });
  });

  it('still refuses what is neither JSON nor streamed (415), and excluded paths stay unread', async () => {
    const res = await request(app)
      .post('/upload')
      .set('Content-Type', 'text/plain')
      .send('hello')
      .expect(415);
    expect(res.body.message).toContain('Unsupported Content-Type "text/plain"');
    const raw = await request(app).post('/raw').set('Content-Type', 'text/plain').send('hello').expect(200);
    expect(raw.body).toEqual({ parsed: false, body: null, streamedBytes: 5 });
  });
});
