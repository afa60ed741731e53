import { Body, Controller, Get, Inject, Module, Post, type DynamicModule } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import pg from 'pg';
import request from 'supertest';
import { createHttpApp, createLogger } from '@gatehouse/http';
// Loading the data layer registers its PostgreSQL translator with the HTTP foundation, as in every service.
import '../src/index.js';

const PG_URL = process.env['TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const UNIQUE_TABLE = `db_http_spec_${process.pid}_${Date.now().toString(36)}`;
const PG_POOL = Symbol('PG_POOL');

@Controller('fail')
class FailController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  /** A real 23505 from PostgreSQL: the table has a unique name column. */
  @Post('unique')
  async unique(@Body() body: { name: string }) {
    await this.pool.query(`insert into ${UNIQUE_TABLE} (name) values ($1)`, [body.name]);
    return { name: body.name };
  }

  /** A real 22P02 from PostgreSQL. */
  @Get('bad-uuid')
  async badUuid() {
    await this.pool.query('select $1::uuid', ['not-a-uuid']);
  }

  /** A real 23503 from PostgreSQL. */
  @Post('fk')
  async fk() {
    await this.pool.query(`insert into ${UNIQUE_TABLE}_child (parent_id) values (-1)`);
  }
}

@Module({})
class TestModule {
  static with(pool: pg.Pool): DynamicModule {
    return {
      module: TestModule,
      controllers: [FailController],
      providers: [{ provide: PG_POOL, useValue: pool }],
    };
  }
}

describe('PostgreSQL errors over HTTP', () => {
  let app: NestExpressApplication;
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    await pool.query(`create table ${UNIQUE_TABLE} (id serial primary key, name text not null unique)`);
    await pool.query(
      `create table ${UNIQUE_TABLE}_child (id serial primary key, parent_id int not null references ${UNIQUE_TABLE}(id))`,
    );
    app = await createHttpApp(TestModule.with(pool), {
      serviceName: 'db-http-spec',
      version: '0.0.0-test',
      logger: createLogger({ serviceName: 'db-http-spec', level: 'silent' }),
      rateLimit: { points: 1000, durationSec: 60 },
      openapi: { title: 'Spec API', description: 'Test service', version: '1.0.0' },
      readiness: async () => undefined,
      shutdownHooks: false,
    });
  });

  afterAll(async () => {
    await app?.close();
    await pool.query(`drop table if exists ${UNIQUE_TABLE}_child, ${UNIQUE_TABLE}`);
    await pool.end();
  });

  const http = () => request(app.getHttpServer());

  it('maps a real unique violation (23505) to 409 conflict naming the column, not the value', async () => {
    const name = `dup-${Date.now()}`;
    await http().post('/fail/unique').send({ name }).expect(201);
    const res = await http().post('/fail/unique').send({ name }).expect(409);
    expect(res.body).toEqual({ code: 'conflict', message: 'A record with the same name already exists' });
    expect(res.text).not.toContain(name);
  });

  it('maps a real foreign key violation (23503) to 409 conflict', async () => {
    const res = await http().post('/fail/fk').send().expect(409);
    expect(res.body.code).toBe('conflict');
    expect(res.text).not.toMatch(/insert|_child/i);
  });

  it('maps invalid text representation (22P02) to 400', async () => {
    const res = await http().get('/fail/bad-uuid').expect(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.text).not.toContain('not-a-uuid');
  });
});
