import type { NestExpressApplication } from '@nestjs/platform-express';
import pg from 'pg';
import request from 'supertest';
import { LogSink, PG_URL, UNIQUE_TABLE, makeApp } from './support.js';

const UUID = '3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10';

describe('errors over HTTP', () => {
  let app: NestExpressApplication;
  let pool: pg.Pool;
  const sink = new LogSink();

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    await pool.query(`create table ${UNIQUE_TABLE} (id serial primary key, name text not null unique)`);
    await pool.query(
      `create table ${UNIQUE_TABLE}_child (id serial primary key, parent_id int not null references ${UNIQUE_TABLE}(id))`,
    );
    app = await makeApp({ pool, sink });
  });

  afterAll(async () => {
    await app?.close();
    await pool.query(`drop table if exists ${UNIQUE_TABLE}_child, ${UNIQUE_TABLE}`);
    await pool.end();
  });

  const http = () => request(app.getHttpServer());

  describe('400 invalid_request', () => {
    it('names the field of a wrong type and lists details', async () => {
      const res = await http().post('/things').send({ name: 42 }).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.message).toContain('name must be a string');
      expect(res.body.details).toContainEqual({ field: 'name', message: 'name must be a string' });
    });

    it('rejects an unknown field, naming it', async () => {
      const res = await http().post('/things').send({ name: 'a', foo: 1 }).expect(400);
      expect(res.body).toEqual({
        code: 'invalid_request',
        message: 'unknown field: foo',
        details: [{ field: 'foo', message: 'unknown field: foo' }],
      });
    });

    it('names nested fields by their path', async () => {
      const res = await http()
        .post('/things')
        .send({ name: 'a', tag: { resource_id: 'nope', extra: true } })
        .expect(400);
      expect(res.body.message).toBe('unknown field: tag.extra; tag.resource_id must be a UUID');
    });

    it('reports a missing required field', async () => {
      const res = await http().post('/things').send({}).expect(400);
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain('name');
    });

    it('answers malformed JSON with "Malformed JSON body"', async () => {
      const res = await http()
        .post('/things')
        .set('Content-Type', 'application/json')
        .send('{"name": "a",')
        .expect(400);
      expect(res.body).toEqual({ code: 'invalid_request', message: 'Malformed JSON body' });
    });

    it('rejects a JSON array where an object is expected', async () => {
      const res = await http()
        .post('/things')
        .send([{ name: 'a' }])
        .expect(400);
      expect(res.body.message).toBe('Request body must be a JSON object');
    });

    it('transforms a valid body into the DTO', async () => {
      const res = await http().post('/things').send({ name: 'a', count: 3 }).expect(201);
      expect(res.body).toMatchObject({ name: 'a', count: 3, isDto: true });
    });

    it('rejects a badly percent-encoded path parameter', async () => {
      const res = await http().get('/things/%FF').expect(400);
      expect(res.body.code).toBe('invalid_request');
    });

    it('rejects a malformed uuid in the path', async () => {
      const res = await http().get('/things/not-a-uuid').expect(400);
      expect(res.body.code).toBe('invalid_request');
    });
  });

  it('answers a body with a non-JSON Content-Type with 415 invalid_request', async () => {
    const res = await http().post('/things').set('Content-Type', 'text/plain').send('name=a').expect(415);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.message).toContain('application/json');
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) });
    const res = await http().post('/things').set('Content-Type', 'application/json').send(big).expect(413);
    expect(res.body.code).toBe('payload_too_large');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });

  describe('routing', () => {
    it('answers an unknown route with 404 not_found', async () => {
      const res = await http().get('/no/such/route').expect(404);
      expect(res.body).toEqual({ code: 'not_found', message: 'No route for GET /no/such/route' });
    });

    it('answers a domain not-found with 404 and its message', async () => {
      const res = await http().get('/things/00000000-0000-0000-0000-000000000000').expect(404);
      expect(res.body).toEqual({ code: 'not_found', message: 'Thing not found' });
    });

    it('answers a known path with a wrong method with 405 and Allow', async () => {
      const res = await http().patch(`/things/${UUID}`).send({ name: 'x' }).expect(405);
      expect(res.body.code).toBe('method_not_allowed');
      expect(res.headers['allow']).toBe('GET, HEAD, DELETE, OPTIONS');
    });

    it('405 on a collection path lists only its methods', async () => {
      const res = await http().get('/things').expect(405);
      expect(res.headers['allow']).toBe('POST, OPTIONS');
    });

    it('answers OPTIONS on a known path with 204 and Allow', async () => {
      const res = await http().options(`/things/${UUID}/name`).expect(204);
      expect(res.headers['allow']).toBe('PUT, OPTIONS');
    });

    it('serves HEAD where GET is', async () => {
      await http().head(`/things/${UUID}`).expect(200);
    });
  });

  describe('500 internal_error', () => {
    it('answers with an error id, no stack or SQL, and logs the id with the stack', async () => {
      const res = await http().get('/fail/boom').expect(500);
      expect(res.body.code).toBe('internal_error');
      const id = /error id: ([0-9a-f-]{36})/.exec(res.body.message)?.[1];
      expect(id).toBeDefined();
      expect(res.text).not.toMatch(/SELECT|password|secret|at |\.ts/);
      const line = sink.lines.find((l) => l['errorId'] === id);
      expect(line).toBeDefined();
      expect((line!['err'] as { stack: string }).stack).toContain('SELECT password FROM users');
      expect(line!['reqId']).toBe(res.headers['x-request-id']);
    });
  });

  describe('PostgreSQL errors', () => {
    // The answers to PostgreSQL's own errors (23505, 23503, 22P02) are the data layer's: libs/shared/db/test/http-errors.spec.ts.
    it('maps a refused database connection to 503 service_unavailable', async () => {
      const res = await http().get('/fail/db-down').expect(503);
      expect(res.body.code).toBe('service_unavailable');
      expect(res.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    });
  });
});
