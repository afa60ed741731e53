import { randomUUID } from 'node:crypto';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Module,
  Param,
  ParseUUIDPipe,
  Post,
  Put,
  type DynamicModule,
} from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ApiCreatedResponse, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import pg from 'pg';
import { notFound } from '@gatehouse/errors';
import { ApiErrorResponses, createHttpApp, createLogger, type HttpAppOptions } from '../src/index.js';

export const PG_URL = process.env['TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL =
  process.env['TEST_REDIS_URL'] ?? process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

class TagDto {
  @ApiProperty()
  @IsUUID()
  resource_id: string;
}

export class CreateThingDto {
  @ApiProperty({ maxLength: 50 })
  @IsString()
  @MaxLength(50)
  name: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 10 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10)
  count?: number;

  @ApiPropertyOptional({ type: TagDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => TagDto)
  tag?: TagDto;
}

export const PG_POOL = Symbol('PG_POOL');

@Controller('things')
export class ThingsController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool | undefined) {}

  @Post()
  @ApiCreatedResponse({ description: 'The thing' })
  @ApiErrorResponses(400, 409)
  create(@Body() body: CreateThingDto) {
    return { id: randomUUID(), ...body, isDto: body instanceof CreateThingDto };
  }

  @Get(':thing_id')
  @ApiErrorResponses(400, 404)
  get(@Param('thing_id', ParseUUIDPipe) id: string) {
    if (id === '00000000-0000-0000-0000-000000000000') throw notFound('Thing not found');
    return { id };
  }

  @Delete(':thing_id')
  @HttpCode(204)
  remove(@Param('thing_id', ParseUUIDPipe) id: string): void {
    void id; // nothing is stored: the route exists for 204, 405 and Allow
  }

  @Put(':thing_id/name')
  rename(@Param('thing_id', ParseUUIDPipe) id: string, @Body() body: CreateThingDto) {
    return { id, name: body.name };
  }
}

@Controller('fail')
export class FailController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool | undefined) {}

  @Get('boom')
  boom() {
    throw new Error('SELECT password FROM users WHERE id = 1 -- secret detail');
  }

  /** A real 23505 from PostgreSQL: the table has a unique name column. */
  @Post('unique')
  async unique(@Body() body: CreateThingDto) {
    await this.pool!.query(`insert into ${UNIQUE_TABLE} (name) values ($1)`, [body.name]);
    return { name: body.name };
  }

  /** A real 22P02 from PostgreSQL. */
  @Get('bad-uuid')
  async badUuid() {
    await this.pool!.query('select $1::uuid', ['not-a-uuid']);
  }

  /** A real 23503 from PostgreSQL. */
  @Post('fk')
  async fk() {
    await this.pool!.query(`insert into ${UNIQUE_TABLE}_child (parent_id) values (-1)`);
  }

  /** A real connection error: nothing listens on port 1. */
  @Get('db-down')
  async dbDown() {
    const down = new pg.Pool({
      connectionString: 'postgres://postgres@127.0.0.1:1/postgres',
      connectionTimeoutMillis: 1000,
    });
    try {
      await down.query('select 1');
    } finally {
      await down.end();
    }
  }
}

export const UNIQUE_TABLE = `http_spec_${process.pid}_${Date.now().toString(36)}`;

@Module({})
export class TestModule {
  static with(pool?: pg.Pool): DynamicModule {
    return {
      module: TestModule,
      controllers: [ThingsController, FailController],
      providers: [{ provide: PG_POOL, useValue: pool }],
    };
  }
}

/** Collects the JSON log lines an app writes. */
export class LogSink {
  readonly lines: Record<string, unknown>[] = [];
  write(chunk: string) {
    for (const line of chunk.split('\n'))
      if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
  }
}

export interface TestAppOptions extends Partial<HttpAppOptions> {
  pool?: pg.Pool;
  sink?: LogSink;
}

export async function makeApp(opts: TestAppOptions = {}): Promise<NestExpressApplication> {
  const { pool, sink, ...rest } = opts;
  return createHttpApp(TestModule.with(pool), {
    serviceName: 'http-spec',
    version: '0.0.0-test',
    logger: createLogger({ serviceName: 'http-spec', level: sink ? 'info' : 'silent', destination: sink }),
    rateLimit: { points: 1000, durationSec: 60 },
    openapi: { title: 'Spec API', description: 'Test service', version: '1.0.0' },
    readiness: async () => undefined,
    shutdownHooks: false,
    ...rest,
  });
}
