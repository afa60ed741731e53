import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import request from 'supertest';
import { makeApp } from './support.js';

/** A raw handler standing in for oidc-provider: reads its own body, serves POST /token only. */
function rawTokenHandler(req: Request, res: Response, next: NextFunction) {
  if (req.path !== '/token' || req.method !== 'POST') return next();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    res.json({ raw: Buffer.concat(chunks).toString('utf8'), parsedBefore: req.body !== undefined });
  });
}

describe('mounted raw handlers', () => {
  let app: NestExpressApplication;
  beforeAll(async () => {
    app = await makeApp({
      rateLimit: { points: 100, durationSec: 60, overrides: { 'POST /token': 2 } },
      excludeBodyParserPaths: ['/token'],
      oauthErrorPaths: ['/token'],
      routes: ['POST /token'],
      urlencoded: true,
      mount: (a) => {
        a.use(rawTokenHandler);
      },
    });
  });
  afterAll(() => app.close());

  it('run after rate limiting and without a body parser in front of them', async () => {
    const res = await request(app.getHttpServer())
      .post('/token')
      .type('form')
      .send('grant_type=client_credentials&scope=a')
      .expect(200);
    expect(res.body).toEqual({ raw: 'grant_type=client_credentials&scope=a', parsedBefore: false });
    expect(res.headers['x-ratelimit-limit']).toBe('2');
  });

  it('get their own rate-limit key and answer 429 in the OAuth and the common form', async () => {
    const s = app.getHttpServer();
    await request(s).post('/token').send('x=1').type('form');
    const res = await request(s).post('/token').type('form').send('x=1').expect(429);
    expect(res.body).toMatchObject({ code: 'too_many_requests', error: 'too_many_requests' });
    expect(res.body.error_description).toBe(res.body.message);
    // other endpoints keep their own budget
    await request(s).post('/things').send({ name: 'a' }).expect(201);
  });

  it('take part in 405 answers for declared routes', async () => {
    const res = await request(app.getHttpServer()).get('/token').expect(405);
    expect(res.headers['allow']).toBe('POST, OPTIONS');
    expect(res.body.error).toBe('method_not_allowed');
  });

  it('leave form bodies parsed for Nest routes when urlencoded is on', async () => {
    const res = await request(app.getHttpServer())
      .post('/things')
      .type('form')
      .send('name=formed')
      .expect(201);
    expect(res.body.name).toBe('formed');
  });
});
